"""Loader for Excel workbooks (``.xlsx``, ``.xlsm``): one record per data row.

Every worksheet is read, hidden ones too (a hidden sheet still holds the workbook's data,
and search should find it); chartsheets have no cells and empty sheets give nothing; the
macros of ``.xlsm`` files are never read. The sheet's structure (title rows, key/value
blocks, header rows, several tables per sheet) is found by
:func:`shirabe.loaders.tabular.layout.layout`.

Parts: ``# <workbook title>`` (the document title, else the file name), then per sheet a
``## <sheet name>`` part, ``### <title>`` parts for table titles that differ from the sheet
name, and one part per data row whose text is its ``header: value`` lines, located by
``{"sheet": name, "row": n}`` with ``n`` the row number Excel shows (a vertical table's
record also carries ``"column"``, its column letter).

Reading streams: openpyxl's read-only mode parses one row at a time, so memory stays bounded
on very large sheets. Read-only mode does not expose merged cells, so the merge ranges are
read separately by scanning the sheet XML for ``<mergeCell ref=...>`` (a second streamed pass
over the compressed member, holding only the ranges). A merged range's top-left value
applies to the whole range: across columns it counts as one wide cell, down rows it is
repeated in each row, except for a text area merged over several rows *and* columns (a
remarks box), which is read once.

Values: formulas give their cached results (``data_only``); a formula never calculated has no
cached value and is skipped, never shown as formula text. Error values (``#N/A``) are skipped.
Dates are ISO (time only when not midnight), numbers keep the decimals of their number format
and lose float noise, booleans read ``TRUE``/``FALSE``. Furigana (``<rPh>`` phonetic runs in
shared or inline strings) are not part of the text: openpyxl 3.1 reads only the ``<t>`` of
the string and its rich-text runs, which the tests check with a generated workbook.
"""

from __future__ import annotations

import logging
import re
import warnings
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from shirabe.loaders.ooxml import check_package
from shirabe.loaders.protocol import LoadError, LoadOptions, describe_error, report_progress
from shirabe.loaders.tabular.layout import Title, heading_text, layout, render
from shirabe.loaders.tabular.rows import Cell, Row
from shirabe.loaders.tabular.values import column_letter, format_value, letter_name
from shirabe.records import Document, Locator, Part

logger = logging.getLogger(__name__)

_MERGE = re.compile(
    rb'<(?:[A-Za-z0-9_]+:)?mergeCell\b[^>]*?\bref="([A-Za-z]+\d+(?::[A-Za-z]+\d+)?)"'
)
_REF = re.compile(r"([A-Za-z]+)(\d+)")
_CHUNK = 1 << 20
_OVERLAP = 512

Merge = tuple[int, int, int, int]
"""``(min_row, min_col, max_row, max_col)``, 1-based and inclusive."""


class XlsxLoader:
    """Excel workbooks as one Markdown part per data row, with sheet and row locators."""

    extensions: ClassVar[tuple[str, ...]] = (".xlsx", ".xlsm")

    def load(self, path: Path, options: LoadOptions) -> Document:
        check_package(path, max_unzipped_bytes=options.max_unzipped_bytes, part="xl/workbook.xml")
        try:
            import openpyxl
        except ImportError as exc:
            raise LoadError(path, "needs openpyxl: pip install 'shirabe[office]'") from exc
        try:
            with warnings.catch_warnings():
                # openpyxl warns about parts it does not read (data validation extensions,
                # conditional formatting, unknown defined names); they carry no cell text.
                warnings.filterwarnings("ignore", category=UserWarning, module=r"openpyxl\.")
                workbook = openpyxl.load_workbook(
                    path, read_only=True, data_only=True, keep_links=False
                )
                try:
                    return _read(path, workbook)
                finally:
                    workbook.close()
        except LoadError:
            raise
        except Exception as exc:
            logger.debug("cannot read %s", path, exc_info=True)
            reason = f"corrupt or unreadable Excel file ({describe_error(exc)})"
            raise LoadError(path, reason) from exc


def _read(path: Path, workbook: Any) -> Document:
    title = (getattr(workbook.properties, "title", None) or "").strip() or path.stem
    parts = [Part(f"# {heading_text(title)}")]
    warnings_: list[str] = []
    with zipfile.ZipFile(path) as archive:
        for sheet in workbook.worksheets:
            name = str(sheet.title)
            member = getattr(sheet, "_worksheet_path", None)
            merges = _merges(archive, member) if isinstance(member, str) else []
            if sheet.sheet_state != "visible":
                logger.debug("%s: sheet %s is %s; read anyway", path, name, sheet.sheet_state)
            sheet.reset_dimensions()
            before = len(parts)
            _sheet_parts(name, _rows(sheet, merges), parts, title)
            logger.debug("%s: sheet %s gave %d parts", path, name, len(parts) - before)
    if len(parts) == 1:
        warnings_.append("no cell text in any sheet")
    return Document(path=str(path), parts=parts, title=title, warnings=warnings_)


def _sheet_parts(name: str, rows: Iterator[Row], parts: list[Part], book_title: str) -> None:
    """Append the sheet heading (only once the sheet proves non-empty) and its records; a
    table title that repeats the sheet name or the workbook title is not repeated."""
    started = False

    def add(text: str, row: int | None, column: int | None) -> None:
        nonlocal started
        if not started:
            parts.append(Part(f"## {heading_text(name)}", {"sheet": name}))
            started = True
        locator: Locator = {"sheet": name}
        if row is not None:
            locator["row"] = row
        if column is not None:
            locator["column"] = column_letter(column)
        parts.append(Part(text, locator))

    shown = {heading_text(name), heading_text(book_title)}
    events = (
        event
        for event in layout(rows, letter_name)
        if not (isinstance(event, Title) and heading_text(event.text) in shown)
    )
    render(events, 3, add)


def _rows(sheet: Any, merges: list[Merge]) -> Iterator[Row]:
    """The sheet's non-empty rows with merged ranges applied (see the module docstring)."""
    starts: dict[tuple[int, int], Merge] = {(m[0], m[1]): m for m in merges}
    active: list[tuple[Merge, Cell | None]] = []
    number = 0
    for raw in sheet.iter_rows(min_row=1):
        number += 1
        report_progress()
        for cell in raw:
            row_attr = getattr(cell, "row", None)
            if isinstance(row_attr, int):
                number = row_attr
                break
        active = [(m, c) for m, c in active if m[2] >= number]
        skip: list[tuple[int, int]] = [(m[1], m[3]) for m, _ in active]
        carried = [c for _, c in active if c is not None]
        cells: list[Cell] = []
        for cell in raw:
            column = getattr(cell, "column", None)
            if not isinstance(column, int):
                continue
            if any(lo <= column <= hi for lo, hi in skip):
                continue
            merge = starts.get((number, column))
            if merge is not None:
                skip.append((merge[1], merge[3]))
            if getattr(cell, "data_type", None) == "e":
                continue
            formatted = format_value(cell.value, cell.number_format or "General")
            if formatted is None:
                continue
            span = merge[3] - merge[1] + 1 if merge else 1
            made = Cell(column, formatted[0], formatted[1], span)
            cells.append(made)
            if merge is not None and merge[2] > merge[0]:
                repeat = merge[1] == merge[3] or made.kind != "text"
                active.append((merge, made if repeat else None))
        cells.extend(carried)
        if cells:
            cells.sort(key=lambda c: c.column)
            yield Row(number, tuple(cells))


def _merges(archive: zipfile.ZipFile, member: str) -> list[Merge]:
    """The merged ranges of a sheet, scanned from its XML in bounded memory."""
    found: list[Merge] = []
    try:
        with archive.open(member.lstrip("/")) as fh:
            pending = b""
            while chunk := fh.read(_CHUNK):
                buffer = pending + chunk
                cut = max(0, len(buffer) - _OVERLAP)
                position = 0
                for match in _MERGE.finditer(buffer):
                    if match.start() >= cut:
                        break
                    found.append(_range(match[1].decode("ascii")))
                    position = match.end()
                pending = buffer[max(position, cut) :]
            found.extend(_range(m[1].decode("ascii")) for m in _MERGE.finditer(pending))
    except KeyError:
        logger.debug("sheet part %s missing; no merges", member)
    return found


def _range(ref: str) -> Merge:
    first, _, last = ref.partition(":")
    a = _REF.fullmatch(first)
    b = _REF.fullmatch(last or first)
    if a is None or b is None:
        raise ValueError(f"bad merge range {ref!r}")
    rows = sorted((int(a[2]), int(b[2])))
    cols = sorted((_column_number(a[1]), _column_number(b[1])))
    return rows[0], cols[0], rows[1], cols[1]


def _column_number(letters: str) -> int:
    number = 0
    for ch in letters.upper():
        number = number * 26 + ord(ch) - 64
    return number
