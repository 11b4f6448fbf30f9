"""Rows of non-empty cells and what their shapes say: titles, key/value pairs, headers,
records of ``header: value`` lines, tables that read down their columns."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from shirabe.loaders.tabular.values import Kind, infer_kind, names_a_date, serial_to_date
from shirabe.text.markdown import escape_line

HEADER_SEARCH = 5
"""How many rows, from the first non-title, non-key/value row, may hold the header."""
MAX_TITLE_CHARS = 60
"""Longer lone cells are notes, not titles."""


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
    return sum(1 for cell in row.cells if is_word(cell))


def is_title_text(text: str) -> bool:
    """Whether a lone cell reads as a title: short and not a sentence (no 。, no final .)."""
    return len(text) <= MAX_TITLE_CHARS and "。" not in text and not text.endswith(".")


def pair_line(row: Row) -> str:
    key, value = row.cells
    return escape_line(f"{key.text}: {dated(key.text, value)}")


def dated(header: str, cell: Cell) -> str:
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
        if count < len(row.cells) and any(signature(n) == signature(row) for n in neighbours):
            continue  # numbers in the same places as a neighbour: data, not a header
        best, best_score = index, score
    return best


def is_word(cell: Cell) -> bool:
    """Whether a cell reads as a word: text, and not digits stored as text."""
    return cell.kind == "text" and infer_kind(cell.text) == "text"


def signature(row: Row) -> tuple[tuple[int, bool], ...]:
    """Where a row's cells sit and which of them are words; data rows of a table share it."""
    return tuple((cell.column, is_word(cell)) for cell in row.cells)


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
        grouped.setdefault(name, []).append(dated(name, cell))
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
