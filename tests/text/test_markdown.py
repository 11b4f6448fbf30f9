"""Markdown pipe tables from raw cells."""

from __future__ import annotations

import pytest

from shirabe.text.markdown import cell_text, markdown_table


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, ""),
        ("  a\n b ", "a b"),
        ("A|B", "A\\|B"),
        (12, "12"),
    ],
)
def test_cell_text(value: object, expected: str) -> None:
    assert cell_text(value) == expected


def test_short_rows_are_padded_and_empty_columns_dropped() -> None:
    rows: list[list[str | None]] = [
        ["項目", None, "値"],
        ["容量", None],
        [None, None, None],
        ["色", "", "白"],
    ]
    assert markdown_table(rows) == "\n".join(
        [
            "| 項目 | 値 |",
            "|---|---|",
            "| 容量 |  |",
            "| 色 | 白 |",
        ]
    )


def test_a_table_without_text_renders_nothing() -> None:
    assert markdown_table([[None, ""], []]) == ""
