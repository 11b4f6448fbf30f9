"""The body walk: paragraphs, lists, tables and text boxes in document order, and their
Markdown (see :mod:`shirabe.loaders.docx.loader` for the rules)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass

from shirabe.loaders.docx.elements import MC, Element, tag, to_int, val, w
from shirabe.loaders.docx.numbering import Numbering
from shirabe.loaders.docx.styles import Styles, outline_heading
from shirabe.text.markdown import escape_line, markdown_table

MAX_HEADING_LEVEL = 6

_DECIMAL_MARKER = re.compile(r"^(\d+)[.．)）]$")
_SPACE = re.compile(r"[ \t\u3000]+")

_SKIPPED = frozenset(
    {
        "del",  # tracked deletion
        "moveFrom",  # text moved away (tracked)
        "delText",
        "delInstrText",
        "instrText",  # field code, not its result
        "rPr",
        "pPr",
        "tcPr",
        "trPr",
        "tblPr",
        "sectPr",
        "footnoteReference",
        "endnoteReference",
        "commentReference",
    }
)
_CONTAINERS = frozenset(
    {"sdt", "sdtContent", "customXml", "smartTag", "ins", "moveTo", "hyperlink", "fldSimple"}
)


@dataclass(frozen=True, slots=True)
class Block:
    """One rendered unit of the body before headings get their final levels."""

    kind: str  # "heading", "paragraph", "item", "table"
    text: str
    level: int = 0


@dataclass(slots=True)
class Walker:
    """Turns body elements into blocks with the document's styles and numbering."""

    styles: Styles
    numbering: Numbering

    def blocks(self, container: Element) -> list[Block]:
        """The blocks of a body, table cell, text box or content control, in order."""
        out: list[Block] = []
        for child in container.iterchildren():
            name = tag(child)
            if name == "p":
                out.extend(self.paragraph(child))
            elif name == "tbl":
                table = markdown_table(self.table_rows(child))
                if table:
                    out.append(Block("table", table))
            elif name in _CONTAINERS:
                out.extend(self.blocks(child))
            elif name == "AlternateContent":
                choice = child.find(f"{{{MC}}}Choice")
                if choice is not None:
                    out.extend(self.blocks(choice))
        return out

    def paragraph(self, p: Element) -> list[Block]:
        """The block of one paragraph, followed by the blocks of any text boxes in it."""
        boxes: list[Element] = []
        text = _clean_lines(paragraph_text(p, boxes))
        ppr = p.find(w("pPr"))
        style_id = val(ppr.find(w("pStyle"))) if ppr is not None else None
        out: list[Block] = []
        if text:
            level = self.styles.heading_level(style_id)
            outline = to_int(val(ppr.find(w("outlineLvl")))) if ppr is not None else None
            if outline is not None:
                level = outline_heading(outline) if level is None or level > 0 else level
            marker = self._marker(ppr, style_id)
            if level is not None:
                heading = " ".join(text.split("\n"))
                out.append(Block("heading", f"{marker} {heading}" if marker else heading, level))
            elif marker is None:
                out.append(Block("paragraph", text))
            else:
                out.append(Block("item", _item_text(marker, text), self._ilvl(ppr, style_id)))
        elif ppr is not None:
            self._marker(ppr, style_id)  # an empty list item still advances its counter
        for box in boxes:
            out.extend(self.blocks(box))
        return out

    def _num_pr(self, ppr: Element | None, style_id: str | None) -> tuple[str | None, int]:
        """``(numId, ilvl)`` of a paragraph: its own ``numPr`` first, then its style's."""
        num_pr = ppr.find(w("numPr")) if ppr is not None else None
        if num_pr is not None:
            num_id = val(num_pr.find(w("numId")))
            if num_id is not None:
                ilvl = to_int(val(num_pr.find(w("ilvl"))))
                if ilvl is None:
                    ilvl = self.styles.numbering(style_id)[1]
                return num_id, ilvl or 0
        num_id, ilvl = self.styles.numbering(style_id)
        return num_id, ilvl or 0

    def _marker(self, ppr: Element | None, style_id: str | None) -> str | None:
        num_id, ilvl = self._num_pr(ppr, style_id)
        if num_id is None or num_id == "0":
            return None
        return self.numbering.marker(num_id, ilvl)

    def _ilvl(self, ppr: Element | None, style_id: str | None) -> int:
        """The nesting depth: the list level, or the n of a ``List Bullet n`` style (Word
        nests those by indentation while they stay at level 0 of their own list)."""
        ilvl = self._num_pr(ppr, style_id)[1]
        return ilvl or self.styles.depth(style_id) or 0

    def table_rows(self, tbl: Element) -> list[list[str]]:
        """The cell texts of a table laid out on its grid (see the module docstring)."""
        grid: list[list[str]] = []
        merged: dict[int, str] = {}  # column → text of the open vertical merge
        for tr in _rows(tbl):
            trpr = tr.find(w("trPr"))
            before = to_int(val(trpr.find(w("gridBefore")))) if trpr is not None else None
            row: list[str] = [""] * (before or 0)
            for tc in _cells(tr):
                tcpr = tc.find(w("tcPr"))
                span = to_int(val(tcpr.find(w("gridSpan")))) if tcpr is not None else None
                vmerge = tcpr.find(w("vMerge")) if tcpr is not None else None
                column = len(row)
                if vmerge is not None and val(vmerge) in (None, "continue"):
                    text = merged.get(column, "")
                else:
                    text = self.cell_text(tc)
                    if vmerge is not None:
                        merged[column] = text
                    else:
                        merged.pop(column, None)
                row.append(text)
                row.extend([""] * (max(span or 1, 1) - 1))
            grid.append(row)
        return grid

    def cell_text(self, tc: Element) -> str:
        """A cell's blocks on one line; a nested table becomes ``a / b ; c / d``."""
        pieces: list[str] = []
        for child in tc.iterchildren():
            if tag(child) == "tbl":
                rows = self.table_rows(child)
                flat = " ; ".join(" / ".join(c for c in row if c) for row in rows if any(row))
                if flat:
                    pieces.append(flat)
            elif tag(child) in ("p", "sdt", "customXml"):
                pieces.extend(b.text for b in self.blocks_of(child))
        return " ".join(" ".join(pieces).split())

    def blocks_of(self, element: Element) -> list[Block]:
        if tag(element) == "p":
            return self.paragraph(element)
        return self.blocks(element)


def _rows(tbl: Element) -> Iterator[Element]:
    for child in tbl.iterchildren():
        name = tag(child)
        if name == "tr":
            yield child
        elif name in ("sdt", "sdtContent", "customXml"):
            yield from _rows(child)


def _cells(tr: Element) -> Iterator[Element]:
    for child in tr.iterchildren():
        name = tag(child)
        if name == "tc":
            yield child
        elif name in ("sdt", "sdtContent", "customXml"):
            yield from _cells(child)


def paragraph_text(p: Element, boxes: list[Element]) -> str:
    """The visible text of a paragraph; text boxes found inside are appended to ``boxes``.

    Line breaks become ``\\n``, tabs a space; tracked deletions and field codes are skipped.
    """
    out: list[str] = []
    _collect(p, out, boxes)
    return "".join(out)


def _collect(element: Element, out: list[str], boxes: list[Element]) -> None:
    for child in element.iterchildren():
        name = tag(child)
        if not name or name in _SKIPPED:
            continue
        if name == "t":
            out.append(child.text or "")
        elif name in ("tab", "ptab"):
            out.append(" ")
        elif name in ("br", "cr"):
            if val(child, "type") in (None, "textWrapping"):
                out.append("\n")
        elif name in ("noBreakHyphen", "softHyphen"):
            out.append("-" if name == "noBreakHyphen" else "")
        elif name == "txbxContent":
            boxes.append(child)
        elif name == "AlternateContent":
            choice = child.find(f"{{{MC}}}Choice")
            if choice is not None:
                _collect(choice, out, boxes)
        elif name != "Fallback":
            _collect(child, out, boxes)


def _clean_lines(text: str) -> str:
    """Whitespace runs collapsed, each line trimmed, empty lines dropped, and lines that
    would read as Markdown structure escaped."""
    lines = (_SPACE.sub(" ", line).strip() for line in text.split("\n"))
    return "\n".join(escape_line(line) for line in lines if line)


def _item_text(marker: str, text: str) -> str:
    """A list item's line; escaped when its marker would start a heading, fence or table."""
    decimal = _DECIMAL_MARKER.match(unicodedata.normalize("NFKC", marker))
    if marker == "-":
        prefix = "- "
    elif decimal:
        prefix = f"{decimal[1]}. "
    else:
        prefix = f"{marker} "
    return escape_line(prefix + " ".join(text.split("\n")))


def render(blocks: list[Block]) -> str:
    """Markdown for ``blocks``: headings leveled against the title, list items kept together.

    A ``Title`` paragraph is level 1 and shifts heading n to n+1 when one is present;
    otherwise heading n is level n. Levels are capped at 6.
    """
    has_title = any(b.kind == "heading" and b.level == 0 for b in blocks)
    out: list[str] = []
    previous = ""
    for block in blocks:
        if block.kind == "heading":
            level = block.level + 1 if has_title else max(block.level, 1)
            text = "#" * min(level, MAX_HEADING_LEVEL) + " " + block.text
        elif block.kind == "item":
            text = "  " * block.level + block.text
        else:
            text = block.text
        if out:
            out.append("\n" if block.kind == previous == "item" else "\n\n")
        out.append(text)
        previous = block.kind
    return "".join(out)


def first_heading_text(blocks: list[Block]) -> str | None:
    """The text of the highest-level heading that comes first."""
    headings = [b for b in blocks if b.kind == "heading"]
    if not headings:
        return None
    top = min(b.level for b in headings)
    return next(b.text for b in headings if b.level == top)
