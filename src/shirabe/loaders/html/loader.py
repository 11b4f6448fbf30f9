"""Loader for HTML pages, such as saved intranet portal pages and exported wiki pages.

Only the main text is kept (:mod:`.content`): navigation, site header and footer, scripts,
styles, forms, side bars and hidden elements are dropped, and ``<main>``, ``role="main"`` or
a single ``<article>`` is preferred when the page has one. What remains becomes Markdown the
chunker reads (:mod:`.convert`): ``h1``-``h6`` headings, paragraphs, ``- `` and ``1. `` lists,
fenced ``<pre>`` blocks, pipe tables and definition lists as ``term: definition`` lines.

Intranet pages are often Shift_JIS or EUC-JP, so the encoding comes from a BOM, then the
page's own ``<meta charset>`` (or ``http-equiv`` content type, or XML declaration), and only
then from detection (:mod:`.charset`).
"""

from __future__ import annotations

import logging
import warnings
from pathlib import Path
from typing import Any, ClassVar

from shirabe.loaders.html.charset import decode_html
from shirabe.loaders.html.convert import collapse_space, html_to_markdown
from shirabe.loaders.protocol import LoadError, LoadOptions, read_failure
from shirabe.records import Document, Part
from shirabe.text.encoding import EncodingError

logger = logging.getLogger(__name__)

INSTALL_HINT = "needs beautifulsoup4: pip install 'shirabe[html]'"


class HtmlLoader:
    """An HTML page's main text as one Markdown part; the title from ``<title>`` or ``<h1>``."""

    extensions: ClassVar[tuple[str, ...]] = (".html", ".htm")

    def load(self, path: Path, options: LoadOptions) -> Document:
        data = _read_bytes(path)
        try:
            text, encoding_warning = decode_html(data, str(path))
        except EncodingError as exc:
            raise LoadError(path, exc.reason) from exc
        try:
            import bs4
        except ImportError as exc:
            raise LoadError(path, INSTALL_HINT) from exc
        try:
            with warnings.catch_warnings():
                # bs4 warns when markup looks like a file name or is XHTML; both are harmless
                # here, and pytest turns warnings into errors.
                warnings.simplefilter("ignore", bs4.MarkupResemblesLocatorWarning)
                warnings.simplefilter("ignore", bs4.XMLParsedAsHTMLWarning)
                soup = bs4.BeautifulSoup(text, "html.parser")
            title = _page_title(soup)
            markdown = html_to_markdown(soup)
        except LoadError:
            raise
        except RecursionError as exc:
            raise LoadError(path, "HTML nested too deeply to read") from exc
        except Exception as exc:
            logger.debug("cannot parse %s", path, exc_info=True)
            raise LoadError(path, f"cannot parse HTML ({type(exc).__name__})") from exc
        if title is None:
            title = _first_markdown_heading(markdown)
        found = [encoding_warning] if encoding_warning else []
        if not markdown.strip():
            found.append("no text content")
        return Document(path=str(path), parts=[Part(markdown)], title=title, warnings=found)


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise read_failure(path, exc) from exc


def _page_title(soup: Any) -> str | None:
    tag = soup.find("title")
    if tag is not None:
        title = collapse_space(tag.get_text())
        if title:
            return title
    return None


def _first_markdown_heading(markdown: str) -> str | None:
    for line in markdown.split("\n"):
        if line.startswith("# "):
            return line[2:].strip() or None
    return None
