"""The Markdown converter's pieces: HTML whitespace and table spans."""

from __future__ import annotations

import pytest

from shirabe.loaders.html.convert import Cell, collapse_space, table_grid


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("本日は\n  晴天です。", "本日は晴天です。"),
        ("Hello\n  world", "Hello world"),
        ("東京 大阪", "東京 大阪"),
        ("  前後の空白  ", "前後の空白"),
        ("一行目\x00二行目", "一行目\n二行目"),
        ("全角\u3000空白", "全角\u3000空白"),
    ],
)
def test_collapse_space(raw: str, expected: str) -> None:
    assert collapse_space(raw) == expected


def test_table_grid_expands_row_and_column_spans() -> None:
    rows = [
        [Cell("a", rowspan=3), Cell("b"), Cell("c")],
        [Cell("d", colspan=2)],
        [Cell("e"), Cell("f", rowspan=2)],
        [Cell("g"), Cell("h")],
    ]
    assert table_grid(rows) == [
        ["a", "b", "c"],
        ["a", "d", "d"],
        ["a", "e", "f"],
        ["g", "h", "f"],
    ]


def test_table_grid_ragged_rows() -> None:
    assert table_grid([[Cell("x")], [Cell("y"), Cell("z")]]) == [["x"], ["y", "z"]]
    assert table_grid([[Cell("a", rowspan=2), Cell("b", rowspan=3)], [], [Cell("c")]]) == [
        ["a", "b"],
        ["a", "b"],
        ["c", "b"],
    ]
