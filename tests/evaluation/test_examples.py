"""Example questions from headings and from eval cases, on hand-made documents."""

from __future__ import annotations

import pytest

from shirabe.evaluation.cases import Case, ExpectedSource
from shirabe.evaluation.examples import (
    Headings,
    from_cases,
    from_headings,
    in_turns,
    question_for,
    subject_of,
    title_of,
    topic,
)


@pytest.mark.parametrize(
    ("heading", "expected"),
    [
        ("第2章 年次有給休暇", "年次有給休暇"),
        ("第1条（目的）", None),  # generic once its number is gone
        ("第3条（年次有給休暇）", "年次有給休暇"),
        ("1.2 支給日", "支給日"),
        ("第1章第2節 休日", "休日"),
        ("休暇について", "休暇"),
        ("2024年度の計画", "2024年度の計画"),
        ("1. 箱の中身を確かめる", None),  # a verb phrase
        ("（3）消費電力", "消費電力"),
        ("２．設置場所", "設置場所"),
        ("第1章　総則", None),
        ("第2条（定義）", None),  # every rule book defines its words: nothing of this one
        ("第3条 適用範囲", None),
        ("2024", None),
        (
            "INC-2024-0004 メールサーバー証明書の期限切れ",
            "INC-2024-0004 メールサーバー証明書の期限切れ",
        ),
        (
            "本規程の運用に関して各部門長が定める細則および様式の一覧と改訂手続の概要",
            None,
        ),  # a sentence
        ("お手入れ", "お手入れ"),
        ("スマートフォンとつなぐ", None),
    ],
)
def test_topic(heading: str, expected: str | None) -> None:
    assert topic(heading) == expected


def test_the_title_heads_every_path() -> None:
    titled = [("休暇規程",), ("休暇規程", "第1章 総則"), ("休暇規程", "第2章 年次有給休暇")]
    assert title_of(titled, "休暇規程") == "休暇規程"
    chapters = [("第1章 総則", "第1条（目的）"), ("第2章 旅費", "第5条（日当）")]
    assert title_of(chapters, "経費精算規程") == "経費精算規程"
    assert title_of([("お知らせ",)], "掲示") == "掲示"


def test_every_question_names_what_it_is_about() -> None:
    rules = Headings(
        "休暇規程", "人事", [("休暇規程", "第1章 総則"), ("休暇規程", "第2章 年次有給休暇")]
    )
    assert question_for(rules) == "休暇規程の年次有給休暇について教えてください"
    guide = Headings(
        "ミナモ AQ-300 かんたんガイド", "製品", [("ミナモ AQ-300 かんたんガイド", "お手入れ")]
    )
    assert question_for(guide) == "AQ-300のお手入れについて教えてください"  # the product
    dated = Headings(
        "障害記録（2024年）", "情報", [("障害記録（2024年）", "INC-2024-0002 ネットワーク断")]
    )
    assert question_for(dated) == "障害記録のINC-2024-0002 ネットワーク断について教えてください"


@pytest.mark.parametrize(
    ("title", "subject"),
    [
        ("休暇規程", "休暇規程"),
        ("障害記録（2024年）", "障害記録"),
        ("社内システム利用者台帳（2025年4月1日現在）", "社内システム利用者台帳"),
        ("加湿空気清浄機 ミナモ AQ-300 取扱説明書", "AQ-300"),
        ("製品仕様書 加湿空気清浄機 ＡＱ－３００", "AQ-300"),  # full width
        ("全社共通 情報セキュリティ基本方針および運用細則", None),  # long, and no code
    ],
)
def test_subject_of(title: str, subject: str | None) -> None:
    assert subject_of(title) == subject


def test_a_document_whose_subject_has_no_short_name_is_not_asked_about() -> None:
    policy = Headings(
        "全社共通 情報セキュリティ基本方針および運用細則", "総務", [("x", "パスワード")]
    )
    assert question_for(policy) is None


def test_a_document_with_nothing_to_ask_gives_nothing() -> None:
    assert question_for(Headings("お知らせ", "総務", [])) is None
    assert question_for(Headings("お知らせ", "総務", [(), ("お知らせ",)])) is None
    assert (
        question_for(Headings("規程", "総務", [("規程", "第1章 総則"), ("規程", "附則")])) is None
    )


def test_categories_take_turns() -> None:
    docs = [
        Headings("A規程", "人事", [("A規程", "賞与")]),
        Headings("B規程", "人事", [("B規程", "退職金")]),
        Headings("C規程", "人事", [("C規程", "昇給")]),
        Headings("仕様書", "製品", [("仕様書", "消費電力")]),
    ]
    in_order = list(in_turns(docs, lambda d: d.category))
    assert [d.title for d in in_order] == ["A規程", "仕様書", "B規程", "C規程"]
    assert from_headings(in_order, 3) == [
        "A規程の賞与について教えてください",
        "仕様書の消費電力について教えてください",
        "B規程の退職金について教えてください",
    ]
    assert len(from_headings(in_order, 10)) == 4


def test_cases_are_offered_only_for_documents_the_reader_may_read() -> None:
    cases = [
        Case("a", "賞与はいつ支給されますか？", expect_source=ExpectedSource("人事/給与規程.md")),
        Case("b", "社員食堂はありますか？", expect_refusal=True),
        Case("c", "AQ-300の重さは？", expect_source=ExpectedSource("製品/仕様書.md")),
        Case("d", "サーバーの停止時刻は？"),  # names no document: never shown
        Case("e", "それはいつ？", expect_source=ExpectedSource("製品/仕様書.md"), dialogue="x"),
    ]
    readable = {"製品/仕様書.md"}.__contains__
    assert from_cases(cases, readable, 5) == ["AQ-300の重さは？"]
    assert from_cases(cases, lambda _: True, 1) == ["賞与はいつ支給されますか？"]
