"""Plain-text structure becoming Markdown headings."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from shirabe.loaders.plaintext import plain_text_to_markdown

GOLDEN: list[tuple[str, str, str]] = [
    ("paragraph unchanged", "交通費は実費を支給する。", "交通費は実費を支給する。"),
    (
        "bullets unchanged",
        "・一泊一万円まで\n・食費は含まない",
        "・一泊一万円まで\n・食費は含まない",
    ),
    ("hash escaped", "# 見出しではない", "\\# 見出しではない"),
    ("indented hash escaped", "  ## 番号", "  \\## 番号"),
    ("hash without a space unchanged", "#タグ", "#タグ"),
    ("pipe escaped", "| 列 | 値 |", "\\| 列 | 値 |"),
    ("tilde separator escaped", "~~~~~~~~", "\\~~~~~~~~"),
    ("backtick fence escaped", "```", "\\```"),
    ("chapter arabic", "第1章 総則", "# 第1章 総則\n"),
    ("chapter full-width", "第１章\u3000総則", "# 第１章\u3000総則\n"),
    ("chapter kanji", "第十二章 雑則", "# 第十二章 雑則\n"),
    ("chapter alone", "第3章", "# 第3章\n"),
    ("section", "第2節 国内出張", "## 第2節 国内出張\n"),
    ("article without chapter", "第1条（目的）", "# 第1条（目的）\n"),
    ("article under chapter", "第1章 総則\n第1条（目的）", "# 第1章 総則\n\n## 第1条（目的）\n"),
    (
        "article under section",
        "第1章 旅費\n第1節 国内\n第5条 日当",
        "# 第1章 旅費\n\n## 第1節 国内\n\n### 第5条 日当\n",
    ),
    (
        "new chapter resets section",
        "第1節 国内\n第2章 海外\n第9条 支度料",
        "## 第1節 国内\n\n# 第2章 海外\n\n## 第9条 支度料\n",
    ),
    ("article branch number", "第3条の2（特例）", "# 第3条の2（特例）\n"),
    (
        "article with sentence is split",
        "第2条 この規程は役員にも適用する。",
        "# 第2条\n\nこの規程は役員にも適用する。\n",
    ),
    (
        "article caption with sentence is split",
        "第1条（目的）この規程は旅費について定める。",
        "# 第1条（目的）\n\nこの規程は旅費について定める。\n",
    ),
    ("chapter reference in prose", "第1章で述べたとおり", "第1章で述べたとおり"),
    ("bracket caption", "【交通費】", "# 交通費\n"),
    ("square caption", "■ 宿泊費", "# 宿泊費\n"),
    ("indented caption", "\u3000■Apache Solr", "# Apache Solr\n"),
    ("other markers", "□ 日当\n◆ 精算\n◇ 例外\n● 注意", "# 日当\n\n# 精算\n\n# 例外\n\n# 注意\n"),
    ("caption under chapter", "第2章 旅費\n【交通費】", "# 第2章 旅費\n\n## 交通費\n"),
    ("caption under section", "第2節 国内\n■ 宿泊費", "## 第2節 国内\n\n### 宿泊費\n"),
    ("marker alone is not a heading", "■", "■"),
    ("caption with sentence stays", "■ 領収書は必ず提出すること。", "■ 領収書は必ず提出すること。"),
    ("bracket with trailing text stays", "【注意】領収書を添付", "【注意】領収書を添付"),
    ("long caption stays", "■ " + "あ" * 45, "■ " + "あ" * 45),
    (
        "blank lines around headings",
        "前文\n【交通費】\n実費を支給する。",
        "前文\n\n# 交通費\n\n実費を支給する。",
    ),
    (
        "existing blank lines not doubled",
        "前文\n\n【交通費】\n\n実費を支給する。\n",
        "前文\n\n# 交通費\n\n実費を支給する。\n",
    ),
]


@pytest.mark.parametrize(
    ("text", "expected"), [(t, e) for _, t, e in GOLDEN], ids=[i for i, _, _ in GOLDEN]
)
def test_golden(text: str, expected: str) -> None:
    assert plain_text_to_markdown(text) == expected


def test_expense_rules_document() -> None:
    text = (
        "出張旅費規程\n"
        "第1章 総則\n"
        "第1条（目的）\n"
        "この規程は、社員の出張旅費について定める。\n"
        "第2章 旅費\n"
        "【交通費】\n"
        "最も経済的な経路の実費を支給する。\n"
        "■ 宿泊費\n"
        "・一泊一万円まで\n"
    )
    assert plain_text_to_markdown(text) == (
        "出張旅費規程\n\n"
        "# 第1章 総則\n\n"
        "## 第1条（目的）\n\n"
        "この規程は、社員の出張旅費について定める。\n\n"
        "# 第2章 旅費\n\n"
        "## 交通費\n\n"
        "最も経済的な経路の実費を支給する。\n\n"
        "## 宿泊費\n\n"
        "・一泊一万円まで\n"
    )


_PROSE = st.text(
    st.characters(exclude_categories=["Cs"], exclude_characters="#|`~第■□◆◇●【"),
)


@given(_PROSE)
def test_text_without_markers_is_unchanged(text: str) -> None:
    assert plain_text_to_markdown(text) == text


def test_an_article_line_going_on_into_text_escapes_that_text() -> None:
    text = "第3条 | 申請書は所属長の承認を得て提出する。"
    assert plain_text_to_markdown(text) == "# 第3条\n\n\\| 申請書は所属長の承認を得て提出する。\n"


def test_markdown_already_escaped_keeps_its_tables() -> None:
    text = "第1章 総則\n| 項目 | 値 |\n|---|---|\n| 日当 | 2000 |"
    assert plain_text_to_markdown(text, escape=False) == (
        "# 第1章 総則\n\n| 項目 | 値 |\n|---|---|\n| 日当 | 2000 |"
    )
