"""The Markdown line grammar, escaping text lines, and pipe tables from raw cells."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from shirabe.text.markdown import (
    atx_heading,
    cell_text,
    closes_fence,
    escape_line,
    fence_marker,
    is_table_line,
    is_table_separator,
    markdown_table,
    starts_structure,
)


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


@pytest.mark.parametrize(
    ("line", "heading"),
    [
        ("# 見出し", (1, "見出し")),
        ("   ### 三つまでの字下げ", (3, "三つまでの字下げ")),
        ("## 閉じ記号付き ##", (2, "閉じ記号付き")),
        ("######\t六段", (6, "六段")),
        ("####### 七段", None),
        ("    # 四つの字下げはコード", None),
        ("#見出しではない", None),
        ("#\u3000全角空白", None),
        ("#", None),
        ("# #", None),
        ("\\# エスケープ済み", None),
    ],
)
def test_atx_heading(line: str, heading: tuple[int, str] | None) -> None:
    assert atx_heading(line) == heading


@pytest.mark.parametrize(
    ("line", "marker"),
    [
        ("```", "```"),
        ("```python", "```"),
        ("~~~~~~~~", "~~~~~~~~"),
        ("~~~ 何でも `可`", "~~~"),
        ("   ````", "````"),
        ("``", None),
        ("``` a`b", None),
        ("    ```", None),
        ("\\~~~", None),
    ],
)
def test_fence_marker(line: str, marker: str | None) -> None:
    assert fence_marker(line) == marker


def test_closes_fence() -> None:
    assert closes_fence("```", "```")
    assert closes_fence("  `````  ", "```")
    assert not closes_fence("``", "```")
    assert not closes_fence("~~~", "```")
    assert not closes_fence("``` python", "```")
    assert not closes_fence("    ```", "```")


@pytest.mark.parametrize(
    ("line", "table"),
    [("| a | b |", True), ("  |a", True), ("\u3000| 全角空白の後", True), ("a | b", False)],
)
def test_is_table_line(line: str, table: bool) -> None:
    assert is_table_line(line) is table


def test_is_table_separator() -> None:
    assert is_table_separator("|---|:---:|")
    assert is_table_separator("--- | ---")
    assert not is_table_separator("| a | b |")


@pytest.mark.parametrize(
    ("line", "escaped"),
    [
        ("# 見出し風", "\\# 見出し風"),
        ("# 見出し: 1", "\\# 見出し: 1"),
        ("  ## 字下げ", "  \\## 字下げ"),
        ("| a | b |", "\\| a | b |"),
        ("| a: b", "\\| a: b"),
        ("\u3000| 全角空白の後", "\u3000\\| 全角空白の後"),
        ("```", "\\```"),
        ("```: x", "\\```: x"),
        ("~~~", "\\~~~"),
        ("~~~~~~~~", "\\~~~~~~~~"),
        # not structure to the chunker, so left alone
        ("#タグ", "#タグ"),
        ("#", "#"),
        ("#\u3000全角空白", "#\u3000全角空白"),
        ("    # 四つの字下げ", "    # 四つの字下げ"),
        ("``", "``"),
        ("氏名: #1", "氏名: #1"),
        ("a | b", "a | b"),
        ("普通の行", "普通の行"),
        ("", ""),
    ],
)
def test_escape_line(line: str, escaped: str) -> None:
    assert escape_line(line) == escaped


_LINE = st.text(st.sampled_from([" ", "\t", "\u3000", "#", "|", "`", "~", "-", "\\", "a", "見"]))


@given(_LINE)
def test_a_line_is_escaped_exactly_when_it_starts_structure(line: str) -> None:
    escaped = escape_line(line)
    assert (escaped != line) is starts_structure(line)
    assert not starts_structure(escaped)
    if escaped != line:
        assert escaped.replace("\\", "", 1) == line
