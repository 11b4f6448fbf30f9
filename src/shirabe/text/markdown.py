"""Rendering table cells as Markdown pipe tables, shared by the PDF, Word and PowerPoint loaders."""

from __future__ import annotations

import re
from collections.abc import Sequence

_SPACE = re.compile(r"\s+")


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


_STRUCTURE_START = re.compile(r"^(\s*)(#{1,6}(?:\s|$)|`{3,}|~{3,}|\|)")


def escape_line(line: str) -> str:
    """A text line that a Markdown reader will not take for a heading, a fence or a table row:
    a backslash goes before such a start."""
    return _STRUCTURE_START.sub(lambda m: m.group(1) + "\\" + m.group(2), line, count=1)
