"""Lines to Markdown: joining, paragraph breaks, headings and their levels."""

from __future__ import annotations

import pytest

from shirabe.loaders.pdf.lines import (
    HeadingTracker,
    Line,
    join_text,
    lines_to_markdown,
    settle_blocks,
    tidy_ocr_text,
)


@pytest.mark.parametrize(
    ("left", "right", "joined"),
    [
        ("化粧品基準を", "次のように定め", "化粧品基準を次のように定め"),
        ("retrieval can be", "practically implemented", "retrieval can be practically implemented"),
        ("representa-", "tions", "representations"),
        ("平成 13 年", "4 月", "平成 13 年4 月"),
        ("BM25 を", "使う", "BM25 を使う"),
    ],
)
def test_join_text(left: str, right: str, joined: str) -> None:
    assert join_text(left, right) == joined


def _line(text: str, row: int, x1: float = 500.0, x0: float = 50.0, size: float = 10.0) -> Line:
    return Line(text, x0, 100 + row * 14, x1, 110 + row * 14, size)


def test_lines_to_markdown_joins_and_breaks_paragraphs() -> None:
    lines = [
        _line("化粧品の原料は、それに含有される不純物等も含め、感染のおそれがある物を含", 0),
        _line("む等その使用によって保健衛生上の危険を生じるおそれがある物であってはなら", 1),
        _line("ない。", 2, x1=80),
        _line("化粧品は、医薬品の成分を配合してはならない。", 3, x1=300),
        _line("Retrieval in open-domain QA is usually", 5),
        _line("implemented using TF-IDF or BM25.", 6, x1=300),
    ]
    blocks = lines_to_markdown(lines, HeadingTracker())
    assert blocks == [
        "化粧品の原料は、それに含有される不純物等も含め、感染のおそれがある物を含む等その使用に"
        "よって保健衛生上の危険を生じるおそれがある物であってはならない。",
        "化粧品は、医薬品の成分を配合してはならない。",
        "Retrieval in open-domain QA is usually implemented using TF-IDF or BM25.",
    ]


def test_lines_to_markdown_headings() -> None:
    lines = [
        _line("第1章 総則", 0, x1=120),
        _line("第1条（目的）", 1, x1=120),
        _line("この規程は、社員の出張旅費について定める。", 2, x1=300),
        _line("１ 総則", 3, x1=100),
        _line("総則を定める。", 4, x1=150),
        _line("Overview of the results", 5, x1=250, size=16.0),
        _line("1 Allen Institute for AI", 6, x1=200, size=8.0),
        _line("91-504 Łódź 02-092 Warszawa", 7, x1=200),
        _line("5 化粧品に配合されるグリセリンは、当該成分100g 中ジエチレングリコール0.1g", 8),
    ]
    blocks = lines_to_markdown(lines, HeadingTracker(), size=10.0)
    assert blocks[:6] == [
        "## 第1章 総則",
        "### 第1条（目的）",
        "この規程は、社員の出張旅費について定める。",
        "### １ 総則",
        "総則を定める。",
        "### Overview of the results",
    ]
    assert not any(b.startswith("#") for b in blocks[6:])


@pytest.mark.parametrize(
    ("blocks", "expected"),
    [
        (
            ["## 4 塩化ビニル", "## 5 塩化メチレン", "本文"],
            ["4 塩化ビニル\n5 塩化メチレン", "本文"],
        ),
        (["## 研究の背景", "本文"], ["## 研究の背景", "本文"]),
        (["## 総則", "### 目的", "本文"], ["## 総則", "### 目的", "本文"]),
        (["## 第1条 目的", "## 第2条 定義"], ["## 第1条 目的", "## 第2条 定義"]),
        (
            ["•", "固有表現抽出：", "-", "## 機械学習を用いる"],
            ["- 固有表現抽出：", "- 機械学習を用いる"],
        ),
        (["本文", "•"], ["本文", "•"]),
    ],
)
def test_settle_blocks(blocks: list[str], expected: list[str]) -> None:
    assert settle_blocks(blocks) == expected


def test_body_text_that_looks_like_structure_is_escaped() -> None:
    """A page's text line is prose even when it starts like a Markdown heading, fence or table
    row, so the chunker never opens a section, a code block or a table from it."""
    for text in ("# 3 units per box are shipped.", "| see the table on page 4", "~~~ end ~~~"):
        assert lines_to_markdown([_line(text, 0, x1=300)], HeadingTracker()) == ["\\" + text]
    assert tidy_ocr_text("# 見出しではない\n本文 です") == "\\# 見出しではない\n本文です"
