"""ID-like codes (``ERR-101``, ``INC-2024-0004``) found in text.

Codes are what users search for verbatim and what section summaries list, so they are
extracted after normalisation: full-width ``ＥＲＲ－１０７`` is the same code as ``ERR-107``.
"""

from __future__ import annotations

import re

from shirabe.text.normalize import normalize

# Uppercase prefix, then hyphen-separated alphanumeric groups, not glued to other alphanumerics.
_CODE = re.compile(r"(?<![0-9A-Za-z])[A-Z]+(?:-[0-9A-Za-z]+)+(?![0-9A-Za-z])")


def find_identifiers(text: str) -> list[str]:
    """Distinct codes in order of first appearance; a code needs a digit after its prefix."""
    found: dict[str, None] = {}
    for match in _CODE.finditer(normalize(text)):
        code = match.group()
        _, _, groups = code.partition("-")
        if any(char.isdigit() for char in groups):
            found.setdefault(code, None)
    return list(found)
