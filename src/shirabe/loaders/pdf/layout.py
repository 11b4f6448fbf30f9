"""Page geometry: boxes, the gutter between two text columns, the reading order of columns,
and vertical Japanese (縦書き) told from horizontal text by glyph positions.

Nothing here opens a PDF: the loader hands in boxes, so each rule can be tested with small
hand-written tables.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Box:
    """An axis-aligned box in PDF page coordinates (``top`` grows downwards)."""

    x0: float
    top: float
    x1: float
    bottom: float


def find_gutter(words: Sequence[Box], width: float, *, min_gap: float = 8.0) -> Box | None:
    """The empty vertical strip between two text columns, or ``None`` for a one-column page.

    A gutter is the widest run of x positions in the middle of the page (30-70 % of the width)
    that at most a few words cross (titles and figures may span both columns), at least
    ``min_gap`` wide. Both sides must hold a good share of the words side by side, and the
    lines on each side must be long, filling their column: that tells running text in
    columns from a table-like layout of short cells.
    """
    if len(words) < 20 or width <= 0:
        return None
    allowed = max(2, len(words) // 25)
    lo, hi = int(width * 0.3), int(width * 0.7)
    coverage = [0] * (hi - lo + 1)
    for w in words:
        for x in range(max(lo, int(w.x0)), min(hi, int(w.x1)) + 1):
            coverage[x - lo] += 1
    best: tuple[int, int] | None = None
    start: int | None = None
    for i, count in enumerate([*coverage, allowed + 1]):
        if count <= allowed and start is None:
            start = i
        elif count > allowed and start is not None:
            if best is None or i - start > best[1] - best[0]:
                best = (start, i)
            start = None
    if best is None or best[1] - best[0] < min_gap:
        return None
    gl, gr = lo + best[0], lo + best[1] - 1
    left = [w for w in words if w.x1 <= gl + 1]
    right = [w for w in words if w.x0 >= gr - 1]
    if min(len(left), len(right)) < len(words) * 0.2:
        return None
    top = max(min(w.top for w in left), min(w.top for w in right))
    bottom = min(max(w.bottom for w in left), max(w.bottom for w in right))
    if bottom - top <= 0:
        return None
    left_edge = min(w.x0 for w in left)
    right_edge = max(w.x1 for w in right)
    if not (_fills(left, left_edge, gl) and _fills(right, gr, right_edge)):
        return None
    spanning = [w for w in words if w.x0 < gr and w.x1 > gl]
    return Box(gl, min((w.top for w in spanning), default=top), gr, bottom)


def _fills(words: Sequence[Box], x0: float, x1: float) -> bool:
    """Whether the lines made of ``words`` mostly run across the column from x0 to x1."""
    rows: dict[int, list[Box]] = {}
    for w in words:
        rows.setdefault(round(w.top / 3), []).append(w)
    widths = sorted(max(w.x1 for w in row) - min(w.x0 for w in row) for row in rows.values())
    if len(widths) < 4:
        return False
    upper_quartile = widths[(len(widths) * 3) // 4]
    return upper_quartile >= 0.7 * (x1 - x0)


def column_regions(lines: Sequence[Box], gutter: Box, page: Box) -> list[Box]:
    """Regions of a two-column page in reading order.

    ``lines`` are the words or lines of the whole page; one that reaches well across the
    middle of the gutter spans both columns (a title, an abstract, a wide figure caption).
    The page is cut into horizontal bands at the spanning lines; each band between them is
    read left column, then right.
    """
    middle = (gutter.x0 + gutter.x1) / 2
    spans = sorted(
        (ln for ln in lines if ln.x0 < middle - 3 and ln.x1 > middle + 3), key=lambda b: b.top
    )
    regions: list[Box] = []
    cursor = page.top
    for span in spans:
        if span.top > cursor:
            regions.extend(_two_columns(cursor, span.top, gutter, page))
        if regions and regions[-1].x0 == page.x0 and regions[-1].x1 == page.x1:
            last = regions[-1]
            regions[-1] = Box(last.x0, last.top, last.x1, max(last.bottom, span.bottom))
        else:
            regions.append(Box(page.x0, span.top, page.x1, span.bottom))
        cursor = max(cursor, span.bottom)
    if cursor < page.bottom:
        regions.extend(_two_columns(cursor, page.bottom, gutter, page))
    return regions


def _two_columns(top: float, bottom: float, gutter: Box, page: Box) -> list[Box]:
    middle = (gutter.x0 + gutter.x1) / 2
    return [Box(page.x0, top, middle, bottom), Box(middle, top, page.x1, bottom)]


def is_vertical(glyphs: Sequence[Box]) -> bool:
    """Whether consecutive glyphs mostly step downwards (縦書き) rather than rightwards.

    Each pair of neighbours in content-stream order votes: same column and lower means
    vertical, same row and further right means horizontal.
    """
    down = across = 0
    for a, b in itertools.pairwise(glyphs):
        size = max(a.bottom - a.top, a.x1 - a.x0, 1.0)
        dx, dy = b.x0 - a.x0, b.top - a.top
        if abs(dx) < size * 0.3 and 0 < dy < size * 2:
            down += 1
        elif abs(dy) < size * 0.3 and 0 < dx < size * 2:
            across += 1
    return down > 2 * across and down >= 10
