"""Loader for delimited text (``.csv``, ``.tsv``): one record per data row.

The encoding is detected on the first 64 KiB (BOMs, UTF-8, CP932 — a superset of Shift_JIS
that also decodes 髙 and other vendor kanji —, EUC-JP, UTF-16) by :mod:`shirabe.text.encoding`, then
the file is decoded as a stream; if a later byte contradicts the guess, the whole file is
decoded once with full detection instead. The delimiter of ``.tsv`` files is the tab; for
``.csv`` it is sniffed among comma, tab, semicolon and pipe
(:func:`shirabe.loaders.tabular.delimited.sniff_delimiter`). No header cell keeps a byte-order
mark.

The structure (title lines above the header, key/value lines, the header row, several
tables separated by blank lines) is found by :func:`shirabe.loaders.tabular.layout.layout`; a
file whose first row is already data gets column names ``列1`` … ``列n``.

Parts: ``# <file name without suffix>``, ``## <title>`` for title lines, then one part per
data row with its ``header: value`` lines, located by ``{"row": n}``: ``n`` is the 1-based
record number (the header record is 1, the first data record usually 2), which is the row
number Excel shows when it opens the file, even when quoted fields span several lines.
Rows are streamed: only the parts are kept, never the whole file's text.

This module's name does not shadow the standard library: absolute imports (``import csv``
here) resolve to the standard ``csv`` module, and the package is never on ``sys.path``.
"""

from __future__ import annotations

import codecs
import csv
import io
import logging
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import ClassVar, TextIO

from shirabe.loaders.protocol import LoadError, LoadOptions, read_failure, report_progress
from shirabe.loaders.tabular.delimited import sniff_delimiter
from shirabe.loaders.tabular.layout import heading_text, layout, render
from shirabe.loaders.tabular.rows import Cell, Row
from shirabe.loaders.tabular.values import clean_text, infer_kind, number_name
from shirabe.records import Document, Locator, Part
from shirabe.text.encoding import EncodingError, decode_bytes, detect_encoding

logger = logging.getLogger(__name__)

_SAMPLE_BYTES = 64 * 1024


class CsvLoader:
    """CSV and TSV files as one Markdown part per data row, with row locators."""

    extensions: ClassVar[tuple[str, ...]] = (".csv", ".tsv")

    def load(self, path: Path, options: LoadOptions) -> Document:
        title = path.stem
        tab = path.suffix.lower() == ".tsv"
        try:
            with path.open("rb") as raw:
                sample = raw.read(_SAMPLE_BYTES)
                whole = len(sample) < _SAMPLE_BYTES
                codec = _detect(path, sample, whole)
                raw.seek(0)
                text = io.TextIOWrapper(raw, encoding=codec, errors="strict", newline="")
                try:
                    parts = _parts(text, title, tab)
                except UnicodeDecodeError as exc:
                    logger.debug("%s: %s guess failed (%s); decoding whole file", path, codec, exc)
                    raw.seek(0)
                    decoded = _decode(path, raw.read())
                    parts = _parts(io.StringIO(decoded, newline=""), title, tab)
        except LoadError:
            raise
        except csv.Error as exc:
            raise LoadError(path, f"malformed delimited text ({exc})") from exc
        except OSError as exc:
            raise read_failure(path, exc) from exc
        warnings = [] if len(parts) > 1 else ["empty file"]
        return Document(path=str(path), parts=parts, title=title, warnings=warnings)


def _detect(path: Path, sample: bytes, whole: bool) -> str:
    """The codec for the file whose first bytes are ``sample``; a sample cut in the middle
    of the file is trimmed to its last line break so no character is cut in two."""
    probe = sample
    if not whole and b"\x00" not in sample:
        cut = sample.rfind(b"\n")
        if cut > 0:
            probe = sample[: cut + 1]
    elif not whole:
        probe = sample[: len(sample) - len(sample) % 4]
    try:
        codec = detect_encoding(probe)
    except EncodingError as exc:
        raise LoadError(path, exc.reason) from exc
    if codec == "utf-8" and probe.startswith(codecs.BOM_UTF8):
        codec = "utf-8-sig"
    return codec


def _decode(path: Path, data: bytes) -> str:
    try:
        return decode_bytes(data, str(path))
    except EncodingError as exc:
        raise LoadError(path, exc.reason) from exc


def _parts(text: TextIO, title: str, tab: bool) -> list[Part]:
    """Parts of the file behind ``text``: the title part, then the layout's events."""
    sample = text.read(_SAMPLE_BYTES)
    complete = not text.read(1)
    text.seek(0)
    delimiter = "\t" if tab else sniff_delimiter(sample, complete=complete)
    logger.debug("delimiter %r", delimiter)
    parts = [Part(f"# {heading_text(title)}")]

    def add(body: str, row: int | None, column: int | None) -> None:
        locator: Locator = {}
        if row is not None:
            locator["row"] = row
        if column is not None:
            locator["column"] = column
        parts.append(Part(body, locator))

    render(layout(_rows(csv.reader(text, delimiter=delimiter)), number_name), 2, add)
    return parts


def _rows(records: Iterable[list[str]]) -> Iterator[Row]:
    """Non-empty records as rows numbered from 1; blank records leave gaps."""
    for number, record in enumerate(records, start=1):
        report_progress()
        cells: list[Cell] = []
        for column, field in enumerate(record, start=1):
            value = clean_text(field.lstrip("\ufeff") if number == 1 else field)
            if value:
                cells.append(Cell(column, value, infer_kind(value)))
        if cells:
            yield Row(number, tuple(cells))
