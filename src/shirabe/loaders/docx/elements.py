"""Reading WordprocessingML elements: namespaces, local names and attribute values."""

from __future__ import annotations

from typing import Any

Element = Any
"""An lxml element of the package XML (lxml ships no type information)."""

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
MC = "http://schemas.openxmlformats.org/markup-compatibility/2006"


def tag(element: Element) -> str:
    """The local name of ``element`` (``p``, ``tbl``), or ``""`` for comments and PIs."""
    name = element.tag
    if not isinstance(name, str):
        return ""
    return name.rsplit("}", 1)[-1]


def w(name: str) -> str:
    """The qualified name of a WordprocessingML element or attribute: ``w("p")``."""
    return f"{{{W}}}{name}"


def val(element: Element | None, name: str = "val") -> str | None:
    """The ``w:val`` (or ``w:<name>``) attribute of ``element``; ``None`` when either is absent."""
    if element is None:
        return None
    value = element.get(w(name))
    return str(value) if value is not None else None


def to_int(value: str | None) -> int | None:
    """``value`` as an integer, or ``None`` when it is absent or not a number."""
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        return None
