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
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from shirabe.loaders.pdf import ocr
from shirabe.loaders.pdf.lines import HeadingTracker, join_text
from shirabe.loaders.pdf.pages import PageResult, fallback_text, page_text
from shirabe.loaders.pdf.quality import text_quality
from shirabe.loaders.pdf.running import strip_running
from shirabe.loaders.protocol import LoadError, LoadOptions, describe_error, report_progress
from shirabe.loaders.titles import meaningful_title
from shirabe.records import Document, Part

logger = logging.getLogger(__name__)

OCR_DPI = 300
MAX_RENDER_PIXELS = 6000
"""The longer side of a rendered page is capped, so a poster-sized page stays affordable."""
VERTICAL_OCR_BELOW = 75.0
"""Horizontal OCR with a lower mean confidence is retried as vertical Japanese (jpn_vert)."""
UNREADABLE_OCR_BELOW = 60.0
"""Below this mean confidence horizontal OCR is retried as vertical whatever script it shows."""
INSTALL_HINT = "pip install 'shirabe[pdf]'"


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
    title = _metadata_title(reading, pdf.metadata)
    first_line_title: str | None = None
    with pdf, _Renderer(reading) as renderer:
        for index, page in enumerate(pdf.pages):
            number = index + 1
            report_progress()
            result = _read_page(reading, page, index, want_title=number == 1 and not title)
            if result.title and first_line_title is None:
                first_line_title = result.title
            if result.needs_ocr:
                ocr_pages.append(number)
                result.markdown = renderer.ocr(number, result.reason)
            if result.markdown.strip():
                parts.append(Part(result.markdown, {"page": number}))
    title = title or first_line_title
    numbers = [int(part.locator["page"]) for part in parts]
    kept = strip_running([part.text for part in parts], numbers)
    parts = [Part(text, part.locator) for text, part in zip(kept, parts, strict=True) if text]
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


def _read_page(reading: _Reading, page: Any, index: int, *, want_title: bool) -> PageResult:
    """One page's text; when layout analysis fails, pypdf's plain text or a request for OCR."""
    try:
        return page_text(page, index, reading.reader, reading.tracker, want_title=want_title)
    except Exception as exc:
        number = index + 1
        logger.debug("page %s of %s unreadable", number, reading.path, exc_info=True)
        result = fallback_text(reading.reader, index, reading.tracker) or PageResult(
            needs_ocr=True, reason=describe_error(exc)
        )
        if result.markdown:
            reading.warnings.append(f"page {number}: layout analysis failed, plain text")
        return result
    finally:
        page.close()


def _no_text_reason(options: LoadOptions) -> str:
    if not options.ocr:
        return "no text layer: needs OCR (OCR is turned off)"
    if ocr.tesseract_command() is None or ocr.missing_languages(options.ocr_languages):
        return "no text layer: needs OCR (install tesseract-ocr-jpn)"
    return "no text layer, and OCR found no readable text"


def _metadata_title(reading: _Reading, plumber_metadata: dict[str, Any]) -> str | None:
    """The title in the document's metadata, when it is meaningful and not noise."""
    title = meaningful_title(_raw_metadata_title(reading, plumber_metadata))
    return title if title is not None and text_quality(title).usable else None


def _raw_metadata_title(reading: _Reading, plumber_metadata: dict[str, Any]) -> str | None:
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
        warn(ocr.ocr_note(number))
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
