"""Yes-or-no questions: the verb asked about, its negation, and a reply that contradicts."""

from __future__ import annotations

import pytest

from shirabe.answering.polarity import asked_verb, contradicts, says_no


@pytest.mark.parametrize(
    ("question", "stem"),
    [
        ("使わなかった分は翌年度に繰り越せますか？", "繰り越"),
        ("AQ-300の箱にミナモクリアは付いていますか？", "付"),
        ("経理部の手本 陽菜さんはVPNを使えますか", "使"),
        ("AQ-300は5GHz帯のWi-Fiにつながりますか？", None),  # no kanji in the verb
        ("病気休暇は1年度に何日まで取れますか？", None),  # asks for a figure
        ("誰の承認が要りますか？", None),
        ("保証期間は？", None),
    ],
)
def test_the_verb_a_yes_or_no_question_asks_about(question: str, stem: str | None) -> None:
    assert asked_verb(question) == stem


@pytest.mark.parametrize(
    ("stem", "text", "no"),
    [
        ("繰り越", "未使用分は翌年度に繰り越さない。", True),
        ("繰り越", "翌年度に限り繰り越すことができる。", False),
        ("使", "VPNは使えません。", True),
        ("認", "タクシーの利用は原則として認めず、", True),
        ("使", "使い方は次のとおり。ずっと使える。", False),
    ],
)
def test_whether_a_text_writes_the_verb_negated(stem: str, text: str, no: bool) -> None:
    assert says_no(stem, text) is no


def test_a_yes_where_the_passage_says_no_contradicts() -> None:
    question = "使わなかった分は翌年度に繰り越せますか？"
    quoted = "病気休暇は年次有給休暇とは別に付与し、未使用分は翌年度に繰り越さない。[1]"
    assert contradicts(question, "はい、使わなかった分は翌年度に繰り越せます。[1]", quoted)
    assert not contradicts(question, "いいえ、翌年度に繰り越しません。[1]", quoted)
    assert not contradicts(question, "はい、繰り越せます。[1]", "翌年度に繰り越すことができる。[1]")
    assert not contradicts("繰り越せる日数は何日ですか？", "はい、5日です。", quoted)
