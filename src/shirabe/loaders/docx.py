"""Loader for Word ``.docx`` files: the body in document order as one Markdown part.

The body XML is walked directly rather than through ``doc.paragraphs`` and ``doc.tables``,
because those lose the order in which paragraphs and tables interleave, drop text inside
content controls, and keep tracked deletions. What comes out:

* heading styles (English or Japanese names, styles based on a heading, or an outline
  level) become ``#`` headings; ``Title``/``表題`` is level 1 and pushes ``Heading n`` to
  level n+1, so a titled document keeps one top heading;
* list paragraphs keep their markers: bullets become ``- ``, decimal numbering ``1. `` with
  the numbers Word would show, other numbering its own text (``(1)``, ``第1条``, ``ア``);
* tables become pipe tables on the layout grid: missing cells are padded, a horizontal
  merge keeps its text in the first column, a vertical merge repeats its text on every row
  it covers (so each row still reads on its own once a long table is split between rows),
  and nested tables are flattened into their cell;
* tracked deletions, moved-away text, field codes, headers and footers are left out;
  tracked insertions are kept.

Word has no reliable page numbers, so the whole body is one part with an empty locator.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from shirabe.loaders.ooxml import check_package, meaningful_title
from shirabe.loaders.plaintext import plain_text_to_markdown
from shirabe.loaders.protocol import LoadError, LoadOptions, describe_error
from shirabe.records import Document, Part
from shirabe.text.markdown import markdown_table

logger = logging.getLogger(__name__)

Element = Any
"""An lxml element of the package XML (lxml ships no type information)."""

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
MC = "http://schemas.openxmlformats.org/markup-compatibility/2006"

MAX_HEADING_LEVEL = 6

_HEADING_NAME = re.compile(r"^(?:heading|見出し)(\d)$")
_TITLE_NAMES = frozenset({"title", "表題", "タイトル"})
_LIST_STYLE_DEPTH = re.compile(r"^list(?:bullet|number|continue)(\d)$")
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


def tag(element: Element) -> str:
    """The local name of ``element`` (``p``, ``tbl``), or ``""`` for comments and PIs."""
    name = element.tag
    if not isinstance(name, str):
        return ""
    return name.rsplit("}", 1)[-1]


def _w(name: str) -> str:
    return f"{{{W}}}{name}"


def _val(element: Element | None, name: str = "val") -> str | None:
    if element is None:
        return None
    value = element.get(_w(name))
    return str(value) if value is not None else None


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
                return _outline_heading(info.outline_level)
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


def _outline_heading(outline_level: int) -> int | None:
    """Word's outline levels 0-8 are headings 1-9; 9 means body text."""
    return outline_level + 1 if 0 <= outline_level <= 8 else None


def _int(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        return None


def parse_styles(root: Element | None) -> Styles:
    """The paragraph styles of a ``styles.xml`` root element."""
    if root is None:
        return Styles()
    by_id: dict[str, StyleInfo] = {}
    default: str | None = None
    for style in root.iterchildren(_w("style")):
        if _val(style, "type") not in (None, "paragraph"):
            continue
        style_id = _val(style, "styleId")
        if style_id is None:
            continue
        if _val(style, "default") in ("1", "true", "on"):
            default = style_id
        ppr = style.find(_w("pPr"))
        num_pr = ppr.find(_w("numPr")) if ppr is not None else None
        by_id[style_id] = StyleInfo(
            name=_val(style.find(_w("name"))) or style_id,
            based_on=_val(style.find(_w("basedOn"))),
            outline_level=_int(_val(ppr.find(_w("outlineLvl")))) if ppr is not None else None,
            num_id=_val(num_pr.find(_w("numId"))) if num_pr is not None else None,
            ilvl=_int(_val(num_pr.find(_w("ilvl")))) if num_pr is not None else None,
        )
    return Styles(by_id, default)


# --- numbering -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Level:
    """One level of a numbering definition."""

    fmt: str = "decimal"
    text: str = "%1."
    start: int = 1


_IROHA = (
    "イロハニホヘトチリヌルヲワカヨタレソツネナラムウヰノオクヤマケフコエテアサキユメミシヱヒモセス"
)
_AIUEO = (
    "アイウエオカキクケコサシスセソタチツテトナニヌネノハヒフヘホマミムメモヤユヨラリルレロワヲン"
)
_KANJI_DIGITS = "〇一二三四五六七八九"
_ROMAN = (
    (1000, "M"),
    (900, "CM"),
    (500, "D"),
    (400, "CD"),
    (100, "C"),
    (90, "XC"),
    (50, "L"),
    (40, "XL"),
    (10, "X"),
    (9, "IX"),
    (5, "V"),
    (4, "IV"),
    (1, "I"),
)


def _roman(n: int) -> str:
    out = []
    for value, letters in _ROMAN:
        while n >= value:
            out.append(letters)
            n -= value
    return "".join(out)


def _letters(n: int) -> str:
    """Word's letter numbering: a..z, then aa..zz, aaa..."""
    if n < 1:
        return str(n)
    return chr(ord("a") + (n - 1) % 26) * ((n - 1) // 26 + 1)


def _kanji(n: int) -> str:
    """一, 十, 二十三 ... for counting numbers below 10,000."""
    if not 0 < n < 10000:
        return str(n)
    out = []
    for unit, mark in ((1000, "千"), (100, "百"), (10, "十")):
        digit, n = divmod(n, unit)
        if digit:
            out.append(("" if digit == 1 else _KANJI_DIGITS[digit]) + mark)
    if n:
        out.append(_KANJI_DIGITS[n])
    return "".join(out)


def format_number(n: int, fmt: str) -> str:
    """``n`` in a Word ``numFmt``; unknown formats fall back to Arabic digits."""
    if fmt in ("upperLetter", "lowerLetter"):
        text = _letters(n)
        return text.upper() if fmt == "upperLetter" else text
    if fmt in ("upperRoman", "lowerRoman"):
        text = _roman(n) if n > 0 else str(n)
        return text if fmt == "upperRoman" else text.lower()
    if fmt in ("decimalFullWidth", "decimalFullWidth2"):
        return str(n).translate(str.maketrans("0123456789", "０１２３４５６７８９"))
    if fmt == "decimalZero":
        return f"{n:02d}"
    if fmt == "decimalEnclosedCircle" and 1 <= n <= 20:
        return chr(0x2460 + n - 1)
    if fmt in ("decimalEnclosedParen",):
        return f"({n})"
    if fmt in ("aiueo", "aiueoFullWidth") and 1 <= n <= len(_AIUEO):
        return _AIUEO[n - 1]
    if fmt in ("iroha", "irohaFullWidth") and 1 <= n <= len(_IROHA):
        return _IROHA[n - 1]
    if fmt in ("japaneseCounting", "chineseCounting", "ideographTraditional"):
        if fmt == "ideographTraditional" and 1 <= n <= 10:
            return "甲乙丙丁戊己庚辛壬癸"[n - 1]
        return _kanji(n)
    if fmt in ("ideographDigital", "japaneseDigitalTenThousand"):
        return "".join(_KANJI_DIGITS[int(d)] for d in str(n)) if n >= 0 else str(n)
    return str(n)


@dataclass(slots=True)
class Numbering:
    """List definitions (``numbering.xml``) and the running counters of each list."""

    levels: dict[str, dict[int, Level]] = field(default_factory=dict)
    counters: dict[str, dict[int, int]] = field(default_factory=dict)

    def marker(self, num_id: str, ilvl: int) -> str | None:
        """The marker Word shows for the next item of list ``num_id`` at ``ilvl``, counting
        it: ``"-"`` for bullets, the rendered level text (``1.``, ``(2)``, ``第3条``)
        otherwise, ``None`` when the list is unknown or shows nothing."""
        levels = self.levels.get(num_id)
        if levels is None:
            return None
        level = levels.get(ilvl, Level())
        if level.fmt == "bullet":
            return "-"
        counts = self.counters.setdefault(num_id, {})
        counts[ilvl] = counts.get(ilvl, level.start - 1) + 1
        for deeper in [k for k in counts if k > ilvl]:
            del counts[deeper]
        if level.fmt == "none":
            return None

        def number(match: re.Match[str]) -> str:
            k = int(match[1]) - 1
            shown = levels.get(k, Level())
            return format_number(counts.get(k, shown.start), shown.fmt)

        text = re.sub(r"%([1-9])", number, level.text).strip()
        return text or None


def parse_numbering(root: Element | None) -> Numbering:
    """The list levels of a ``numbering.xml`` root, by ``numId`` and level."""
    if root is None:
        return Numbering()
    abstract: dict[str, dict[int, Level]] = {}
    for node in root.iterchildren(_w("abstractNum")):
        abstract_id = _val(node, "abstractNumId")
        if abstract_id is not None:
            abstract[abstract_id] = _levels(node)
    levels: dict[str, dict[int, Level]] = {}
    for num in root.iterchildren(_w("num")):
        num_id = _val(num, "numId")
        base = abstract.get(_val(num.find(_w("abstractNumId"))) or "", {})
        if num_id is None:
            continue
        merged = dict(base)
        for override in num.iterchildren(_w("lvlOverride")):
            ilvl = _int(_val(override, "ilvl"))
            if ilvl is None:
                continue
            redefined = override.find(_w("lvl"))
            if redefined is not None:
                merged.update(_levels_of([redefined]))
            start = _int(_val(override.find(_w("startOverride"))))
            if start is not None:
                old = merged.get(ilvl, Level())
                merged[ilvl] = Level(old.fmt, old.text, start)
        levels[num_id] = merged
    return Numbering(levels)


def _levels(abstract_num: Element) -> dict[int, Level]:
    return _levels_of(abstract_num.iterchildren(_w("lvl")))


def _levels_of(nodes: Any) -> dict[int, Level]:
    found: dict[int, Level] = {}
    for lvl in nodes:
        ilvl = _int(_val(lvl, "ilvl"))
        if ilvl is None:
            continue
        found[ilvl] = Level(
            fmt=_val(lvl.find(_w("numFmt"))) or "decimal",
            text=_val(lvl.find(_w("lvlText"))) or "",
            start=_int(_val(lvl.find(_w("start")))) or 0,
        )
    return found


# --- body walking ----------------------------------------------------------------------------


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
        ppr = p.find(_w("pPr"))
        style_id = _val(ppr.find(_w("pStyle"))) if ppr is not None else None
        out: list[Block] = []
        if text:
            level = self.styles.heading_level(style_id)
            outline = _int(_val(ppr.find(_w("outlineLvl")))) if ppr is not None else None
            if outline is not None:
                level = _outline_heading(outline) if level is None or level > 0 else level
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
        num_pr = ppr.find(_w("numPr")) if ppr is not None else None
        if num_pr is not None:
            num_id = _val(num_pr.find(_w("numId")))
            if num_id is not None:
                ilvl = _int(_val(num_pr.find(_w("ilvl"))))
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
            trpr = tr.find(_w("trPr"))
            before = _int(_val(trpr.find(_w("gridBefore")))) if trpr is not None else None
            row: list[str] = [""] * (before or 0)
            for tc in _cells(tr):
                tcpr = tc.find(_w("tcPr"))
                span = _int(_val(tcpr.find(_w("gridSpan")))) if tcpr is not None else None
                vmerge = tcpr.find(_w("vMerge")) if tcpr is not None else None
                column = len(row)
                if vmerge is not None and _val(vmerge) in (None, "continue"):
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
            if _val(child, "type") in (None, "textWrapping"):
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
    """Whitespace runs collapsed, each line trimmed, empty lines dropped."""
    lines = (_SPACE.sub(" ", line).strip() for line in text.split("\n"))
    return "\n".join(_escape(line) for line in lines if line)


def _escape(line: str) -> str:
    """A leading ``#`` escaped, so body text never turns into a heading."""
    return "\\" + line if line.startswith("#") else line


def _item_text(marker: str, text: str) -> str:
    decimal = _DECIMAL_MARKER.match(unicodedata.normalize("NFKC", marker))
    if marker == "-":
        prefix = "- "
    elif decimal:
        prefix = f"{decimal[1]}. "
    else:
        prefix = f"{marker} "
    return prefix + " ".join(text.split("\n"))


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


class DocxLoader:
    """Word documents as one Markdown part (see the module docstring)."""

    extensions: ClassVar[tuple[str, ...]] = (".docx",)

    def load(self, path: Path, options: LoadOptions) -> Document:
        check_package(path, max_unzipped_bytes=options.max_unzipped_bytes, part="word/document.xml")
        try:
            import docx
        except ImportError as exc:
            raise LoadError(path, "needs python-docx: pip install 'shirabe[office]'") from exc
        try:
            doc = docx.Document(str(path))
        except Exception as exc:
            logger.debug("python-docx cannot open %s", path, exc_info=True)
            reason = f"corrupt or unreadable Word file ({describe_error(exc)})"
            raise LoadError(path, reason) from exc
        try:
            walker = Walker(parse_styles(_styles_root(doc)), parse_numbering(_numbering_root(doc)))
            blocks = walker.blocks(doc.element.body)
            core_title = doc.core_properties.title
            metadata = _metadata(doc)
        except Exception as exc:
            logger.debug("cannot read %s", path, exc_info=True)
            reason = f"corrupt or unreadable Word file ({describe_error(exc)})"
            raise LoadError(path, reason) from exc
        text = render(blocks)
        if not any(b.kind == "heading" for b in blocks):
            text = plain_text_to_markdown(text)  # no heading styles: 第1章, 【別紙】 lines
        title = meaningful_title(core_title) or first_heading_text(blocks)
        warnings = [] if text.strip() else ["no text found"]
        return Document(
            path=str(path),
            parts=[Part(text)],
            title=title,
            metadata=metadata,
            warnings=warnings,
        )


def _styles_root(doc: Any) -> Element | None:
    try:
        return doc.styles.element
    except Exception:
        logger.debug("no styles part", exc_info=True)
        return None


def _numbering_root(doc: Any) -> Element | None:
    try:
        return doc.part.numbering_part.element
    except (KeyError, NotImplementedError):
        return None


def _metadata(doc: Any) -> dict[str, str]:
    props = doc.core_properties
    found = {"author": props.author, "subject": props.subject, "keywords": props.keywords}
    return {key: " ".join(value.split()) for key, value in found.items() if value and value.strip()}
