"""Page geometry: gutters, column reading order, vertical text."""

from __future__ import annotations

from shirabe.loaders.pdf.layout import Box, column_regions, find_gutter, is_vertical


def _column_words(x0: float, x1: float, rows: int, top: float = 100.0) -> list[Box]:
    """Two words per row, filling the column from x0 to x1."""
    words: list[Box] = []
    middle = (x0 + x1) / 2
    for i in range(rows):
        y = top + i * 12
        words.extend([Box(x0, y, middle - 2, y + 10), Box(middle + 2, y, x1, y + 10)])
    return words


def test_find_gutter_two_columns() -> None:
    words = _column_words(50, 280, 30) + _column_words(310, 545, 30)
    gutter = find_gutter(words, 595)
    assert gutter is not None
    assert 280 <= gutter.x0 < gutter.x1 <= 310


def test_find_gutter_one_column_and_short_cells() -> None:
    assert find_gutter(_column_words(50, 545, 40), 595) is None
    # A table-like layout: short cells on each side of an empty middle strip.
    cells = [Box(50, 100 + i * 12, 90, 110 + i * 12) for i in range(30)]
    cells += [Box(400, 100 + i * 12, 430, 110 + i * 12) for i in range(30)]
    assert find_gutter(cells, 595) is None


def test_column_regions_read_spanning_title_first() -> None:
    gutter = Box(290, 100, 300, 500)
    title = Box(100, 50, 500, 70)
    regions = [r for r in column_regions([title], gutter, Box(0, 0, 595, 842)) if r.top >= 50]
    assert regions[0] == Box(0, 50, 595, 70)
    assert [r.x0 for r in regions[1:]] == [0, 295]
    assert regions[1].top == regions[2].top == 70


def test_is_vertical() -> None:
    down = [Box(500, 50 + i * 10, 510, 60 + i * 10) for i in range(20)]
    across = [Box(50 + i * 10, 50, 60 + i * 10, 60) for i in range(20)]
    assert is_vertical(down)
    assert not is_vertical(across)
