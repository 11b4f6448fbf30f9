"""Loader for HTML pages, such as saved intranet portal pages and exported wiki pages.

Only the main text is kept: navigation, site header and footer, scripts, styles, forms, side
bars and hidden elements are dropped, and ``<main>``, ``role="main"`` or a single ``<article>``
is preferred when the page has one. What remains becomes Markdown the chunker reads: ``h1``-``h6``
headings, paragraphs, ``- `` and ``1. `` lists, fenced ``<pre>`` blocks, pipe tables and
definition lists as ``term: definition`` lines.

Intranet pages are often Shift_JIS or EUC-JP, so the encoding comes from a BOM, then the
page's own ``<meta charset>`` (or ``http-equiv`` content type, or XML declaration), and only
then from detection.
"""

from __future__ import annotations

import codecs
import logging
import re
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, ClassVar

from shirabe.loaders.protocol import LoadError, LoadOptions, read_failure
from shirabe.records import Document, Part
from shirabe.text.encoding import EncodingError, decode_bytes
from shirabe.text.markdown import markdown_table

logger = logging.getLogger(__name__)

INSTALL_HINT = "needs beautifulsoup4: pip install 'shirabe[html]'"

_SNIFF_BYTES = 4096
_META_CHARSET = re.compile(
    rb"""<meta[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)""",
    re.IGNORECASE,
)
_XML_ENCODING = re.compile(rb"""^\s*<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._:-]+)""")
_CHARSET_ALIASES = {
    # Pages labelled Shift_JIS are nearly always written by Windows tools in CP932 (which adds
    # NEC and IBM extensions such as ① and 髙), and WHATWG decodes them the same way.
    "shift_jis": "cp932",
    "shift-jis": "cp932",
    "sjis": "cp932",
    "x-sjis": "cp932",
    "ms_kanji": "cp932",
    "windows-31j": "cp932",
    "csshiftjis": "cp932",
    "x-euc-jp": "euc_jp",
    # A page cannot really be UTF-16 if its ASCII meta tag was found by a byte search.
    "utf-16": "utf-8",
    "utf-16le": "utf-8",
    "utf-16be": "utf-8",
}

_DROP_TAGS = frozenset(
    {
        "script",
        "style",
        "noscript",
        "template",
        "nav",
        "aside",
        "form",
        "button",
        "input",
        "select",
        "textarea",
        "label",
        "iframe",
        "frame",
        "frameset",
        "object",
        "embed",
        "svg",
        "math",
        "canvas",
        "video",
        "audio",
        "map",
        "dialog",
        "title",
        "link",
        "meta",
    }
)
_DROP_ROLES = frozenset(
    {"navigation", "banner", "contentinfo", "complementary", "search", "menu", "menubar"}
)
_CHROME_NAMES = frozenset(
    {
        "header",
        "footer",
        "nav",
        "navi",
        "navbar",
        "navigation",
        "gnav",
        "globalnav",
        "global-nav",
        "localnav",
        "menu",
        "sidebar",
        "side-bar",
        "sidemenu",
        "breadcrumb",
        "breadcrumbs",
        "topicpath",
        "pankuzu",
        "skip",
        "skiplink",
        "pagetop",
        "page-top",
    }
)
"""Whole ``id``/``class`` tokens that mark page chrome on pages without semantic elements."""
_SECTIONING = frozenset({"article", "aside", "main", "nav", "section"})
_BLOCK_TAGS = frozenset(
    {
        "address",
        "article",
        "blockquote",
        "body",
        "center",
        "dd",
        "details",
        "div",
        "dt",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "header",
        "hgroup",
        "hr",
        "html",
        "legend",
        "li",
        "main",
        "p",
        "section",
        "summary",
        "caption",
        "td",
        "th",
        "tr",
    }
)
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
_HTML_SPACE = re.compile(r"[ \t\n\r\f\xa0]+")
_BREAK = "\x00"
"""Stands for ``<br>`` in collected inline text until whitespace is collapsed."""
_WIDE = re.compile(r"[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef\u3000-\u303f]")
_MARKDOWN_LINE_START = re.compile(r"^(\s*)(#{1,6}(?:\s|$)|`{3,}|~{3,}|\|)")


@dataclass(frozen=True, slots=True)
class Cell:
    """A table cell's text and how many rows and columns it spans."""

    text: str
    rowspan: int = 1
    colspan: int = 1


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


# --- encoding ------------------------------------------------------------------------------


def declared_charset(data: bytes) -> str | None:
    """The Python codec named by the page itself (meta tag or XML declaration), if known.

    Only the first few kilobytes are searched, as browsers do. Unknown names give ``None``.
    """
    head = data[:_SNIFF_BYTES]
    match = _XML_ENCODING.match(head) or _META_CHARSET.search(head)
    if match is None:
        return None
    label = match[1].decode("ascii", "replace").strip().lower()
    label = _CHARSET_ALIASES.get(label, label)
    try:
        return codecs.lookup(label).name
    except LookupError:
        return None


def decode_html(data: bytes, name: str = "<bytes>") -> tuple[str, str | None]:
    """The page's text and an optional warning: BOM, then declared charset, then detection.

    A declared charset the bytes do not decode in (pages re-saved in another encoding keep
    their old meta tag) falls back to detection with a warning.
    """
    if data.startswith((codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return decode_bytes(data, name), None
    declared = declared_charset(data)
    if declared is not None:
        try:
            return data.decode(declared).replace("\r\n", "\n").replace("\r", "\n"), None
        except UnicodeDecodeError:
            logger.debug("%s: declared charset %s does not fit", name, declared)
            text = decode_bytes(data, name)
            return text, f"declared charset {declared} does not match the bytes; detected instead"
    return decode_bytes(data, name), None


# --- page structure ------------------------------------------------------------------------


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


def _is_hidden(tag: Any) -> bool:
    if tag.has_attr("hidden"):
        return True
    if str(tag.get("aria-hidden", "")).lower() == "true":
        return True
    return bool(_HIDDEN_STYLE.search(str(tag.get("style", ""))))


def _is_chrome(tag: Any) -> bool:
    """Elements that are page furniture rather than content."""
    name = tag.name
    if name in _DROP_TAGS:
        return True
    role = str(tag.get("role", "")).lower()
    if role in _DROP_ROLES:
        return True
    if name in ("header", "footer"):
        # Only a page-level header or footer is chrome; inside an article it is content.
        return tag.find_parent(list(_SECTIONING)) is None
    return False


def _has_chrome_name(tag: Any) -> bool:
    tokens = [str(tag.get("id", ""))]
    classes = tag.get("class") or []
    tokens.extend(classes if isinstance(classes, list) else str(classes).split())
    return any(token.lower() in _CHROME_NAMES for token in tokens)


def main_content(soup: Any) -> Any:
    """The element holding the page's main text, with chrome and hidden elements removed."""
    _drop(soup, lambda tag: _is_chrome(tag) or _is_hidden(tag))
    root = soup.find("main") or soup.find(attrs={"role": "main"})
    if root is None:
        articles = soup.find_all("article")
        if len(articles) == 1:
            root = articles[0]
    if root is None:
        root = soup.find("body") or soup
        # No semantic markup: fall back to conventional ids and classes such as id="header".
        _drop(root, lambda tag: _has_chrome_name(tag) and not _holds_heading_1(tag))
    return root


def _drop(root: Any, unwanted: Callable[[Any], bool]) -> None:
    """Remove the outermost descendants of ``root`` that are ``unwanted``.

    Tags are visited in document order, so a parent is seen before its children and the
    children of a dropped tag need no test (``Tag.decomposed`` would be a slow search).
    """
    inside: set[int] = set()
    doomed: list[Any] = []
    for tag in root.find_all(True):
        if id(tag.parent) in inside:
            inside.add(id(tag))
        elif unwanted(tag):
            inside.add(id(tag))
            doomed.append(tag)
    for tag in doomed:
        tag.decompose()


def _holds_heading_1(tag: Any) -> bool:
    """Whether a would-be chrome block carries the page's h1 (then it is the page title)."""
    return tag.find("h1") is not None and tag.find(["p", "table", "ul", "ol", "dl"]) is None


# --- Markdown ------------------------------------------------------------------------------


def html_to_markdown(soup: Any) -> str:
    """The Markdown of a parsed page's main content (see :func:`main_content`)."""
    return _Converter().convert(main_content(soup))


def collapse_space(text: str) -> str:
    """HTML whitespace rules: runs become one space, except that a line break between two
    Japanese characters disappears (browsers for Japanese do the same), and ``<br>`` marks
    become newlines."""

    def replace(match: re.Match[str]) -> str:
        run = match.group(0)
        if "\n" in run or "\r" in run:
            before = match.string[match.start() - 1 : match.start()]
            after = match.string[match.end() : match.end() + 1]
            if before and after and _WIDE.match(before) and _WIDE.match(after):
                return ""
        return " "

    collapsed = _HTML_SPACE.sub(replace, text)
    lines = [line.strip() for line in collapsed.split(_BREAK)]
    return "\n".join(line for line in lines if line)


def escape_line(line: str) -> str:
    """A text line that the chunker will not mistake for a heading, a fence or a table."""
    return _MARKDOWN_LINE_START.sub(lambda m: m.group(1) + "\\" + m.group(2), line, count=1)


def table_grid(rows: Sequence[Sequence[Cell]]) -> list[list[str]]:
    """Rows of cells with their spans expanded: a merged cell's text repeats in every slot it
    covers, so each row of the Markdown table reads on its own."""
    grid: list[list[str]] = []
    pending: dict[int, tuple[str, int]] = {}  # column -> (text, rows still covered)
    for row in rows:
        out: list[str] = []
        cells = iter(row)
        column = 0
        while True:
            if column in pending:
                text, left = pending[column]
                out.append(text)
                if left <= 1:
                    del pending[column]
                else:
                    pending[column] = (text, left - 1)
                column += 1
                continue
            cell = next(cells, None)
            if cell is None:
                if any(c >= column for c in pending):
                    out.append("")
                    column += 1
                    continue
                break
            for _ in range(max(1, cell.colspan)):
                out.append(cell.text)
                if cell.rowspan > 1:
                    pending[column] = (cell.text, cell.rowspan - 1)
                column += 1
        grid.append(out)
    return grid


def _span(tag: Any, name: str) -> int:
    try:
        value = int(str(tag.get(name, "1")).strip())
    except ValueError:
        return 1
    return min(max(value, 1), 100)


def _inline_text(tag: Any) -> str:
    """A tag's text on one line: ``<br>`` and blocks inside it become spaces."""
    parts: list[str] = []
    for node in tag.descendants:
        if _is_string(node):
            parts.append(str(node))
        elif getattr(node, "name", None) == "br" or getattr(node, "name", None) in _BLOCK_TAGS:
            parts.append(" ")
    return collapse_space("".join(parts).replace(_BREAK, "")).replace("\n", " ")


def _is_string(node: Any) -> bool:
    """Text nodes, but not comments, doctypes or declarations (subclasses of strings)."""
    return type(node) in _text_types()


@cache
def _text_types() -> tuple[type, ...]:
    from bs4.element import CData, NavigableString

    return (NavigableString, CData)


def _is_layout_table(table: Any) -> bool:
    """Tables used to position the page (old intranet pages) rather than to hold data."""
    if str(table.get("role", "")).lower() in ("presentation", "none"):
        return True
    return table.find(["table", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "pre"]) is not None


class _Converter:
    """Walks the content tree once, turning blocks into Markdown as they close."""

    def __init__(self) -> None:
        self.blocks: list[str] = []
        self.inline: list[str] = []

    def convert(self, root: Any) -> str:
        for node, entering in _walk(root, self._is_atomic):
            self._visit(node, entering)
        self._flush()
        return "\n\n".join(self.blocks) + ("\n" if self.blocks else "")

    def _is_atomic(self, tag: Any) -> bool:
        """Tags rendered as a whole, whose children the walk does not visit."""
        if tag.name in _HEADINGS or tag.name in ("pre", "ul", "ol", "dl", "br", "img"):
            return True
        return tag.name == "table" and not _is_layout_table(tag)

    def _visit(self, node: Any, entering: bool) -> None:
        if _is_string(node):
            self.inline.append(str(node).replace(_BREAK, ""))
            return
        name = getattr(node, "name", None)
        if name is None:
            return  # comments, doctypes, processing instructions
        if not entering:
            if name in _BLOCK_TAGS or name == "table":
                self._flush()
            return
        if name == "br":
            self.inline.append(_BREAK)
        elif name in _HEADINGS:
            self._flush()
            text = _inline_text(node)
            if text:
                self.blocks.append("#" * _HEADINGS[name] + " " + text)
        elif name == "pre":
            self._flush()
            self._add_pre(node)
        elif name in ("ul", "ol"):
            self._flush()
            lines = list(_list_lines(node, 0))
            if lines:
                self.blocks.append("\n".join(lines))
        elif name == "dl":
            self._flush()
            lines = _definition_lines(node)
            if lines:
                self.blocks.append("\n".join(lines))
        elif name == "table":
            self._flush()
            self._add_table(node)
        elif name in _BLOCK_TAGS:
            self._flush()

    def _flush(self) -> None:
        if not self.inline:
            return
        text = collapse_space("".join(self.inline))
        self.inline = []
        if text:
            self.blocks.append("\n".join(escape_line(line) for line in text.split("\n")))

    def _add_pre(self, tag: Any) -> None:
        text = tag.get_text().strip("\n")
        if not text.strip():
            return
        longest = max((len(run) for run in re.findall(r"`{3,}", text)), default=2)
        fence = "`" * (longest + 1)
        self.blocks.append(f"{fence}\n{text.rstrip()}\n{fence}")

    def _add_table(self, table: Any) -> None:
        caption = table.find("caption")
        if caption is not None and caption.find_parent("table") is table:
            text = _inline_text(caption)
            if text:
                self.blocks.append(escape_line(text))
        trs = [tr for tr in table.find_all("tr") if tr.find_parent("table") is table]
        cells_by_row = [
            [
                td
                for td in tr.find_all(["td", "th"])
                if td.find_parent("tr") is tr and td.find_parent("table") is table
            ]
            for tr in trs
        ]
        separate(trs)
        separate([td for cells in cells_by_row for td in cells])
        rows = [
            [Cell(_inline_text(td), _span(td, "rowspan"), _span(td, "colspan")) for td in cells]
            for cells in cells_by_row
            if cells
        ]
        rendered = markdown_table(table_grid(rows))
        if rendered:
            self.blocks.append(rendered)


def _walk(root: Any, atomic: Any) -> Iterator[tuple[Any, bool]]:
    """Enter and exit events over the tree, without recursion (pages can nest deeply)."""
    stack: list[tuple[Any, bool]] = [(root, True)]
    while stack:
        node, entering = stack.pop()
        yield node, entering
        if not entering or getattr(node, "name", None) is None:
            continue
        stack.append((node, False))
        if atomic(node) and node is not root:
            continue
        stack.extend((child, True) for child in reversed(list(node.children)))


def _list_lines(tag: Any, depth: int) -> Iterator[str]:
    """``- item`` or ``1. item`` lines of a list, nested lists indented two spaces a level."""
    ordered = tag.name == "ol"
    try:
        number = int(str(tag.get("start", "1")))
    except ValueError:
        number = 1
    indent = "  " * depth
    items = [li for li in tag.find_all("li") if li.find_parent(["ul", "ol"]) is tag]
    if not items:
        text = _inline_text(tag)
        if text:
            yield indent + ("1. " if ordered else "- ") + text
        return
    separate(items)
    for item in items:
        nested = [child for child in item.find_all(["ul", "ol"]) if _owner_item(child) is item]
        for child in nested:
            child.extract()
        text = _inline_text(item)
        if text:
            marker = f"{number}. " if ordered else "- "
            yield indent + marker + text
            number += 1
        for child in nested:
            yield from _list_lines(child, depth + 1)


def separate(elements: Sequence[Any]) -> None:
    """Detach elements of ``elements`` that sit inside another of them.

    ``html.parser`` does not close ``<li>``, ``<td>``, ``<tr>``, ``<dt>`` or ``<dd>``
    implicitly, so ``<li>a<li>b`` nests b inside a; detaching makes each hold only its own text.
    """
    ids = {id(element) for element in elements}
    for element in elements:
        if element.parent is None:
            continue
        for parent in element.parents:
            if id(parent) in ids:
                element.extract()
                break


def _owner_item(sublist: Any) -> Any:
    return sublist.find_parent("li")


def _definition_lines(tag: Any) -> list[str]:
    """``term: definition`` lines; several definitions of a term are joined with `` / ``."""
    lines: list[str] = []
    term: str | None = None
    definitions: list[str] = []

    def close() -> None:
        if term is not None or definitions:
            body = " / ".join(definitions)
            line = f"{term}: {body}" if term and body else (term or body)
            lines.append(escape_line(line))

    entries = [child for child in tag.find_all(["dt", "dd"]) if child.find_parent("dl") is tag]
    separate(entries)
    for child in entries:
        text = _inline_text(child)
        if child.name == "dt":
            if definitions or term is not None:
                close()
                definitions = []
            term = text or None
        elif text:
            definitions.append(text)
    close()
    return lines
