"""Turning spreadsheet-like rows (Excel sheets, CSV files) into searchable records.

Both the Excel and the CSV loader read their file into :class:`Row` objects (only non-empty
cells, each already formatted as text) and hand them to :func:`layout`, which finds the
structure a person sees in the sheet and yields :class:`Event` objects:

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

import datetime as dt
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Literal

Kind = Literal["text", "number", "date", "bool"]

LOOKAHEAD = 12
"""Rows of a block held in memory to decide its header and whether it is vertical."""
HEADER_SEARCH = 5
"""How many rows, from the first non-title, non-key/value row, may hold the header."""
MAX_KEY_VALUE_ROWS = 10
"""A longer block of two-cell rows is a two-column table, one record per row."""
MAX_TITLE_CHARS = 60
"""Longer lone cells are notes, not titles."""

_SPACE = re.compile(r"\s+")
_NUMBER = re.compile(r"[-+−]?[¥$€£]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?%?|[-+]?\.\d+%?")
_DATE = re.compile(
    r"(?:\d{4}[-/.年]\d{1,2}(?:[-/.月]\d{1,2}日?)?|\d{1,2}[/月]\d{1,2}日?|\d{1,2}:\d{2}(?::\d{2})?)"
    r"(?:[ T]\d{1,2}:\d{2}(?::\d{2})?)?"
)
_DECIMALS = re.compile(r"0\.(0+)")
_QUOTED = re.compile(r'"[^"]*"|\\.|\[[^\]]*\]')
_MARKDOWN_START = re.compile(r"\s*(?:#|\||```|~~~)")
_DATE_KEY = re.compile(r"年月|年月日|日付|期日|生年月日|(?i:date)")
_EXCEL_EPOCH = dt.datetime(1899, 12, 30)


@dataclass(frozen=True, slots=True)
class Cell:
    """One non-empty cell: its first column (1-based), its text, its kind, its merge width."""

    column: int
    text: str
    kind: Kind = "text"
    span: int = 1


@dataclass(frozen=True, slots=True)
class Row:
    """The non-empty cells of one row, in column order; ``number`` is 1-based."""

    number: int
    cells: tuple[Cell, ...]


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


# ---------------------------------------------------------------- values


def clean_text(text: str) -> str:
    """``text`` on one line: whitespace runs (line breaks too) become one space."""
    return _SPACE.sub(" ", text).strip()


def escape_line(line: str) -> str:
    """``line`` with a leading backslash when it would otherwise read as Markdown structure
    (a heading, a pipe table row, a code fence)."""
    return "\\" + line if _MARKDOWN_START.match(line) else line


def infer_kind(text: str) -> Kind:
    """The kind of a cell given only its text (CSV): number, date, boolean or text."""
    stripped = text.strip()
    if _NUMBER.fullmatch(stripped):
        return "number"
    if _DATE.fullmatch(stripped):
        return "date"
    if stripped.upper() in {"TRUE", "FALSE"}:
        return "bool"
    return "text"


def format_number(value: float, number_format: str = "General") -> str:
    """A number as a person reads it in the sheet, without binary float noise.

    Integral values lose their ``.0``; percentages (``0.0%``) are scaled and rounded to the
    format's decimals; a format with fixed decimals (``0.00``, ``#,##0.0``, ``0_``) rounds
    to them; anything else keeps 15 significant digits, which turns 0.30000000000000004
    back into 0.3. Thousands separators and currency signs are not added: the digits are
    what a search matches.
    """
    if math.isnan(value) or math.isinf(value):
        return str(value)
    fmt = _QUOTED.sub("", number_format.split(";", maxsplit=1)[0]) if number_format else ""
    percent = "%" in fmt
    if percent:
        value *= 100
    decimals: int | None = None
    if fmt and fmt.lower() != "general" and ("0" in fmt or "#" in fmt):
        match = _DECIMALS.search(fmt)
        decimals = len(match[1]) if match else 0
    if decimals is not None:
        text = f"{value:.{decimals}f}"
        if text.startswith("-") and float(text) == 0:
            text = text[1:]
    else:
        text = _general(value)
    return text + "%" if percent else text


def _general(value: float) -> str:
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.15g}"


def format_datetime(value: dt.datetime | dt.date | dt.time | dt.timedelta) -> str:
    """ISO dates (``2024-04-01``), with the time only when it is not midnight; times as
    ``9:00``; durations as total hours (``158:00``, as Excel's ``[h]:mm``)."""
    if isinstance(value, dt.datetime):
        if value.time() == dt.time(0):
            return value.date().isoformat()
        return f"{value.date().isoformat()} {_clock(value.time())}"
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, dt.time):
        return _clock(value)
    seconds = round(value.total_seconds())
    sign = "-" if seconds < 0 else ""
    hours, rest = divmod(abs(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    return f"{sign}{hours}:{minutes:02d}" + (f":{secs:02d}" if secs else "")


def _clock(value: dt.time) -> str:
    text = f"{value.hour}:{value.minute:02d}"
    return text + f":{value.second:02d}" if value.second else text


def format_value(value: object, number_format: str = "General") -> tuple[str, Kind] | None:
    """A cell value as ``(text, kind)``, or ``None`` when the cell shows nothing."""
    if value is None:
        return None
    if isinstance(value, bool):
        return ("TRUE" if value else "FALSE"), "bool"
    if isinstance(value, int | float):
        return format_number(value, number_format), "number"
    if isinstance(value, dt.datetime | dt.date | dt.time | dt.timedelta):
        return format_datetime(value), "date"
    text = clean_text(str(value))
    return (text, "text") if text else None


def serial_to_date(serial: float) -> str | None:
    """An Excel date serial (days since 1899-12-30) as an ISO date, if it is plausible
    (1950 to 2100); used only for values under a header that names a date."""
    if not 18264 <= serial <= 73415:
        return None
    return format_datetime(_EXCEL_EPOCH + dt.timedelta(days=serial))


def names_a_date(header: str) -> bool:
    """Whether a header or key says its values are dates (``対象年月``, ``日付``, ``Date``)."""
    return bool(_DATE_KEY.search(header))


def column_letter(column: int) -> str:
    """``1`` → ``A``, ``27`` → ``AA``."""
    letters = ""
    while column > 0:
        column, rest = divmod(column - 1, 26)
        letters = chr(65 + rest) + letters
    return letters


def letter_name(column: int) -> str:
    """The name of a column without a header in a sheet: ``列C``."""
    return f"列{column_letter(column)}"


def number_name(column: int) -> str:
    """The name of a column without a header in a CSV file: ``列3``."""
    return f"列{column}"


# ---------------------------------------------------------------- row shapes


def distinct_texts(row: Row) -> list[str]:
    return list(dict.fromkeys(cell.text for cell in row.cells))


def is_lone(row: Row) -> bool:
    """One value in the row: a lone cell, or one value merged or repeated across it."""
    return len(distinct_texts(row)) == 1


def is_pair(row: Row) -> bool:
    """A key/value row: two adjacent cells, the first one text."""
    if len(row.cells) != 2:
        return False
    key, value = row.cells
    return key.kind == "text" and value.column == key.column + key.span and key.text != value.text


def text_count(row: Row) -> int:
    """Cells that read as words: text, and not digits stored as text (``090``)."""
    return sum(1 for cell in row.cells if _is_word(cell))


def is_title_text(text: str) -> bool:
    """Whether a lone cell reads as a title: short and not a sentence (no 。, no final .)."""
    return len(text) <= MAX_TITLE_CHARS and "。" not in text and not text.endswith(".")


def pair_line(row: Row) -> str:
    key, value = row.cells
    return escape_line(f"{key.text}: {_dated(key.text, value)}")


def _dated(header: str, cell: Cell) -> str:
    """The cell's text, or a date when a date-named column holds a bare serial number."""
    if cell.kind == "number" and names_a_date(header):
        try:
            date = serial_to_date(float(cell.text))
        except ValueError:
            date = None
        if date is not None and float(cell.text).is_integer():
            return date
    return cell.text


def find_header(rows: Sequence[Row]) -> int | None:
    """Index in ``rows`` of the header row, or ``None`` when the table starts with data.

    The header is the row with the most text cells (at least two, and at least half its
    cells) among the first :data:`HEADER_SEARCH` rows; between rows with as many, the one
    covering more columns (merged cells count their width), then the earliest.
    """
    best: int | None = None
    best_score = (1, 0)
    for index in range(min(len(rows), HEADER_SEARCH)):
        row = rows[index]
        count = text_count(row)
        score = (count, sum(cell.span for cell in row.cells))
        if count < 2 or score <= best_score or count * 2 < len(row.cells):
            continue
        neighbours = [*rows[max(0, index - 1) : index], *rows[index + 1 : index + 2]]
        if count < len(row.cells) and any(_signature(n) == _signature(row) for n in neighbours):
            continue  # numbers in the same places as a neighbour: data, not a header
        best, best_score = index, score
    return best


def _is_word(cell: Cell) -> bool:
    return cell.kind == "text" and infer_kind(cell.text) == "text"


def _signature(row: Row) -> tuple[tuple[int, bool], ...]:
    return tuple((cell.column, _is_word(cell)) for cell in row.cells)


def header_names(
    header: Row | None,
    above: Sequence[Row],
    columns: Iterable[int],
    unnamed: Callable[[int], str],
) -> tuple[dict[int, str], list[str]]:
    """Column → name for every column in ``columns`` and the header's span, and the texts of
    ``above`` (rows between the titles and the header) not used as names.

    An empty header cell takes the text straight above it in ``above`` (nearest row first),
    else ``unnamed(column)``. Repeated names get `` (2)``, `` (3)`` except across one merge.
    """
    names: dict[int, str] = {}
    if header is not None:
        for cell in header.cells:
            for column in range(cell.column, cell.column + cell.span):
                names[column] = cell.text
    used: set[tuple[int, int]] = set()
    wanted = sorted(set(columns) | set(names))
    for column in wanted:
        if column in names:
            continue
        for index in range(len(above) - 1, -1, -1):
            hit = next((c for c in above[index].cells if c.column == column), None)
            if hit is not None:
                names[column] = hit.text
                used.add((index, column))
                break
        else:
            names[column] = unnamed(column)
    leftovers = [
        cell.text
        for index, row in enumerate(above)
        for cell in row.cells
        if (index, cell.column) not in used
    ]
    return _deduplicate(names, header), leftovers


def _deduplicate(names: dict[int, str], header: Row | None) -> dict[int, str]:
    spans: dict[int, int] = {}
    if header is not None:
        for cell in header.cells:
            for column in range(cell.column, cell.column + cell.span):
                spans[column] = cell.column
    seen: Counter[str] = Counter()
    owner: dict[str, int] = {}
    result: dict[int, str] = {}
    for column in sorted(names):
        name = names[column]
        origin = spans.get(column, column)
        if name in owner and owner[name] == origin:
            result[column] = name
            continue
        seen[name] += 1
        owner[name] = origin
        result[column] = name if seen[name] == 1 else f"{name} ({seen[name]})"
    return result


def record_lines(row: Row, names: dict[int, str], unnamed: Callable[[int], str]) -> list[str]:
    """``header: value`` lines of a data row; empty cells are skipped, the values of the
    columns under one merged header are joined with spaces, repeated lines kept once."""
    grouped: dict[str, list[str]] = {}
    for cell in row.cells:
        name = names.get(cell.column) or unnamed(cell.column)
        grouped.setdefault(name, []).append(_dated(name, cell))
    lines: list[str] = []
    for name, values in grouped.items():
        line = escape_line(f"{name}: {' '.join(values)}")
        if line not in lines:
            lines.append(line)
    return lines


def is_vertical(rows: Sequence[Row]) -> bool:
    """Whether a small table reads down its columns: distinct text labels in its first
    column, and more rows than columns holding one kind of value each (right of the
    labels) than columns holding one kind each (below the first row)."""
    if len(rows) < 2:
        return False
    first = min(cell.column for row in rows for cell in row.cells)
    labels = [row.cells[0] for row in rows]
    if any(c.column != first or c.kind != "text" for c in labels):
        return False
    if len({c.text for c in labels}) != len(labels):
        return False
    body_columns = sorted({c.column for row in rows for c in row.cells if c.column != first})
    if len(body_columns) < 2:
        return False
    row_uniform = sum(
        1 for row in rows if len({c.kind for c in row.cells if c.column != first}) <= 1
    )
    col_uniform = sum(
        1
        for column in body_columns
        if len({c.kind for row in rows[1:] for c in row.cells if c.column == column}) <= 1
    )
    return row_uniform / len(rows) > col_uniform / len(body_columns)


# ---------------------------------------------------------------- layout


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
    table: _Table | None = None
    titles: list[tuple[str, int]] = []
    while stream.peek() is not None:
        block, complete = stream.take_block(LOOKAHEAD)
        rest: Iterable[Row] = [] if complete else stream.rest_of_block(block[-1].number)
        if table is not None and _continues(table, block[0]):
            for row in chain(block, rest):
                yield from _data_row(table, row, unnamed)
            continue
        table = None
        single = _single_column(block)
        if single is not None:
            yield from _flush_titles(titles, [])
            table = _Table({single.cells[0].column: single.cells[0].text})
            for row in chain(block[1:], rest):
                yield from _data_row(table, row, unnamed)
            continue
        index = 0
        while index < len(block) and is_lone(block[index]):
            index += 1
        leading, body = block[:index], block[index:]
        if not body:
            if complete:
                titles.extend((row.cells[0].text, row.number) for row in leading)
                continue
            yield from _flush_titles(titles, [])
            for row in chain(block, rest):
                yield Note(escape_line(row.cells[0].text), row.number)
            continue
        count = 0
        while count < len(body) and is_pair(body[count]):
            count += 1
        if 0 < count < len(body) and _heads(body[count - 1], body[count]):
            count -= 1  # a two-column table's header, not a key/value pair
        pairs = body[:count]
        yield from _flush_titles(titles, leading)
        if count == len(body) and (
            not complete
            or count > MAX_KEY_VALUE_ROWS
            or (count > 1 and all(_is_word(row.cells[1]) for row in pairs))
        ):
            pairs = []  # a long, or all-words, two-column block is a table
        elif pairs:
            yield Record(tuple(pair_line(row) for row in pairs), pairs[0].number)
            body = body[count:]
            if not body:
                continue
        if complete and is_vertical(body):
            yield from _vertical(body)
            continue
        found = find_header(body)
        columns = {c.column for row in body for c in row.cells}
        if found is None:
            names, leftovers = header_names(None, [], columns, unnamed)
            data = body
        else:
            names, leftovers = header_names(body[found], body[:found], columns, unnamed)
            data = body[found + 1 :]
        if leftovers:
            yield Title(" / ".join(dict.fromkeys(leftovers)), body[0].number)
        table = _Table(names)
        for row in chain(data, rest):
            yield from _data_row(table, row, unnamed)
    yield from _flush_titles(titles, [])


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
    return inside and (text_count(row) * 2 < len(row.cells) or _signature(row) in table.shapes)


def _data_row(table: _Table, row: Row, unnamed: Callable[[int], str]) -> Iterator[Event]:
    if is_summary_row(row, table.kinds):
        lines = summary_lines(row, table.names, unnamed)
    else:
        lines = record_lines(row, table.names, unnamed)
        for cell in row.cells:
            table.kinds.setdefault(cell.column, Counter())[cell.kind] += 1
        if len(table.shapes) < 64:
            table.shapes.add(_signature(row))
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
            line = escape_line(f"{cell.text}: {_dated(cell.text, following)}")
            index += 2
        else:
            name = names.get(cell.column) or unnamed(cell.column)
            line = escape_line(f"{name}: {_dated(name, cell)}")
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
                line = escape_line(f"{label}: {_dated(label, cell)}")
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


# ---------------------------------------------------------------- delimited text

DELIMITERS = (",", "\t", ";", "|")
_SNIFF_RECORDS = 50


def sniff_delimiter(
    sample: str, candidates: Sequence[str] = DELIMITERS, *, complete: bool = True
) -> str:
    """The field delimiter of delimited text, from a sample of its first lines.

    Each candidate splits the sample with the real CSV grammar (quotes, doubled quotes,
    quoted line breaks); the winner gives the most records with the commonest field count
    (more than one field), then the most fields; the earlier candidate (comma) wins ties,
    and also a sample no candidate splits. Unless ``complete`` (the sample is the whole
    file), the sample's last record may be cut short and is not counted.
    """
    import csv
    import io

    best = (0, 0)
    winner = candidates[0] if candidates else ","
    for delimiter in candidates:
        reader = csv.reader(io.StringIO(sample), delimiter=delimiter)
        try:
            counts = [len(r) for _, r in zip(range(_SNIFF_RECORDS + 1), reader, strict=False) if r]
        except csv.Error:
            continue
        if len(counts) > _SNIFF_RECORDS or (not complete and len(counts) > 1):
            counts.pop()
        if not counts:
            continue
        width, hits = Counter(counts).most_common(1)[0]
        if width >= 2 and (hits, width) > best:
            best, winner = (hits, width), delimiter
    return winner
