"""Markdown as the chunker reads it: the line grammar, escaping text lines, and pipe tables.

The grammar is the one place that says which lines start structure: an ATX heading with a
title, a code fence (and the line that closes it), a pipe-table line. The chunker parses with
it, and loaders escape with it, so a line of document text is escaped exactly when the chunker
would otherwise read it as structure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_SPACE = re.compile(r"\s+")
_HEADING = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*))?")
_CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+$")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_TABLE_SEPARATOR = re.compile(r"\|?(?:\s*:?-+:?\s*\|)*\s*:?-+:?\s*\|?")


def atx_heading(line: str) -> tuple[int, str] | None:
    """``(level, title)`` for an ATX heading line; a heading needs a non-empty title."""
    match = _HEADING.fullmatch(line.rstrip())
    if match is None:
        return None
    title = _CLOSING_HASHES.sub("", (match.group(2) or "").strip()).strip()
    return (len(match.group(1)), title) if title else None


def fence_marker(line: str) -> str | None:
    """The run of backticks or tildes that opens a code fence on ``line``, else ``None``."""
    match = _FENCE.fullmatch(line.rstrip())
    if match is None:
        return None
    marker, info = match.group(1), match.group(2)
    if marker.startswith("`") and "`" in info:
        return None
    return marker


def closes_fence(line: str, marker: str) -> bool:
    """Whether ``line`` closes the code fence opened by ``marker``."""
    stripped = line.strip()
    indent = len(line) - len(line.lstrip(" "))
    return indent <= 3 and len(stripped) >= len(marker) and set(stripped) == {marker[0]}


def is_table_line(line: str) -> bool:
    """Whether ``line`` is a row of a pipe table."""
    return line.lstrip().startswith("|")


def is_table_separator(line: str) -> bool:
    """Whether ``line`` is the ``|---|---|`` line under a pipe table's header."""
    return _TABLE_SEPARATOR.fullmatch(line) is not None


def starts_structure(line: str) -> bool:
    """Whether ``line`` opens a heading, a code fence or a table row rather than a paragraph."""
    return atx_heading(line) is not None or fence_marker(line) is not None or is_table_line(line)


def escape_line(line: str) -> str:
    """A text line that a Markdown reader will not take for a heading, a fence or a table row:
    a backslash goes before such a start, and any other line comes back unchanged."""
    if not starts_structure(line):
        return line
    indent = len(line) - len(line.lstrip())
    return line[:indent] + "\\" + line[indent:]


def cell_text(value: object) -> str:
    """One cell as a single line: ``None`` is empty, whitespace runs become one space,
    pipes are escaped so they cannot split the cell."""
    if value is None:
        return ""
    return _SPACE.sub(" ", str(value)).strip().replace("|", "\\|")


def markdown_table(rows: Sequence[Sequence[object]]) -> str:
    """A pipe table of ``rows`` (the first is the header), or ``""`` when no cell has text.

    Short rows are padded with empty cells, rows and columns that are empty throughout are
    dropped, and repeated neighbouring cells of a merged span are kept as they come.
    """
    cells = [[cell_text(value) for value in row] for row in rows]
    cells = [row for row in cells if any(row)]
    if not cells:
        return ""
    width = max(len(row) for row in cells)
    padded = [row + [""] * (width - len(row)) for row in cells]
    keep = [c for c in range(width) if any(row[c] for row in padded)]
    table = [[row[c] for c in keep] for row in padded]
    lines = ["| " + " | ".join(table[0]) + " |", "|" + "---|" * len(keep)]
    lines.extend("| " + " | ".join(row) + " |" for row in table[1:])
    return "\n".join(lines)


def first_heading(markdown: str, max_level: int = 6) -> str | None:
    """The text of the first ATX heading of level ``max_level`` or above, outside code fences,
    as the chunker reads headings and fences."""
    fence: str | None = None
    for line in markdown.split("\n"):
        if fence is not None:
            if closes_fence(line, fence):
                fence = None
            continue
        fence = fence_marker(line)
        if fence is not None:
            continue
        heading = atx_heading(line)
        if heading is not None and heading[0] <= max_level:
            return heading[1]
    return None
