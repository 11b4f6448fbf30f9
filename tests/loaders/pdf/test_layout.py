"""Pure PDF text helpers: garbage detection, columns, vertical text, line joining, titles."""

from __future__ import annotations

import pytest

from shirabe.loaders.pdf.layout import (
    Box,
    HeadingTracker,
    Line,
    column_regions,
    find_gutter,
    is_vertical,
    join_text,
    lines_to_markdown,
    meaningful_title,
    merge_sparse_columns,
    settle_blocks,
    text_quality,
)

GOOD_JA = "化粧品に配合される防腐剤は、別表第3に掲げる物でなければならない。"
GOOD_EN = "Dense passage retrieval outperforms BM25 on open-domain question answering."

QUALITY = [
    ("good Japanese", GOOD_JA, True),
    ("good English", GOOD_EN, True),
    ("good Korean", "적립 혜택은 매출전표 접수 시점 기준으로 적용", True),
    ("good Czech", "Peněžní prostředky na účtech", True),
    ("cid runs", "(cid:12)(cid:40)(cid:7) (cid:88)(cid:3)", False),
    ("cid in a good page", GOOD_JA * 3 + "(cid:1)", True),
    ("replacement chars", "\ufffd\ufffd\ufffdテスト\ufffd\ufffd", False),
    ("private use", "\ue000\ue001\ue002\ue003abc", False),
    ("control chars", "3HQČåQt\x03SURVWĜHGN\\\x03QD\x03~þWHFK", False),
    ("utf-8 read as latin-1", "ã\x81\x82ã\x81\x84ã\x81\x86ã\x81\x88", False),
    ("utf-8 read as cp1252", "æ—¥æœ¬èªžã®æ–‡æ›¸", False),
    ("glyph ids as code points", "ίϯύϥϒϧͳ৽ฉࣄه͔Βͷݻ༗දݱͷൃݟ", False),
    ("rare symbol run", "平成™—年›月™œ日" * 2 + "™—›œŸ˜" * 3, False),
    ("a few odd glyphs", GOOD_EN * 2 + " ™ § ¶", True),
    ("accented Latin-1 prose", "Café déjà vu à la carte, naïve façade.", True),
    ("empty", "   \n ", False),
]


@pytest.mark.parametrize(("name", "text", "usable"), QUALITY, ids=[q[0] for q in QUALITY])
def test_text_quality_golden_table(name: str, text: str, usable: bool) -> None:
    quality = text_quality(text)
    assert quality.usable is usable, (name, quality)


def test_text_quality_names_its_reasons() -> None:
    assert "cid" in text_quality("(cid:1)(cid:2)").reasons
    assert "mixed scripts" in text_quality("ίϯύϥϒϧͳ৽ฉࣄه͔Βͷݻ༗දݱ").reasons
    assert text_quality(GOOD_JA).reasons == ()


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


def test_merge_sparse_columns() -> None:
    rows = [["１．見出し", "", "", ""], ["", "項目", "", "期限"], ["(1)", "", "評価書", "令和3年"]]
    assert merge_sparse_columns(rows) == [
        ["１．見出し", "", ""],
        ["項目", "", "期限"],
        ["(1)", "評価書", "令和3年"],
    ]


@pytest.mark.parametrize(
    ("raw", "title"),
    [
        ("Microsoft Word - 化粧品基準（H280601改正反映版）", "化粧品基準（H280601改正反映版）"),
        ("Microsoft Word - test-ocr.docx", None),
        ("zen_of_python.txt", None),
        ("MEDRPT-2024-PAT-3847_medical_report_scan", None),
        ("", None),
        (None, None),
        ("Dense Passage Retrieval", "Dense Passage Retrieval"),
        ("出張旅費規程.docx", "出張旅費規程"),
    ],
)
def test_meaningful_title(raw: str | None, title: str | None) -> None:
    assert meaningful_title(raw) == title


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
