"""Paragraph styles: which are headings (by name, by what they are based on, by outline
level), which carry list numbering, and how deep ``List Bullet n`` styles nest."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field

from shirabe.loaders.docx.elements import Element, to_int, val, w

_HEADING_NAME = re.compile(r"^(?:heading|見出し)(\d)$")
_TITLE_NAMES = frozenset({"title", "表題", "タイトル"})
_LIST_STYLE_DEPTH = re.compile(r"^list(?:bullet|number|continue)(\d)$")


def normalize_style_name(name: str) -> str:
    """Lower-case NFKC form without spaces: ``見出し１`` and ``Heading 1`` compare as names."""
    return unicodedata.normalize("NFKC", name).lower().replace(" ", "")


def heading_level_of_name(name: str) -> int | None:
    """0 for a title style, n for ``Heading n`` / ``見出し n``, else ``None``."""
    key = normalize_style_name(name)
    if key in _TITLE_NAMES:
        return 0
    match = _HEADING_NAME.match(key)
    if match and int(match[1]) >= 1:
        return int(match[1])
    return None


@dataclass(frozen=True, slots=True)
class StyleInfo:
    """What the loader needs from one paragraph style."""

    name: str
    based_on: str | None
    outline_level: int | None
    num_id: str | None
    ilvl: int | None


@dataclass(frozen=True, slots=True)
class Styles:
    """Paragraph styles by id, with lookups that follow the ``basedOn`` chain."""

    by_id: dict[str, StyleInfo] = field(default_factory=dict)
    default: str | None = None

    def chain(self, style_id: str | None) -> Iterator[StyleInfo]:
        seen: set[str] = set()
        current = style_id if style_id is not None else self.default
        while current is not None and current not in seen and current in self.by_id:
            seen.add(current)
            info = self.by_id[current]
            yield info
            current = info.based_on

    def heading_level(self, style_id: str | None) -> int | None:
        """Title → 0, heading n → n, from the style's name or that of a style it is based on,
        else from the first outline level found in the chain (outline level 0 = heading 1)."""
        infos = list(self.chain(style_id))
        for info in infos:
            level = heading_level_of_name(info.name)
            if level is not None:
                return level
        for info in infos:
            if info.outline_level is not None:
                return outline_heading(info.outline_level)
        return None

    def numbering(self, style_id: str | None) -> tuple[str | None, int | None]:
        """``(numId, ilvl)`` from the style chain."""
        for info in self.chain(style_id):
            if info.num_id is not None:
                return info.num_id, info.ilvl
        return None, None

    def depth(self, style_id: str | None) -> int | None:
        """``n - 1`` for a ``List Bullet n`` / ``List Number n`` style, else ``None``."""
        for info in self.chain(style_id):
            match = _LIST_STYLE_DEPTH.match(normalize_style_name(info.name))
            if match:
                return max(int(match[1]) - 1, 0)
        return None


def outline_heading(outline_level: int) -> int | None:
    """Word's outline levels 0-8 are headings 1-9; 9 means body text."""
    return outline_level + 1 if 0 <= outline_level <= 8 else None


def parse_styles(root: Element | None) -> Styles:
    """The paragraph styles of a ``styles.xml`` root element."""
    if root is None:
        return Styles()
    by_id: dict[str, StyleInfo] = {}
    default: str | None = None
    for style in root.iterchildren(w("style")):
        if val(style, "type") not in (None, "paragraph"):
            continue
        style_id = val(style, "styleId")
        if style_id is None:
            continue
        if val(style, "default") in ("1", "true", "on"):
            default = style_id
        ppr = style.find(w("pPr"))
        num_pr = ppr.find(w("numPr")) if ppr is not None else None
        by_id[style_id] = StyleInfo(
            name=val(style.find(w("name"))) or style_id,
            based_on=val(style.find(w("basedOn"))),
            outline_level=to_int(val(ppr.find(w("outlineLvl")))) if ppr is not None else None,
            num_id=val(num_pr.find(w("numId"))) if num_pr is not None else None,
            ilvl=to_int(val(num_pr.find(w("ilvl")))) if num_pr is not None else None,
        )
    return Styles(by_id, default)
