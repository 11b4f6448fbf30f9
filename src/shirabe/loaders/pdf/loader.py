"""Loader for PDF files: one Markdown part per page, cited as ``file › p.12``.

pdfplumber (pdfminer) reads the text layer with positions, which gives tables (as pipe
tables), two-column reading order, vertical Japanese (pdfminer's ``detect_vertical``) and
paragraphs rebuilt from line geometry. pypdf opens encrypted files, supplies the metadata and
is the second opinion for pages whose pdfminer text is missing or noise. Pages whose text is
still noise, or that are only images, go through Tesseract when it is installed; otherwise
they are reported in the warnings and the rest of the file is indexed.

Pages are processed one at a time and their parsed objects released (``page.close()``), so
memory stays bounded on long files.
"""

from __future__ import annotations

import logging
import tempfile
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from shirabe.loaders.pdf import ocr
from shirabe.loaders.pdf.layout import (
    Box,
    HeadingTracker,
    Line,
    body_size,
    close_cjk_spaces,
    column_regions,
    find_gutter,
    heading_kind,
    is_vertical,
    join_text,
    lines_to_markdown,
    meaningful_title,
    merge_sparse_columns,
    text_quality,
)
from shirabe.loaders.protocol import LoadError, LoadOptions, describe_error, report_progress
from shirabe.records import Document, Part
from shirabe.text.markdown import markdown_table

logger = logging.getLogger(__name__)

OCR_DPI = 300
MAX_RENDER_PIXELS = 6000
"""The longer side of a rendered page is capped, so a poster-sized page stays affordable."""
VERTICAL_OCR_BELOW = 75.0
"""Horizontal OCR with a lower mean confidence is retried as vertical Japanese (jpn_vert)."""
UNREADABLE_OCR_BELOW = 60.0
"""Below this mean confidence horizontal OCR is retried as vertical whatever script it shows."""
X_TOLERANCE = 1.5
"""Gap (pt) that separates words; pdfplumber's 3 glues tightly set Latin words together."""
INSTALL_HINT = "pip install 'shirabe[pdf]'"


@dataclass(slots=True)
class _PageResult:
    markdown: str = ""
    needs_ocr: bool = False
    reason: str = ""
    title: str | None = None


@dataclass(slots=True)
class _Reading:
    """State of one PDF being read."""

    path: Path
    options: LoadOptions
    password: str | None = None
    reader: Any = None
    tracker: HeadingTracker = field(default_factory=HeadingTracker)
    warnings: list[str] = field(default_factory=list)


class PdfLoader:
    """PDF text per page, with tables, columns, vertical Japanese, encryption and OCR."""

    extensions: ClassVar[tuple[str, ...]] = (".pdf",)

    def load(self, path: Path, options: LoadOptions) -> Document:
        _check_header(path)
        try:
            import pdfplumber  # noqa: F401
            import pypdf  # noqa: F401
        except ImportError as exc:
            raise LoadError(path, f"needs pypdf and pdfplumber: {INSTALL_HINT}") from exc
        with _quiet_libraries():
            try:
                return _load(_Reading(path, options))
            except LoadError:
                raise
            except Exception as exc:
                logger.debug("cannot read %s", path, exc_info=True)
                raise LoadError(path, f"corrupt or damaged PDF ({describe_error(exc)})") from exc


@contextmanager
def _quiet_libraries() -> Iterator[None]:
    """pdfminer and pypdf report every recoverable syntax slip of a damaged file through
    ``logging`` (and a few through ``warnings``); they are expected here, so they are lowered
    to debug level for the duration of one load."""
    names = ("pdfminer", "pypdf", "pdfplumber")
    saved = {name: logging.getLogger(name).level for name in names}
    for name in names:
        logging.getLogger(name).setLevel(logging.ERROR + 10)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", module=r"(pypdf|pdfminer|pdfplumber|pypdfium2)")
            yield
    finally:
        for name, level in saved.items():
            logging.getLogger(name).setLevel(level)


def _check_header(path: Path) -> None:
    try:
        with path.open("rb") as fh:
            head = fh.read(1024)
    except PermissionError as exc:
        raise LoadError(path, "permission denied") from exc
    except FileNotFoundError as exc:
        raise LoadError(path, "file not found") from exc
    except OSError as exc:
        raise LoadError(path, f"cannot read file ({exc.strerror or exc})") from exc
    if not head:
        raise LoadError(path, "empty file")
    if b"%PDF-" not in head:
        raise LoadError(path, "corrupt or damaged PDF (no %PDF header)")


def _open_encrypted(reading: _Reading) -> None:
    """Open with pypdf and settle the password; raises the user-facing encryption errors."""
    import pypdf
    from pypdf.errors import DependencyError, PdfReadError

    try:
        reader = pypdf.PdfReader(str(reading.path), strict=False)
    except (PdfReadError, ValueError, KeyError, TypeError, OSError) as exc:
        logger.debug("pypdf cannot open %s: %s", reading.path, exc)
        return
    reading.reader = reader
    if not reader.is_encrypted:
        return
    try:
        if reader.decrypt("") != pypdf.PasswordType.NOT_DECRYPTED:
            reading.password = ""
            return
        configured = reading.options.password_for(reading.path)
        if configured is None:
            raise LoadError(reading.path, "encrypted, password required")
        if reader.decrypt(configured) == pypdf.PasswordType.NOT_DECRYPTED:
            raise LoadError(reading.path, "encrypted, the configured password is wrong")
    except DependencyError as exc:
        raise LoadError(
            reading.path, f"encrypted with AES: needs cryptography: {INSTALL_HINT}"
        ) from exc
    reading.password = configured


def _load(reading: _Reading) -> Document:
    import pdfplumber
    from pdfminer.pdfdocument import PDFPasswordIncorrect
    from pdfplumber.utils.exceptions import PdfminerException

    _open_encrypted(reading)
    path = reading.path
    try:
        pdf = pdfplumber.open(str(path), password=reading.password or "")
    except PdfminerException as exc:
        if isinstance(exc.args[0] if exc.args else None, PDFPasswordIncorrect):
            raise LoadError(path, "encrypted, password required") from exc
        raise LoadError(path, f"corrupt or damaged PDF ({describe_error(exc)})") from exc
    parts: list[Part] = []
    ocr_pages: list[int] = []
    title = meaningful_title(_metadata_title(reading, pdf.metadata))
    first_line_title: str | None = None
    with pdf, _Renderer(reading) as renderer:
        for index, page in enumerate(pdf.pages):
            number = index + 1
            report_progress()
            try:
                result = _page_text(reading, page, index, want_title=number == 1 and not title)
            except Exception as exc:
                logger.debug("page %s of %s unreadable", number, path, exc_info=True)
                result = _fallback_text(reading, index) or _PageResult(
                    needs_ocr=True, reason=describe_error(exc)
                )
                if result.markdown:
                    reading.warnings.append(f"page {number}: layout analysis failed, plain text")
            finally:
                page.close()
            if result.title and first_line_title is None:
                first_line_title = result.title
            if result.needs_ocr:
                ocr_pages.append(number)
                result.markdown = renderer.ocr(number, result.reason)
            if result.markdown.strip():
                parts.append(Part(result.markdown, {"page": number}))
    title = title or first_line_title
    if not parts:
        if ocr_pages:
            raise LoadError(path, _no_text_reason(reading.options))
        raise LoadError(path, "no text found (blank pages)")
    if title:
        first = parts[0]
        parts[0] = Part(f"# {title}\n\n{first.text}", first.locator)
    return Document(
        path=str(path),
        parts=parts,
        title=title,
        metadata=_metadata(reading),
        warnings=reading.warnings,
    )


def _no_text_reason(options: LoadOptions) -> str:
    if not options.ocr:
        return "no text layer: needs OCR (OCR is turned off)"
    if ocr.tesseract_command() is None or ocr.missing_languages(options.ocr_languages):
        return "no text layer: needs OCR (install tesseract-ocr-jpn)"
    return "no text layer, and OCR found no readable text"


def _metadata_title(reading: _Reading, plumber_metadata: dict[str, Any]) -> str | None:
    if reading.reader is not None:
        try:
            meta = reading.reader.metadata
            if meta is not None and meta.title:
                return str(meta.title)
        except Exception:
            logger.debug("no pypdf metadata for %s", reading.path, exc_info=True)
    raw = plumber_metadata.get("Title")
    if isinstance(raw, bytes):
        return None
    return str(raw) if raw else None


def _metadata(reading: _Reading) -> dict[str, str]:
    found: dict[str, str] = {}
    if reading.reader is None:
        return found
    try:
        meta = reading.reader.metadata
        if meta is None:
            return found
        for key, name in (
            ("/Author", "author"),
            ("/Subject", "subject"),
            ("/Keywords", "keywords"),
        ):
            value = meta.get(key)
            if value and str(value).strip():
                found[name] = str(value).strip()
    except Exception:
        logger.debug("no metadata for %s", reading.path, exc_info=True)
    return found


# --- one page ----------------------------------------------------------------------------------


def _page_text(reading: _Reading, page: Any, index: int, *, want_title: bool) -> _PageResult:
    """Markdown of one page from its text layer, or a request for OCR."""
    raw = page.extract_text() or ""
    quality = text_quality(raw)
    if not quality.usable:
        fallback = _fallback_text(reading, index)
        if fallback is not None:
            return fallback
        if quality.visible >= 3:
            reason = "unreadable text layer: " + ", ".join(quality.reasons)
            return _PageResult(needs_ocr=True, reason=reason)
        if page.images or len(page.curves) + len(page.rects) > 50:
            return _PageResult(needs_ocr=True, reason="no text layer")
        return _PageResult()
    if quality.visible < 200:
        fallback = _fallback_text(reading, index)
        if fallback is not None and _visible(fallback.markdown) >= 2 * quality.visible + 20:
            return fallback
    glyphs = [Box(c["x0"], c["top"], c["x1"], c["bottom"]) for c in page.chars]
    if is_vertical(glyphs):
        return _PageResult(markdown=_vertical_text(page, reading.tracker))
    return _horizontal_text(page, reading.tracker, want_title=want_title)


def _visible(text: str) -> int:
    return sum(not ch.isspace() for ch in text)


def _fallback_text(reading: _Reading, index: int) -> _PageResult | None:
    """The page as pypdf reads it, when that is clean text; ``None`` otherwise."""
    if reading.reader is None:
        return None
    try:
        text = reading.reader.pages[index].extract_text() or ""
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
    blocks = lines_to_markdown(lines, reading.tracker, size=0.0)
    return _PageResult(markdown="\n\n".join(blocks))


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


def _horizontal_text(page: Any, tracker: HeadingTracker, *, want_title: bool) -> _PageResult:
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
    return _PageResult(markdown="\n\n".join(blocks), title=title)


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


# --- OCR ---------------------------------------------------------------------------------------


class _Renderer:
    """Renders pages with pypdfium2 and reads them with Tesseract, opening the file lazily."""

    def __init__(self, reading: _Reading) -> None:
        self.reading = reading
        self.document: Any = None
        self.tempdir: tempfile.TemporaryDirectory[str] | None = None

    def __enter__(self) -> _Renderer:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.document is not None:
            self.document.close()
        if self.tempdir is not None:
            self.tempdir.cleanup()

    def ocr(self, number: int, reason: str) -> str:
        """The OCR text of page ``number``, or ``""`` with a warning saying why not."""
        options = self.reading.options
        warn = self.reading.warnings.append
        detail = reason or "no text layer"
        if not options.ocr:
            warn(f"page {number}: needs OCR ({detail})")
            return ""
        if ocr.tesseract_command() is None:
            warn(f"page {number}: needs OCR ({detail}; tesseract is not installed)")
            return ""
        missing = ocr.missing_languages(options.ocr_languages)
        if missing:
            warn(f"page {number}: needs OCR ({detail}; no tesseract data for {'+'.join(missing)})")
            return ""
        try:
            image = self._render(number)
            text = self._recognize(image, options.ocr_languages)
        except ocr.OcrError as exc:
            warn(f"page {number}: needs OCR ({detail}; {exc.reason})")
            return ""
        except Exception as exc:
            logger.debug("cannot render page %s", number, exc_info=True)
            warn(f"page {number}: needs OCR ({detail}; cannot render: {describe_error(exc)})")
            return ""
        if not text:
            warn(f"page {number}: no text layer and OCR found no text")
            return ""
        warn(f"page {number}: text from OCR")
        return text

    def _render(self, number: int) -> Path:
        import pypdfium2

        if self.document is None:
            self.document = pypdfium2.PdfDocument(
                str(self.reading.path), password=self.reading.password or None
            )
            self.tempdir = tempfile.TemporaryDirectory(prefix="shirabe-ocr-")
        assert self.tempdir is not None
        page = self.document[number - 1]
        try:
            width, height = page.get_size()
            scale = min(OCR_DPI / 72, MAX_RENDER_PIXELS / max(width, height, 1.0))
            bitmap = page.render(scale=scale, grayscale=True)
            image = bitmap.to_pil()
            target = Path(self.tempdir.name) / f"page-{number}.png"
            image.save(target)
            bitmap.close()
        finally:
            page.close()
        return target

    def _recognize(self, image: Path, languages: str) -> str:
        """Horizontal OCR, retried as vertical Japanese (jpn_vert) when the result is Japanese
        or empty and its confidence is low, or when it is too poor to read at all (vertical
        text read across comes out as Latin-looking noise); the more confident result wins.
        Readable Latin pages are not retried: it would double the cost for nothing."""
        best = ocr.recognize(image, languages)
        vertical = ocr.vertical_languages(languages)
        japanese = sum(1 for ch in best.text if "\u3040" <= ch <= "\u9fff")
        latin = sum(1 for ch in best.text if ch.isascii() and ch.isalpha())
        looks_japanese = best.words == 0 or japanese >= latin
        unreadable = best.confidence < UNREADABLE_OCR_BELOW  # 縦書き read across is noise
        if vertical and (unreadable or looks_japanese) and best.confidence < VERTICAL_OCR_BELOW:
            other = ocr.recognize(image, vertical, psm=5)
            if other.words and other.confidence > best.confidence:
                logger.debug("vertical OCR chosen: %.1f > %.1f", other.confidence, best.confidence)
                best = other
        if not text_quality(best.text).usable:
            return ""
        blocks: list[str] = []
        for paragraph in best.text.split("\n\n"):
            text = ""
            for line in paragraph.splitlines():
                text = join_text(text, line) if text else line.strip()
            if text:
                blocks.append(text)
        return "\n\n".join(blocks)
