"""One page's text: from pdfplumber's text layer (tables as pipe tables, two columns read
one after the other, vertical Japanese through pdfminer's layout analysis), from pypdf when
that reads the page better, or a request for OCR when neither gives real text."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from shirabe.loaders.pdf.layout import Box, column_regions, find_gutter, is_vertical
from shirabe.loaders.pdf.lines import (
    HeadingTracker,
    Line,
    body_size,
    close_cjk_spaces,
    heading_kind,
    join_text,
    lines_to_markdown,
)
from shirabe.loaders.pdf.quality import text_quality
from shirabe.text.markdown import markdown_table

logger = logging.getLogger(__name__)

X_TOLERANCE = 1.5
"""Gap (pt) that separates words; pdfplumber's 3 glues tightly set Latin words together."""


@dataclass(slots=True)
class PageResult:
    """A page's Markdown, or why it needs OCR; ``title`` is a title found at the top of page 1."""

    markdown: str = ""
    needs_ocr: bool = False
    reason: str = ""
    title: str | None = None


def page_text(
    page: Any, index: int, reader: Any, tracker: HeadingTracker, *, want_title: bool
) -> PageResult:
    """Markdown of pdfplumber's ``page`` (number ``index + 1``) from its text layer, or a request
    for OCR; ``reader`` is the document's pypdf reader (``None`` when pypdf cannot open it)."""
    raw = page.extract_text() or ""
    quality = text_quality(raw)
    if not quality.usable:
        fallback = fallback_text(reader, index, tracker)
        if fallback is not None:
            return fallback
        if quality.visible >= 3:
            reason = "unreadable text layer: " + ", ".join(quality.reasons)
            return PageResult(needs_ocr=True, reason=reason)
        if page.images or len(page.curves) + len(page.rects) > 50:
            return PageResult(needs_ocr=True, reason="no text layer")
        return PageResult()
    if quality.visible < 200:
        fallback = fallback_text(reader, index, tracker)
        if fallback is not None and _visible(fallback.markdown) >= 2 * quality.visible + 20:
            return fallback
    glyphs = [Box(c["x0"], c["top"], c["x1"], c["bottom"]) for c in page.chars]
    if is_vertical(glyphs):
        return PageResult(markdown=_vertical_text(page, tracker))
    return _horizontal_text(page, tracker, want_title=want_title)


def _visible(text: str) -> int:
    return sum(not ch.isspace() for ch in text)


def fallback_text(reader: Any, index: int, tracker: HeadingTracker) -> PageResult | None:
    """Page ``index + 1`` as pypdf's ``reader`` reads it, when that is clean text; ``None``
    otherwise."""
    if reader is None:
        return None
    try:
        text = reader.pages[index].extract_text() or ""
    except Exception:
        logger.debug("pypdf cannot read page %s", index + 1, exc_info=True)
        return None
    if not text_quality(text).usable:
        return None
    lines = [
        Line(text=ln, x0=0.0, top=i * 12.0, x1=1000.0, bottom=i * 12.0 + 10.0)
        for i, ln in enumerate(text.splitlines())
    ]
    lines = [ln for ln in lines if ln.text.strip()]
    blocks = lines_to_markdown(lines, tracker, size=0.0)
    return PageResult(markdown="\n\n".join(blocks))


def _vertical_text(page: Any, tracker: HeadingTracker) -> str:
    """縦書き text in reading order: pdfminer's layout analysis with ``detect_vertical``.

    Every text box becomes one paragraph; its column breaks are joined like line breaks.
    """
    from pdfminer.converter import PDFPageAggregator
    from pdfminer.layout import LAParams, LTTextBox
    from pdfminer.pdfinterp import PDFPageInterpreter, PDFResourceManager

    manager = PDFResourceManager()
    device = PDFPageAggregator(manager, laparams=LAParams(detect_vertical=True))
    PDFPageInterpreter(manager, device).process_page(page.page_obj)
    layout = device.get_result()
    blocks: list[str] = []
    for box in layout:
        if not isinstance(box, LTTextBox):
            continue
        text = ""
        for line in box.get_text().splitlines():
            text = join_text(text, line) if text else line.strip()
        text = close_cjk_spaces(text)
        if not text_quality(text).usable:
            continue
        kind = heading_kind(Line(text, 0, 0, 0, 0), 0.0)
        blocks.append("#" * tracker.level(kind) + " " + text if kind else text)
    device.close()
    return "\n\n".join(blocks)


def _horizontal_text(page: Any, tracker: HeadingTracker, *, want_title: bool) -> PageResult:
    """Tables as pipe tables, the rest as paragraphs, two columns read one after the other."""
    tables = [t for t in page.find_tables() if _is_real_table(t)]
    boxes = [t.bbox for t in tables]
    body = page.filter(_outside(boxes, drop_rotated=_mostly_upright(page.chars)))
    words = body.extract_words(x_tolerance=X_TOLERANCE)
    word_boxes = [Box(w["x0"], w["top"], w["x1"], w["bottom"]) for w in words]
    page_box = Box(*page.bbox)
    gutter = find_gutter(word_boxes, page.width)
    if gutter is None:
        regions = [page_box]
    else:
        spanning = word_boxes
        regions = column_regions(spanning, gutter, page_box)
    lines: list[Line] = []
    for region in regions:
        sub = body.filter(_centred_in(region)) if gutter is not None else body
        for item in sub.extract_text_lines(return_chars=True, x_tolerance=X_TOLERANCE):
            sizes = sorted(c.get("size", 0.0) for c in item["chars"])
            size = sizes[len(sizes) // 2] if sizes else 0.0
            lines.append(
                Line(item["text"], item["x0"], item["top"], item["x1"], item["bottom"], size)
            )
    size = body_size(lines)
    title: str | None = None
    if want_title:
        title = _first_line_title(lines, size)
        if title is not None:
            lines = [ln for ln in lines if ln.text.strip() != title]
    sequence: list[Line | str] = list(lines)
    for table, bbox in sorted(zip(tables, boxes, strict=True), key=lambda tb: tb[1][1]):
        rendered = markdown_table(_table_rows(table))
        if not rendered:
            continue
        at = next(
            (
                i
                for i, item in enumerate(sequence)
                if isinstance(item, Line)
                and item.top >= bbox[1]
                and item.x0 < bbox[2]
                and item.x1 > bbox[0]
            ),
            len(sequence),
        )
        sequence.insert(at, rendered)
    blocks: list[str] = []
    run: list[Line] = []
    for item in sequence:
        if isinstance(item, Line):
            run.append(item)
            continue
        blocks.extend(lines_to_markdown(run, tracker, size=size))
        run = []
        blocks.append(item)
    blocks.extend(lines_to_markdown(run, tracker, size=size))
    return PageResult(markdown="\n\n".join(blocks), title=title)


def _first_line_title(lines: list[Line], size: float) -> str | None:
    """The document title from the top of page 1: the largest short line among the first
    few, when it is set larger than the body text."""
    head = [ln for ln in lines[:6] if 2 <= len(ln.text.strip()) <= 80]
    if not head or size <= 0:
        return None
    biggest = max(head, key=lambda ln: ln.size)
    if biggest.size >= size * 1.2 and text_quality(biggest.text).usable:
        return biggest.text.strip()
    return None


def _is_real_table(table: Any) -> bool:
    rows = [row for row in table.extract() if any(cell and str(cell).strip() for cell in row)]
    width = max((sum(1 for c in row if c and str(c).strip()) for row in rows), default=0)
    return len(rows) >= 2 and width >= 2


def _table_rows(table: Any) -> list[list[str]]:
    rows: list[list[str]] = []
    for row in table.extract():
        cells: list[str] = []
        for cell in row:
            text = ""
            for piece in str(cell or "").splitlines():
                text = join_text(text, piece) if text else piece.strip()
            cells.append(text)
        rows.append(cells)
    return merge_sparse_columns(rows)


def _centred_in(region: Box) -> Callable[[dict[str, Any]], bool]:
    """A filter keeping the objects whose centre lies in ``region``: every character lands
    in exactly one region, even when it pokes out of it."""

    def keep(obj: dict[str, Any]) -> bool:
        if "x0" not in obj or "top" not in obj:
            return False
        cx = float(obj["x0"] + obj["x1"]) / 2
        cy = float(obj["top"] + obj["bottom"]) / 2
        return region.x0 <= cx < region.x1 and region.top <= cy < region.bottom

    return keep


def _mostly_upright(chars: list[dict[str, Any]]) -> bool:
    return sum(1 for c in chars if c.get("upright", True)) >= 0.9 * len(chars)


def _outside(
    boxes: list[tuple[float, float, float, float]], *, drop_rotated: bool
) -> Callable[[dict[str, Any]], bool]:
    """A filter keeping objects outside the table boxes; with ``drop_rotated``, sideways
    characters (an arXiv stamp in the margin) go too, so they do not break up the text."""

    def keep(obj: dict[str, Any]) -> bool:
        if "x0" not in obj or "top" not in obj:
            return True
        if drop_rotated and obj.get("object_type") == "char" and not obj.get("upright", True):
            return False
        cx = (obj["x0"] + obj["x1"]) / 2
        cy = (obj["top"] + obj["bottom"]) / 2
        return not any(x0 <= cx <= x1 and top <= cy <= bottom for x0, top, x1, bottom in boxes)

    return keep


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
