"""HTML to the Markdown the chunker reads: ``h1``-``h6`` headings, paragraphs, ``- `` and
``1. `` lists, fenced ``<pre>`` blocks, pipe tables and definition lists as ``term: definition``
lines."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from shirabe.loaders.html.content import main_content
from shirabe.text.markdown import escape_line, markdown_table

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
_RENDERED = frozenset({*_HEADINGS, "pre", "ul", "ol", "dl", "table"})
"""Tags that add a block rendered from the whole tag when it opens (``_Converter._render``)."""
_HTML_SPACE = re.compile(r"[ \t\n\r\f\xa0]+")
_BREAK = "\x00"
"""Stands for ``<br>`` in collected inline text until whitespace is collapsed."""
_WIDE = re.compile(r"[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef\u3000-\u303f]")


@dataclass(frozen=True, slots=True)
class Cell:
    """A table cell's text and how many rows and columns it spans."""

    text: str
    rowspan: int = 1
    colspan: int = 1


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
        elif name == "br":
            self.inline.append(_BREAK)
        elif name in _BLOCK_TAGS or name in _RENDERED:
            self._flush()
            self._render(node, name)

    def _render(self, node: Any, name: str) -> None:
        """The block a tag of ``_RENDERED`` opens, rendered from the tag as a whole; other
        blocks add nothing here (their text is walked)."""
        if name in _HEADINGS:
            text = _inline_text(node)
            if text:
                self.blocks.append("#" * _HEADINGS[name] + " " + text)
        elif name == "pre":
            self._add_pre(node)
        elif name in ("ul", "ol"):
            self._add_lines(list(_list_lines(node, 0)))
        elif name == "dl":
            self._add_lines(_definition_lines(node))
        elif name == "table":
            self._add_table(node)

    def _add_lines(self, lines: list[str]) -> None:
        if lines:
            self.blocks.append("\n".join(lines))

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
