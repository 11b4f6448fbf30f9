"""Text lines of a page to Markdown: paragraphs rebuilt from line geometry, lines broken inside
a paragraph joined (no space between CJK characters), and reliable headings marked with levels
that stay consistent across the pages of a document.

Nothing here opens a PDF: the loader hands in :class:`Line` objects, so each rule can be tested
with small hand-written tables.
"""

from __future__ import annotations

import itertools
import re
import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from shirabe.text.markdown import escape_line

MAX_HEADING_CHARS = 40
"""Longer lines are prose, whatever they start with."""

_SPACE = re.compile(r"\s+")


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
            blocks.append(escape_line(paragraph.text.strip()))
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
    """OCR output with the spaces Tesseract puts between Japanese characters removed, and lines
    that would read as Markdown structure escaped."""
    return "\n".join(escape_line(close_cjk_spaces(line).strip()) for line in text.split("\n"))


def close_cjk_spaces(text: str) -> str:
    """Spaces some extractors put after Japanese punctuation or between Japanese characters
    removed ("内閣は、 道路" becomes "内閣は、道路")."""
    return re.sub(rf"(?<={_CJK.pattern}) +(?={_CJK.pattern})", "", text)
