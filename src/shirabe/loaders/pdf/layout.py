"""Pure text logic of the PDF loader: garbage detection, line joining, columns, headings.

Nothing here opens a PDF. The loader hands in plain strings and boxes (``Line``, ``Box``) so
each rule can be tested with small hand-written tables:

* :func:`text_quality` decides whether an extracted text layer is real text or noise
  (``(cid:12)`` runs, replacement and private-use characters, controls, mojibake).
* :func:`find_gutter` finds the vertical gap between two text columns.
* :func:`is_vertical` tells vertical Japanese (縦書き) from horizontal text by glyph positions.
* :func:`lines_to_markdown` joins lines broken inside a paragraph (no space between CJK
  characters), separates paragraphs with blank lines and marks reliable headings.
"""

from __future__ import annotations

import itertools
import re
import statistics
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

GARBAGE_RATIO = 0.10
"""A text whose share of suspicious characters reaches this is treated as having no text."""
MIN_TEXT_CHARS = 3
"""Fewer visible characters than this on a page means no usable text layer."""
MAX_HEADING_CHARS = 40
"""Longer lines are prose, whatever they start with."""

_CID = re.compile(r"\(cid:\d+\)")
_SPACE = re.compile(r"\s+")
_ALLOWED_CONTROLS = frozenset("\t\n\r\f")
# Windows-1252 characters in 0x80-0x9F: what UTF-8 continuation bytes look like in cp1252.
_CP1252_SPECIALS = "€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ"
_MOJIBAKE = re.compile(rf"[\u00c2-\u00f4][\u0080-\u00bf{_CP1252_SPECIALS}]+")
_RARE_SYMBOL_RUN = re.compile(rf"[\u00a1-\u00bf\u00d7\u00f7\u02b0-\u02ff{_CP1252_SPECIALS}]{{3,}}")
_COMMON_SCRIPTS = frozenset({"LATIN", "CJK", "HIRAGANA", "KATAKANA", "HANGUL", "FULLWIDTH"})


@dataclass(frozen=True, slots=True)
class TextQuality:
    """How much of a text looks like noise, and why."""

    visible: int
    """Visible characters, counting each ``(cid:N)`` as one."""
    suspicious: int
    reasons: tuple[str, ...] = ()

    @property
    def ratio(self) -> float:
        return self.suspicious / self.visible if self.visible else 0.0

    @property
    def usable(self) -> bool:
        """Enough visible characters, and few enough of them suspicious."""
        return self.visible >= MIN_TEXT_CHARS and self.ratio < GARBAGE_RATIO


def text_quality(text: str) -> TextQuality:
    """Count the characters of ``text`` that real text almost never contains.

    Suspicious are: ``(cid:N)`` placeholders (glyphs without a Unicode mapping), U+FFFD,
    private-use and unassigned code points, control characters, UTF-8 read as Latin-1 or
    cp1252 ("ã\\x81\\x82", "Ã©"), runs of three or more rare Latin-1 symbols ("™—›"),
    combining marks with no letter to sit on, and letters of minor scripts when three or more
    of them are mixed (glyph ids mapped to arbitrary code points give Greek, Syriac, Bengali and
    Thai side by side). A few odd glyphs in a long page stay under :data:`GARBAGE_RATIO`.
    """
    cids = len(_CID.findall(text))
    text = _CID.sub("", text)
    compact = _SPACE.sub("", text)
    visible = len(compact) + cids
    counts: Counter[str] = Counter()
    if cids:
        counts["cid"] = cids
    counts["mojibake"] = sum(len(m) for m in _MOJIBAKE.findall(compact) if _is_mojibake(m))
    counts["rare symbols"] = sum(len(m) for m in _RARE_SYMBOL_RUN.findall(compact))
    scripts: Counter[str] = Counter()
    previous = ""
    for char in compact:
        category = unicodedata.category(char)
        if char == "\ufffd":
            counts["replacement"] += 1
        elif category in ("Co", "Cn", "Cs"):
            counts["private use"] += 1
        elif category == "Cc" and char not in _ALLOWED_CONTROLS:
            counts["control"] += 1
        elif category == "Mn" and not (previous and unicodedata.category(previous)[0] == "L"):
            counts["stray marks"] += 1
        elif category[0] == "L":
            scripts[_script(char)] += 1
        previous = char
    minor = {s: n for s, n in scripts.items() if s not in _COMMON_SCRIPTS}
    if len(minor) >= 3:
        counts["mixed scripts"] = sum(minor.values())
    suspicious = sum(counts.values())
    reasons = tuple(sorted(name for name, n in counts.items() if n))
    return TextQuality(visible=visible, suspicious=suspicious, reasons=reasons)


def _is_mojibake(run: str) -> bool:
    """Whether ``run`` is UTF-8 bytes decoded as Latin-1 or cp1252."""
    for codec in ("cp1252", "latin-1"):
        try:
            run.encode(codec).decode("utf-8")
        except (UnicodeEncodeError, UnicodeDecodeError):
            continue
        return True
    return False


def _script(char: str) -> str:
    """The first word of the character's Unicode name: LATIN, CJK, GREEK, BENGALI, ..."""
    name = unicodedata.name(char, "")
    return name.split(" ", 1)[0] if name else "UNKNOWN"


# --- layout ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Box:
    """An axis-aligned box in PDF page coordinates (``top`` grows downwards)."""

    x0: float
    top: float
    x1: float
    bottom: float


def find_gutter(words: Sequence[Box], width: float, *, min_gap: float = 8.0) -> Box | None:
    """The empty vertical strip between two text columns, or ``None`` for a one-column page.

    A gutter is the widest run of x positions in the middle of the page (30-70 % of the width)
    that at most a few words cross (titles and figures may span both columns), at least
    ``min_gap`` wide. Both sides must hold a good share of the words side by side, and the
    lines on each side must be long, filling their column: that tells running text in
    columns from a table-like layout of short cells.
    """
    if len(words) < 20 or width <= 0:
        return None
    allowed = max(2, len(words) // 25)
    lo, hi = int(width * 0.3), int(width * 0.7)
    coverage = [0] * (hi - lo + 1)
    for w in words:
        for x in range(max(lo, int(w.x0)), min(hi, int(w.x1)) + 1):
            coverage[x - lo] += 1
    best: tuple[int, int] | None = None
    start: int | None = None
    for i, count in enumerate([*coverage, allowed + 1]):
        if count <= allowed and start is None:
            start = i
        elif count > allowed and start is not None:
            if best is None or i - start > best[1] - best[0]:
                best = (start, i)
            start = None
    if best is None or best[1] - best[0] < min_gap:
        return None
    gl, gr = lo + best[0], lo + best[1] - 1
    left = [w for w in words if w.x1 <= gl + 1]
    right = [w for w in words if w.x0 >= gr - 1]
    if min(len(left), len(right)) < len(words) * 0.2:
        return None
    top = max(min(w.top for w in left), min(w.top for w in right))
    bottom = min(max(w.bottom for w in left), max(w.bottom for w in right))
    if bottom - top <= 0:
        return None
    left_edge = min(w.x0 for w in left)
    right_edge = max(w.x1 for w in right)
    if not (_fills(left, left_edge, gl) and _fills(right, gr, right_edge)):
        return None
    spanning = [w for w in words if w.x0 < gr and w.x1 > gl]
    return Box(gl, min((w.top for w in spanning), default=top), gr, bottom)


def _fills(words: Sequence[Box], x0: float, x1: float) -> bool:
    """Whether the lines made of ``words`` mostly run across the column from x0 to x1."""
    rows: dict[int, list[Box]] = {}
    for w in words:
        rows.setdefault(round(w.top / 3), []).append(w)
    widths = sorted(max(w.x1 for w in row) - min(w.x0 for w in row) for row in rows.values())
    if len(widths) < 4:
        return False
    upper_quartile = widths[(len(widths) * 3) // 4]
    return upper_quartile >= 0.7 * (x1 - x0)


def column_regions(lines: Sequence[Box], gutter: Box, page: Box) -> list[Box]:
    """Regions of a two-column page in reading order.

    ``lines`` are the words or lines of the whole page; one that reaches well across the
    middle of the gutter spans both columns (a title, an abstract, a wide figure caption).
    The page is cut into horizontal bands at the spanning lines; each band between them is
    read left column, then right.
    """
    middle = (gutter.x0 + gutter.x1) / 2
    spans = sorted(
        (ln for ln in lines if ln.x0 < middle - 3 and ln.x1 > middle + 3), key=lambda b: b.top
    )
    regions: list[Box] = []
    cursor = page.top
    for span in spans:
        if span.top > cursor:
            regions.extend(_two_columns(cursor, span.top, gutter, page))
        if regions and regions[-1].x0 == page.x0 and regions[-1].x1 == page.x1:
            last = regions[-1]
            regions[-1] = Box(last.x0, last.top, last.x1, max(last.bottom, span.bottom))
        else:
            regions.append(Box(page.x0, span.top, page.x1, span.bottom))
        cursor = max(cursor, span.bottom)
    if cursor < page.bottom:
        regions.extend(_two_columns(cursor, page.bottom, gutter, page))
    return regions


def _two_columns(top: float, bottom: float, gutter: Box, page: Box) -> list[Box]:
    middle = (gutter.x0 + gutter.x1) / 2
    return [Box(page.x0, top, middle, bottom), Box(middle, top, page.x1, bottom)]


def is_vertical(glyphs: Sequence[Box]) -> bool:
    """Whether consecutive glyphs mostly step downwards (縦書き) rather than rightwards.

    Each pair of neighbours in content-stream order votes: same column and lower means
    vertical, same row and further right means horizontal.
    """
    down = across = 0
    for a, b in itertools.pairwise(glyphs):
        size = max(a.bottom - a.top, a.x1 - a.x0, 1.0)
        dx, dy = b.x0 - a.x0, b.top - a.top
        if abs(dx) < size * 0.3 and 0 < dy < size * 2:
            down += 1
        elif abs(dy) < size * 0.3 and 0 < dx < size * 2:
            across += 1
    return down > 2 * across and down >= 10


# --- lines to Markdown -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Line:
    """One text line of a page as the extractor gives it."""

    text: str
    x0: float
    top: float
    x1: float
    bottom: float
    size: float = 0.0


_CJK = re.compile(
    r"[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef\u2e80-\u2fdf]"
)
"""Characters written without spaces between words (Korean Hangul is not: it uses spaces)."""
_SENTENCE_END = tuple("。．.!?！？」』）)")
_BULLET = re.compile(
    r"^(?:[・•●○■□◆◇▪︎※\-–—*]|[(（]?(?:[0-9０-９]{1,2}|[一二三四五六七八九十]{1,3})[)）.．、]\s*)"
)
_NUMBER = r"(?:[0-9０-９]+|[一二三四五六七八九十百千〇]+)"
_UNIT_HEADING = re.compile(rf"^第{_NUMBER}(?P<unit>[編章節款条])(?:の{_NUMBER})*(?:\s|[（(]|$)")
_NUMBERED_HEADING = re.compile(
    r"^(?:[0-9０-９]{1,2}(?:[.．][0-9０-９]{1,2})*[.．]?|[一二三四五六七八九十]{1,3}[、．])[\s\u3000]*"
)
_APPENDIX_HEADING = re.compile(rf"^(?:別表|別紙|附則|付録)(?:第?{_NUMBER})?\s*$")


class HeadingTracker:
    """Heading levels that stay consistent across the pages of one document.

    Level 1 is kept for the document title. 章 (and 編) are level 2, 節 level 3, and 条,
    numbered captions (``１ 総則``, ``3.2 Results``) and larger-font lines sit one level
    below the innermost 章 or 節 seen so far.
    """

    def __init__(self) -> None:
        self.chapter = False
        self.section = False

    def level(self, kind: str) -> int:
        if kind in ("編", "章"):
            self.chapter, self.section = True, False
            return 2
        if kind == "節":
            self.section = True
            return 3
        return 4 if self.section else 3 if self.chapter else 2


def heading_kind(line: Line, body_size: float) -> str | None:
    """Why ``line`` is a heading (``"章"``, ``"条"``, ``"numbered"``, ``"font"``), or ``None``.

    Only reliable signals count: a short line that starts with 第N章/節/条, a short numbered
    caption (``１ 総則``) or appendix label (``別表第３``) that does not read as a sentence, or
    a short line set clearly larger than the body text.
    """
    text = line.text.strip()
    if not text or len(text) > MAX_HEADING_CHARS or text.endswith(("。", "、", ",", "，")):
        return None
    if sum(ch.isalpha() for ch in text) < 2:
        return None
    unit = _UNIT_HEADING.match(text)
    if unit and "。" not in text:
        return unit["unit"]
    if _APPENDIX_HEADING.match(text):
        return "appendix"
    numbered = _NUMBERED_HEADING.match(text)
    if numbered and numbered.end() < len(text):
        rest = text[numbered.end() :]
        readable = rest[0].isalpha() and not re.search(r"[、。，,:：]", rest)
        full_size = body_size <= 0 or line.size >= body_size * 0.95
        if (
            len(rest) <= 25
            and readable
            and full_size
            and numbered.end() > len(numbered[0].rstrip())
        ):
            return "numbered"
    if body_size > 0 and line.size >= body_size * 1.25 and len(text) <= 60:
        return "font"
    return None


def join_text(left: str, right: str) -> str:
    """Two pieces of one paragraph: no space between CJK characters, one between words,
    and a word hyphenated at the line end put back together."""
    left, right = left.rstrip(), right.lstrip()
    if not left or not right:
        return left + right
    if _CJK.match(left[-1]) or _CJK.match(right[0]):
        return left + right
    if left.endswith("-") and len(left) > 1 and left[-2].isalpha() and right[0].islower():
        return left[:-1] + right
    return left + " " + right


def body_size(lines: Iterable[Line]) -> float:
    """The most common font size, weighted by characters: the size of the body text."""
    weights: Counter[float] = Counter()
    for line in lines:
        if line.size > 0:
            weights[round(line.size, 1)] += len(line.text)
    return weights.most_common(1)[0][0] if weights else 0.0


@dataclass(slots=True)
class _Paragraph:
    text: str = ""
    lines: list[Line] = field(default_factory=list)


def lines_to_markdown(
    lines: Sequence[Line], tracker: HeadingTracker, *, size: float | None = None
) -> list[str]:
    """Markdown blocks (paragraphs and ``##`` headings) of ``lines`` in reading order.

    A new paragraph starts after a larger vertical gap than usual, after a line ending in
    。 (or another sentence end) that stops short of the right margin, at an indented line, at
    a bullet or numbered item, and around headings. Other line breaks are joined.
    """
    if not lines:
        return []
    size = body_size(lines) if size is None else size
    heights = [ln.bottom - ln.top for ln in lines if ln.bottom > ln.top]
    line_height = statistics.median(heights) if heights else size or 10.0
    gaps = [
        b.top - a.bottom
        for a, b in itertools.pairwise(lines)
        if 0 <= b.top - a.bottom < line_height * 3
    ]
    usual_gap = statistics.median(gaps) if gaps else line_height * 0.3
    left = min(ln.x0 for ln in lines)
    right = max(ln.x1 for ln in lines)
    char = size or line_height
    blocks: list[str] = []
    paragraph = _Paragraph()
    previous: Line | None = None

    def flush() -> None:
        if paragraph.text.strip():
            blocks.append(paragraph.text.strip())
        paragraph.text, paragraph.lines = "", []

    for line in lines:
        text = line.text.strip()
        if not text:
            continue
        kind = heading_kind(line, size)
        if kind is not None:
            flush()
            blocks.append("#" * tracker.level(kind) + " " + _SPACE.sub(" ", text))
            previous = None
            continue
        if previous is not None and _starts_paragraph(
            previous, line, usual_gap, line_height, left, right, char
        ):
            flush()
        paragraph.text = join_text(paragraph.text, text) if paragraph.text else text
        paragraph.lines.append(line)
        previous = line
    flush()
    return settle_blocks(blocks)


_HEADING_BLOCK = re.compile(r"^(#{1,6}) (.*)$")
_LONE_BULLET = frozenset("•・●○■□◆◇▪▫–-*")


def settle_blocks(blocks: Sequence[str]) -> list[str]:
    """Undo layout guesses that would hide text in headings.

    A run of two or more headings of one level with nothing between them is a list or a
    block of names set large (``## 4 塩化ビニルモノマー`` / ``## 5 塩化メチレン``), not
    structure: it becomes one paragraph, so its text lands in a chunk. 第N章/条 headings are
    kept. A bullet glyph alone in a block is joined to the block after it as a ``- `` item.
    """
    out: list[str] = []
    i = 0
    while i < len(blocks):
        block = blocks[i]
        if block.strip() in _LONE_BULLET and i + 1 < len(blocks):
            following = _HEADING_BLOCK.match(blocks[i + 1])
            out.append("- " + (following[2] if following else blocks[i + 1]))
            i += 2
            continue
        heading = _HEADING_BLOCK.match(block)
        if heading is None or _UNIT_HEADING.match(heading[2]):
            out.append(block)
            i += 1
            continue
        j = i + 1
        while j < len(blocks):
            nxt = _HEADING_BLOCK.match(blocks[j])
            if nxt is None or nxt[1] != heading[1] or _UNIT_HEADING.match(nxt[2]):
                break
            j += 1
        if j - i >= 2:
            out.append("\n".join(_HEADING_BLOCK.sub(r"\2", b) for b in blocks[i:j]))
        else:
            out.append(block)
        i = j
    return out


def _starts_paragraph(
    previous: Line,
    line: Line,
    usual_gap: float,
    line_height: float,
    left: float,
    right: float,
    char: float,
) -> bool:
    gap = line.top - previous.bottom
    if gap > usual_gap + line_height * 0.5 or gap < -line_height:
        return True
    ends_short = previous.x1 < right - char * 1.5
    if ends_short and previous.text.rstrip().endswith(_SENTENCE_END):
        return True
    if ends_short and previous.text.rstrip().endswith(("：", ":")):
        return True
    text = line.text.lstrip()
    if line.x0 > left + char * 0.8 and previous.x0 <= left + char * 0.5:
        return True
    if text.startswith("\u3000"):
        return True
    return bool(_BULLET.match(text))


def tidy_ocr_text(text: str) -> str:
    """OCR output with the spaces Tesseract puts between Japanese characters removed."""
    return "\n".join(close_cjk_spaces(line).strip() for line in text.split("\n"))


_FILENAME_LIKE = re.compile(r"^[\w.\- ]+\.(?:docx?|xlsx?|pptx?|txt|pdf|rtf|odt|tex|dvi|ps)$", re.I)
_GENERATOR_PREFIX = re.compile(r"^(?:Microsoft (?:Word|Excel|PowerPoint) - |untitled\b)", re.I)


def meaningful_title(raw: str | None) -> str | None:
    """A PDF metadata title worth showing, or ``None``.

    "Microsoft Word - 規程.docx" becomes "規程"; empty titles, file names, "untitled" and
    identifier-like strings without spaces or Japanese ("MEDRPT-2024_scan") are rejected.
    """
    if not raw:
        return None
    title = _SPACE.sub(" ", raw).strip()
    title = _GENERATOR_PREFIX.sub("", title).strip()
    stem = re.sub(r"\.(?:docx?|xlsx?|pptx?|txt|rtf|odt)$", "", title, flags=re.I)
    if stem != title and not _CJK.search(stem):
        return None  # an ASCII file name is not a title
    title = stem.strip()
    if not title or _FILENAME_LIKE.match(title):
        return None
    if not _CJK.search(title) and " " not in title:
        return None
    if not text_quality(title).usable:
        return None
    return title


def merge_sparse_columns(rows: Sequence[Sequence[str]]) -> list[list[str]]:
    """Table rows with neighbouring columns merged when no row fills both.

    Extractors split merged cells and slightly misaligned rulings into extra columns that are
    filled in turn, never together; merging them gives the table its real shape.
    """
    table = [list(row) for row in rows]
    width = max((len(row) for row in table), default=0)
    table = [row + [""] * (width - len(row)) for row in table]
    column = 1
    while column < width:
        if all(not (row[column - 1].strip() and row[column].strip()) for row in table):
            for row in table:
                row[column - 1] = row[column - 1] or row[column]
                del row[column]
            width -= 1
        else:
            column += 1
    return table


def close_cjk_spaces(text: str) -> str:
    """Spaces some extractors put after Japanese punctuation or between Japanese characters
    removed ("内閣は、 道路" becomes "内閣は、道路")."""
    return re.sub(rf"(?<={_CJK.pattern}) +(?={_CJK.pattern})", "", text)
