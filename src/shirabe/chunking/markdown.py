"""Heading-aware chunking of Markdown parts, with section summary chunks.

Each part is parsed into blocks (headings, paragraphs, pipe tables, fenced code). Blocks under
one heading are packed greedily into chunks of at most ``size`` characters; chunks never cross
a heading or a part, so each one has a single heading path and a single locator. Oversized
blocks split at sentence ends, tables between rows (repeating the header) and code between
lines (re-opening the fence). Sections with sub-sections also get a summary chunk that lists
the sub-section titles and the codes found beneath, which answers "what is in this chapter".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import PurePath
from typing import Literal

from shirabe.records import Chunk, Document, Locator, Part
from shirabe.text.identifiers import find_identifiers
from shirabe.text.markdown import (
    atx_heading,
    closes_fence,
    fence_marker,
    is_table_line,
    is_table_separator,
    starts_structure,
)
from shirabe.text.sentences import sentence_spans

BlockKind = Literal["heading", "paragraph", "table", "code"]
Span = tuple[int, int]

SUMMARY_LIMIT_FACTOR = 4
"""A summary longer than this many times the chunk size is split into several chunks."""


@dataclass(frozen=True, slots=True)
class Block:
    """One Markdown block of a part; ``start``/``end`` exclude surrounding whitespace."""

    kind: BlockKind
    start: int
    end: int
    lines: tuple[Span, ...]
    level: int = 0
    title: str = ""


def parse_blocks(text: str) -> list[Block]:
    """The blocks of ``text`` in order; blank lines only separate blocks."""
    lines = _line_spans(text)
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        line = text[slice(*lines[i])]
        if not line.strip():
            i += 1
            continue
        fence = fence_marker(line)
        heading = atx_heading(line)
        if fence is not None:
            j = i + 1
            while j < len(lines) and not closes_fence(text[slice(*lines[j])], fence):
                j += 1
            j = min(j + 1, len(lines))
            kind: BlockKind = "code"
        elif heading is not None:
            start, end = _trim(text, *lines[i])
            blocks.append(Block("heading", start, end, (lines[i],), heading[0], heading[1]))
            i += 1
            continue
        elif is_table_line(line):
            j = i + 1
            while j < len(lines) and is_table_line(text[slice(*lines[j])]):
                j += 1
            kind = "table"
        else:
            j = i + 1
            while j < len(lines) and not _breaks_paragraph(text[slice(*lines[j])]):
                j += 1
            kind = "paragraph"
        start, end = _trim(text, lines[i][0], lines[j - 1][1])
        blocks.append(Block(kind, start, end, tuple(lines[i:j])))
        i = j
    return blocks


class MarkdownChunker:
    """Splits a document's Markdown parts into heading-scoped chunks of bounded size.

    ``overlap`` repeats up to that many characters of trailing sentences from the previous
    chunk of the same section (chunks may then exceed ``size`` by the overlap). ``summaries``
    adds one summary chunk per section with sub-sections, and one for the whole document
    when it has two or more top-level sections.
    """

    signature = ""
    """Empty: built from the settings, its size, overlap and summaries are in the ingest's cut
    signature (indexing.tags). One built by hand with other values than the settings' is
    not tracked; give it a signature (a subclass) to have files cut again when they change."""

    def __init__(self, *, size: int = 400, overlap: int = 0, summaries: bool = True) -> None:
        if size < 1:
            raise ValueError(f"chunk size must be positive, got {size}")
        if overlap < 0:
            raise ValueError(f"chunk overlap must not be negative, got {overlap}")
        self.size = size
        self.overlap = overlap
        self.summaries = summaries

    def chunk(self, document: Document) -> list[Chunk]:
        return _Assembler(document, self.size, self.overlap, self.summaries).run()


@dataclass(frozen=True, slots=True)
class _Piece:
    """Chunk text with its span; ``exact`` when ``text`` is precisely the span's slice."""

    text: str
    start: int
    end: int
    exact: bool = True


@dataclass(slots=True)
class _Section:
    """An open heading: where it starts, what lies beneath it so far."""

    level: int
    title: str
    path: tuple[str, ...]
    part: int
    start: int
    end: int
    children: list[str] = field(default_factory=list)
    codes: dict[str, None] = field(default_factory=dict)


class _Assembler:
    """Walks one document's blocks in order, emitting chunks and summaries as sections close."""

    def __init__(self, document: Document, size: int, overlap: int, summaries: bool) -> None:
        self.document = document
        self.size = size
        self.overlap = overlap
        self.summaries = summaries
        self.chunks: list[Chunk] = []
        self.stack: list[_Section] = []
        first = document.parts[0].text if document.parts else ""
        title = document.title or PurePath(document.path).name or document.path
        self.root = _Section(0, title, (), 0, *_trim(first, 0, len(first)))

    def run(self) -> list[Chunk]:
        for index, part in enumerate(self.document.parts):
            pending: list[Block] = []
            for block in parse_blocks(part.text):
                if block.kind == "heading":
                    self._flush(part, pending)
                    pending = []
                    self._open(index, block)
                else:
                    self._note(index, block, part.text[block.start : block.end])
                    pending.append(block)
            self._flush(part, pending)
        while self.stack:
            self._close(self.stack.pop())
        if self.summaries and len(self.root.children) >= 2:
            self._summarize(self.root)
        return self.chunks

    def _open(self, index: int, heading: Block) -> None:
        while self.stack and self.stack[-1].level >= heading.level:
            self._close(self.stack.pop())
        self._note(index, heading, heading.title)
        parent = self.stack[-1] if self.stack else self.root
        parent.children.append(heading.title)
        path = (*parent.path, heading.title)
        section = _Section(heading.level, heading.title, path, index, heading.start, heading.end)
        self.stack.append(section)

    def _note(self, index: int, block: Block, text: str) -> None:
        codes = find_identifiers(text)
        for section in (self.root, *self.stack):
            section.codes.update(dict.fromkeys(codes))
            if section is not self.root and section.part == index:
                section.end = block.end

    def _close(self, section: _Section) -> None:
        if self.summaries and section.children:
            self._summarize(section)

    def _summarize(self, section: _Section) -> None:
        limit = SUMMARY_LIMIT_FACTOR * self.size
        locator = self.document.parts[section.part].locator if self.document.parts else {}
        for text in summary_texts(section.title, section.children, list(section.codes), limit):
            self._emit(_Piece(text, section.start, section.end), section.path, locator, True)

    def _flush(self, part: Part, blocks: list[Block]) -> None:
        if not blocks:
            return
        pieces = [p for block in blocks for p in _block_pieces(part.text, block, self.size)]
        packed = _with_overlap(part.text, _pack(part.text, pieces, self.size), self.overlap)
        path = self.stack[-1].path if self.stack else ()
        for piece in packed:
            self._emit(piece, path, part.locator, False)

    def _emit(self, piece: _Piece, path: tuple[str, ...], locator: Locator, summary: bool) -> None:
        self.chunks.append(
            Chunk(
                text=piece.text,
                source=self.document.path,
                heading_path=path,
                position=len(self.chunks),
                start=piece.start,
                end=piece.end,
                locator=dict(locator),
                is_summary=summary,
            )
        )


CODES_HEAD = "記載されているコード"
"""How a section summary's line of codes begins; its count mixes every kind of code (error
codes and part numbers alike), so it answers no question of how many."""
ITEMS_LINE = re.compile(r"「(?P<title>.+?)」の項目（\d+件）")
"""A section summary's line of sub-sections; its count is of what its title names."""


def summary_texts(title: str, children: list[str], codes: list[str], limit: int) -> list[str]:
    """Summary text listing sub-section titles and codes, split to at most ``limit`` characters.

    ``「title」の項目（N件）: A、B`` then, when there are codes, a second line
    ``記載されているコード（M件）: X、Y``. Every split piece starts with the first line's
    prefix so that each one still names its section; a single over-long item is kept whole.
    """
    heads = (f"「{title}」の項目（{len(children)}件）", f"{CODES_HEAD}（{len(codes)}件）")
    entries = [(0, child) for child in children] + [(1, code) for code in codes]
    pieces: list[list[tuple[int, str]]] = [[]]
    for entry in entries:
        if pieces[-1] and len(_render_summary(heads, [*pieces[-1], entry])) > limit:
            pieces.append([])
        pieces[-1].append(entry)
    return [_render_summary(heads, piece) for piece in pieces]


def _render_summary(heads: tuple[str, str], entries: list[tuple[int, str]]) -> str:
    lines: list[str] = []
    for line, head in enumerate(heads):
        items = [item for index, item in entries if index == line]
        if items:
            lines.append(f"{head}: {'、'.join(items)}")
        elif line == 0:
            lines.append(head)
    return "\n".join(lines)


def _block_pieces(text: str, block: Block, size: int) -> list[_Piece]:
    if block.end - block.start <= size:
        return [_Piece(text[block.start : block.end], block.start, block.end)]
    if block.kind == "table":
        return _table_pieces(text, block, size)
    if block.kind == "code":
        return _code_pieces(text, block, size)
    return _sentence_pieces(text, block.start, block.end, size)


def _sentence_pieces(text: str, start: int, end: int, size: int) -> list[_Piece]:
    """Sentences of ``text[start:end]``; a sentence longer than ``size`` is hard-cut."""
    pieces: list[_Piece] = []
    for first, last in sentence_spans(text[start:end]):
        if last - first <= size:
            pieces.append(_Piece(text[start + first : start + last], start + first, start + last))
        else:
            pieces.extend(_hard_cut(text, start + first, start + last, size))
    return pieces


def _hard_cut(text: str, start: int, end: int, size: int) -> list[_Piece]:
    pieces: list[_Piece] = []
    position = start
    while position < end:
        first, last = _trim(text, position, min(position + size, end))
        if first < last:
            pieces.append(_Piece(text[first:last], first, last))
        position += size
    return pieces


def _line_pieces(text: str, lines: tuple[Span, ...], size: int) -> list[_Piece]:
    """Each non-blank line as its own piece (hard-cut when longer than ``size``)."""
    pieces: list[_Piece] = []
    for line in lines:
        start, end = _trim(text, *line)
        if start < end:
            pieces.extend(_hard_cut(text, start, end, size))
    return pieces


def _table_pieces(text: str, block: Block, size: int) -> list[_Piece]:
    """Row groups of an oversized table; every group after the first repeats the header."""
    rows = [_trim(text, *line) for line in block.lines]
    if len(rows) < 3 or not is_table_separator(text[slice(*rows[1])]):
        return _line_pieces(text, block.lines, size)
    header = text[rows[0][0] : rows[1][1]]

    def fits(group: list[Span], first: bool) -> bool:
        if first:
            return group[-1][1] - rows[0][0] <= size
        return len(header) + 1 + group[-1][1] - group[0][0] <= size

    groups: list[list[Span]] = []
    for row in rows[2:]:
        if groups and fits([*groups[-1], row], first=len(groups) == 1):
            groups[-1].append(row)
        elif fits([row], first=not groups):
            groups.append([row])
        else:
            return _line_pieces(text, block.lines, size)
    pieces = [_Piece(text[rows[0][0] : groups[0][-1][1]], rows[0][0], groups[0][-1][1])]
    for group in groups[1:]:
        start, end = group[0][0], group[-1][1]
        pieces.append(_Piece(f"{header}\n{text[start:end]}", start, end, exact=False))
    return pieces


def _code_pieces(text: str, block: Block, size: int) -> list[_Piece]:
    """Line groups of an oversized code block, each wrapped in its own fence."""
    opening = text[slice(*_trim(text, *block.lines[0]))]
    marker = fence_marker(opening) or "```"
    closed = len(block.lines) > 1 and closes_fence(text[slice(*block.lines[-1])], marker)
    closing = text[slice(*_trim(text, *block.lines[-1]))] if closed else marker
    body = block.lines[1:-1] if closed else block.lines[1:]
    wrapper = len(opening) + len(closing) + 2

    groups: list[list[Span]] = []
    for line in body:
        if groups and wrapper + line[1] - groups[-1][0][0] <= size:
            groups[-1].append(line)
        elif wrapper + line[1] - line[0] <= size:
            groups.append([line])
        else:
            return _line_pieces(text, block.lines, size)
    if not groups:
        return _line_pieces(text, block.lines, size)
    pieces: list[_Piece] = []
    for index, group in enumerate(groups):
        start = block.start if index == 0 else group[0][0]
        end = block.end if closed and index == len(groups) - 1 else group[-1][1]
        content = text[group[0][0] : group[-1][1]]
        pieces.append(_Piece(f"{opening}\n{content}\n{closing}", start, end, exact=False))
    return pieces


def _pack(text: str, pieces: list[_Piece], size: int) -> list[_Piece]:
    """Greedily join consecutive exact pieces while the joined slice fits in ``size``."""
    packed: list[_Piece] = []
    for piece in pieces:
        last = packed[-1] if packed else None
        if last is not None and last.exact and piece.exact and piece.end - last.start <= size:
            packed[-1] = _Piece(text[last.start : piece.end], last.start, piece.end)
        else:
            packed.append(piece)
    return packed


def _with_overlap(text: str, pieces: list[_Piece], overlap: int) -> list[_Piece]:
    """Extend each exact chunk back over the previous chunk's trailing sentences."""
    if overlap <= 0 or not pieces:
        return pieces
    result = [pieces[0]]
    for previous, current in pairwise(pieces):
        start = _overlap_start(previous, overlap) if previous.exact and current.exact else None
        if start is None:
            result.append(current)
        else:
            result.append(_Piece(text[start : current.end], start, current.end))
    return result


def _overlap_start(previous: _Piece, overlap: int) -> int | None:
    """Start of the longest run of trailing sentences within ``overlap``, never the whole chunk."""
    start: int | None = None
    for first, _ in reversed(sentence_spans(previous.text)[1:]):
        if previous.end - (previous.start + first) > overlap:
            break
        start = previous.start + first
    return start


def _line_spans(text: str) -> list[Span]:
    spans: list[Span] = []
    start = 0
    while (newline := text.find("\n", start)) >= 0:
        spans.append((start, newline))
        start = newline + 1
    spans.append((start, len(text)))
    return spans


def _trim(text: str, start: int, end: int) -> Span:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _breaks_paragraph(line: str) -> bool:
    return not line.strip() or starts_structure(line)
