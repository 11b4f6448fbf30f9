"""The structure a person sees in a sheet, found in a stream of rows, and its Markdown.

:func:`layout` yields :class:`Title`, :class:`Record` and :class:`Note` events:

- title rows (a lone cell, or one value merged across the row) above a table become the
  table's title;
- key/value blocks (``氏名 | 山田太郎`` rows of two adjacent cells) become one block of
  ``key: value`` lines;
- the header row of each table is the row with the most text cells among the first rows of
  the table (title and key/value rows skipped); empty header cells take the text of the row
  above (a two-row header) or a column name (``列C``, ``列3``);
- every data row becomes one record of ``header: value`` lines, located by its row number;
- blank rows separate tables, each with its own header detection, except a blank row between
  a header and its data, or a blank row inside a table whose next row is plainly data;
- a small table whose first column holds the labels and whose rows hold one type each is
  read as a vertical (transposed) table: one record per column.

Rows are consumed as a stream: only the first :data:`LOOKAHEAD` rows of a block are held for
the header decision, so a 100,000-row sheet needs no more memory than a small one.
Blank rows are not passed in: they show as gaps between row numbers.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain

from shirabe.loaders.tabular.rows import (
    Row,
    dated,
    find_header,
    header_names,
    is_lone,
    is_pair,
    is_title_text,
    is_vertical,
    is_word,
    pair_line,
    record_lines,
    signature,
    text_count,
)
from shirabe.loaders.tabular.values import Kind, clean_text, letter_name
from shirabe.text.markdown import escape_line

LOOKAHEAD = 12
"""Rows of a block held in memory to decide its header and whether it is vertical."""
MAX_KEY_VALUE_ROWS = 10
"""A longer block of two-cell rows is a two-column table, one record per row."""


@dataclass(frozen=True, slots=True)
class Title:
    """A heading for what follows; ``text`` is one line."""

    text: str
    row: int


@dataclass(frozen=True, slots=True)
class Record:
    """One data row (or key/value block, or vertical-table column) as ``key: value`` lines."""

    lines: tuple[str, ...]
    row: int
    column: int | None = None


@dataclass(frozen=True, slots=True)
class Note:
    """Free text that is neither a title nor a table (remarks, footnotes)."""

    text: str
    row: int


Event = Title | Record | Note


@dataclass(slots=True)
class _Table:
    names: dict[int, str]
    rows: int = 0
    kinds: dict[int, Counter[Kind]] = field(default_factory=dict)
    shapes: set[tuple[tuple[int, bool], ...]] = field(default_factory=set)


class _Stream:
    """Row iterator with one-row lookahead, so a block's end is seen without consuming."""

    def __init__(self, rows: Iterable[Row]) -> None:
        self._it = iter(rows)
        self._next: Row | None = next(self._it, None)

    def peek(self) -> Row | None:
        return self._next

    def pop(self) -> Row:
        row = self._next
        assert row is not None
        self._next = next(self._it, None)
        return row

    def take_block(self, limit: int) -> tuple[list[Row], bool]:
        """Up to ``limit`` contiguous rows; ``True`` when the block ended within them."""
        block = [self.pop()]
        while len(block) < limit:
            nxt = self.peek()
            if nxt is None or nxt.number != block[-1].number + 1:
                return block, True
            block.append(self.pop())
        nxt = self.peek()
        return block, nxt is None or nxt.number != block[-1].number + 1

    def rest_of_block(self, last: int) -> Iterator[Row]:
        """The remaining contiguous rows after row number ``last``."""
        while True:
            nxt = self.peek()
            if nxt is None or nxt.number != last + 1:
                return
            last = nxt.number
            yield self.pop()


def layout(rows: Iterable[Row], unnamed: Callable[[int], str] = letter_name) -> Iterator[Event]:
    """The titles, key/value blocks, records and notes of one sheet, in sheet order.

    ``rows`` are the non-empty rows in order; ``unnamed`` names a column without a header.
    """
    stream = _Stream(rows)
    sheet = _Sheet(unnamed)
    while stream.peek() is not None:
        block, complete = stream.take_block(LOOKAHEAD)
        rest: Iterable[Row] = [] if complete else stream.rest_of_block(block[-1].number)
        yield from sheet.block(block, complete, rest)
    yield from _flush_titles(sheet.titles, [])


class _Sheet:
    """What :func:`layout` carries from one block of rows to the next: the open table, whose
    rows may go on after blank rows, and title rows waiting for the block they head.

    Each block is given as its first :data:`LOOKAHEAD` rows (``complete`` when that is all of
    it) and ``rest``, the stream of its remaining rows (empty when ``complete``).
    """

    def __init__(self, unnamed: Callable[[int], str]) -> None:
        self.unnamed = unnamed
        self.table: _Table | None = None
        self.titles: list[tuple[str, int]] = []

    def block(self, block: list[Row], complete: bool, rest: Iterable[Row]) -> Iterator[Event]:
        """The events of one block of contiguous rows."""
        if self.table is not None and _continues(self.table, block[0]):
            yield from self._records(chain(block, rest))
            return
        self.table = None
        single = _single_column(block)
        if single is not None:
            yield from _flush_titles(self.titles, [])
            self.table = _Table({single.cells[0].column: single.cells[0].text})
            yield from self._records(chain(block[1:], rest))
            return
        index = 0
        while index < len(block) and is_lone(block[index]):
            index += 1
        leading, body = block[:index], block[index:]
        if body:
            yield from self._body(leading, body, complete, rest)
        elif complete:
            self.titles.extend((row.cells[0].text, row.number) for row in leading)
        else:
            yield from _flush_titles(self.titles, [])
            for row in chain(block, rest):
                yield Note(escape_line(row.cells[0].text), row.number)

    def _body(
        self, leading: list[Row], body: list[Row], complete: bool, rest: Iterable[Row]
    ) -> Iterator[Event]:
        """A block's rows after its leading lone rows: key/value pairs, then a table."""
        count = _pair_count(body)
        pairs = body[:count]
        yield from _flush_titles(self.titles, leading)
        # A long, or all-words, two-column block is a table, not key/value pairs.
        two_column_table = count == len(body) and (
            not complete
            or count > MAX_KEY_VALUE_ROWS
            or (count > 1 and all(is_word(row.cells[1]) for row in pairs))
        )
        if pairs and not two_column_table:
            yield Record(tuple(pair_line(row) for row in pairs), pairs[0].number)
            body = body[count:]
            if not body:
                return
        if complete and is_vertical(body):
            yield from _vertical(body)
            return
        yield from self._table(body, rest)

    def _table(self, body: list[Row], rest: Iterable[Row]) -> Iterator[Event]:
        """A table: its header found among the first rows, then one record per data row."""
        found = find_header(body)
        columns = {c.column for row in body for c in row.cells}
        if found is None:
            names, leftovers = header_names(None, [], columns, self.unnamed)
            data = body
        else:
            names, leftovers = header_names(body[found], body[:found], columns, self.unnamed)
            data = body[found + 1 :]
        if leftovers:
            yield Title(" / ".join(dict.fromkeys(leftovers)), body[0].number)
        self.table = _Table(names)
        yield from self._records(chain(data, rest))

    def _records(self, rows: Iterable[Row]) -> Iterator[Event]:
        """One record per data row of the open table."""
        table = self.table
        assert table is not None
        for row in rows:
            yield from _data_row(table, row, self.unnamed)


def _pair_count(body: Sequence[Row]) -> int:
    """How many rows at the top of ``body`` are key/value pairs (a two-column table's header
    row is not one)."""
    count = 0
    while count < len(body) and is_pair(body[count]):
        count += 1
    if 0 < count < len(body) and _heads(body[count - 1], body[count]):
        count -= 1
    return count


def _heads(pair: Row, following: Row) -> bool:
    """Whether a two-word row sits over the same two columns as the row after it."""
    columns = [cell.column for cell in pair.cells]
    return text_count(pair) == 2 and [cell.column for cell in following.cells] == columns


def _single_column(rows: Sequence[Row]) -> Row | None:
    """The first row when ``rows`` are a one-column list (a header and values in one
    column, mostly not text), else ``None``."""
    if len(rows) < 3 or any(len(row.cells) != 1 or row.cells[0].span != 1 for row in rows):
        return None
    if len({row.cells[0].column for row in rows}) != 1 or rows[0].cells[0].kind != "text":
        return None
    non_text = sum(1 for row in rows[1:] if row.cells[0].kind != "text")
    return rows[0] if non_text * 2 >= len(rows) - 1 else None


def _continues(table: _Table, row: Row) -> bool:
    """Whether ``row``, after blank rows, still belongs to ``table``: the table has no data
    yet (a blank row under the header), or the row is plainly data in the table's columns
    (mostly numbers and dates, or words and numbers in the places of an earlier row)."""
    if is_lone(row) and row.cells[0].kind == "text":
        return False
    if table.rows == 0:
        return True
    inside = all(cell.column in table.names for cell in row.cells)
    return inside and (text_count(row) * 2 < len(row.cells) or signature(row) in table.shapes)


def _data_row(table: _Table, row: Row, unnamed: Callable[[int], str]) -> Iterator[Event]:
    if is_summary_row(row, table.kinds):
        lines = summary_lines(row, table.names, unnamed)
    else:
        lines = record_lines(row, table.names, unnamed)
        for cell in row.cells:
            table.kinds.setdefault(cell.column, Counter())[cell.kind] += 1
        if len(table.shapes) < 64:
            table.shapes.add(signature(row))
    if lines:
        table.rows += 1
        yield Record(tuple(lines), row.number)


def is_summary_row(row: Row, kinds: dict[int, Counter[Kind]]) -> bool:
    """Whether a row carries its own labels, as a totals row does (``作業日数 | 19``): a text
    cell in a column that has held only numbers or dates (at least three rows so far),
    followed by a value that does not fit its own column either."""
    for cell, following in zip(row.cells, row.cells[1:], strict=False):
        seen = kinds.get(cell.column)
        if cell.kind != "text" or not seen or seen.total() < 3 or seen["text"]:
            continue
        if following.kind == "text":
            continue
        others = kinds.get(following.column)
        if not others or not others[following.kind]:
            return True
    return False


def summary_lines(row: Row, names: dict[int, str], unnamed: Callable[[int], str]) -> list[str]:
    """A summary row's lines: each text cell labels the value cell right after it; other
    cells fall back to their column headers."""
    lines: list[str] = []
    cells = row.cells
    index = 0
    while index < len(cells):
        cell = cells[index]
        following = cells[index + 1] if index + 1 < len(cells) else None
        if cell.kind == "text" and following is not None and following.kind != "text":
            line = escape_line(f"{cell.text}: {dated(cell.text, following)}")
            index += 2
        else:
            name = names.get(cell.column) or unnamed(cell.column)
            line = escape_line(f"{name}: {dated(name, cell)}")
            index += 1
        if line not in lines:
            lines.append(line)
    return lines


def _flush_titles(titles: list[tuple[str, int]], leading: Sequence[Row]) -> Iterator[Event]:
    """Pending title rows (own blocks) and a block's leading lone rows: short ones become one
    heading, long ones (and everything from the first long one on) a note."""
    items = titles + [(row.cells[0].text, row.number) for row in leading]
    titles.clear()
    if not items:
        return
    heads: list[str] = []
    first_row = items[0][1]
    for position, (text, _) in enumerate(items):
        if not is_title_text(text):
            if heads:
                yield Title(" / ".join(dict.fromkeys(heads)), first_row)
            notes = items[position:]
            yield Note("\n".join(escape_line(t) for t, _ in notes), notes[0][1])
            return
        heads.append(text)
    yield Title(" / ".join(dict.fromkeys(heads)), first_row)


def _vertical(rows: Sequence[Row]) -> Iterator[Event]:
    """One record per value column of a transposed table; the locator row is the table's
    first row and ``column`` the record's column."""
    first = rows[0].cells[0].column
    columns = sorted({c.column for row in rows for c in row.cells if c.column != first})
    for column in columns:
        lines: list[str] = []
        for row in rows:
            label = row.cells[0].text
            cell = next((c for c in row.cells if c.column == column), None)
            if cell is not None:
                line = escape_line(f"{label}: {dated(label, cell)}")
                if line not in lines:
                    lines.append(line)
        if lines:
            yield Record(tuple(lines), rows[0].number, column)


def render(
    events: Iterable[Event],
    base_level: int,
    make_part: Callable[[str, int | None, int | None], None],
) -> None:
    """Feed ``make_part(text, row, column)`` with the Markdown of each event: titles as
    headings of ``base_level`` (trailing ``#`` guarded), records as ``key: value`` lines,
    notes as paragraphs."""
    level = min(base_level, 6)
    for event in events:
        if isinstance(event, Title):
            make_part(f"{'#' * level} {heading_text(event.text)}", event.row, None)
        elif isinstance(event, Record):
            make_part("\n".join(event.lines), event.row, event.column)
        else:
            make_part(event.text, event.row, None)


def heading_text(text: str) -> str:
    """``text`` as a one-line heading title."""
    return clean_text(text)
