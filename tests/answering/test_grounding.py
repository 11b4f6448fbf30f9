"""A model's reply keeps only sentences the passages support, cited by the passages that do."""

from __future__ import annotations

import pytest

from shirabe.answering.grounding import (
    check_reply,
    claim_terms,
    complete_sentences,
    figures_of,
    sentences,
)

PASSAGES = {
    1: '<passage id="1" source="AQ-300仕様書.md" heading="仕様">\n'
    "| 項目 | 値 |\n| 消費電力 | 空気清浄運転時 4W |\n| 本体質量 | 約9.2kg |\n</passage>",
    2: '<passage id="2" source="旅費規程.md" heading="宿泊費">\n'
    "部長　　１泊あたり１４，０００円\n東京23区に宿泊する場合は2,000円を加算する。\n</passage>",
    3: '<passage id="3" source="障害報告.md" heading="INC-2024-0004">\n'
    "INC-2024-0004 は 10:42 に復旧した。原因はストレージの容量不足である。\n</passage>",
}


@pytest.mark.parametrize(
    ("sentence", "terms"),
    [
        ("AQ-300の消費電力は4Wです[1]。", ["aq-300", "消費電力"]),
        ("本体の重さは約9.2kgです。", ["本体"]),  # 重さ (one kanji) is not a term; 約 is no term
        ("資料に記載された宿泊費の上限は14,000円です[2]。", ["宿泊費", "上限"]),
        ("ブラウザはChromeを使ってください。", ["ブラウザ", "chrome"]),
        ("以下のとおりです。", []),
    ],
)
def test_the_key_terms_of_a_claim(sentence: str, terms: list[str]) -> None:
    assert claim_terms(sentence) == terms


def test_figures_are_normalised() -> None:
    assert figures_of("上限は１泊１４，０００円、重さ約9.2 kg、3人") == ["14000円", "9.2kg", "3人"]


@pytest.mark.parametrize(
    ("reply", "kept", "dropped"),
    [
        # supported and cited: kept as written
        ("AQ-300の消費電力は4Wです[1]。", "AQ-300の消費電力は4Wです[1]。", []),
        # supported but cited nothing: cited by the passage holding it
        ("本体質量は約9.2kgです。", "本体質量は約9.2kgです[1]。", []),
        # cited the wrong passage (marker after the stop): cited by the right one
        ("本体質量は約9.2kgです。[2]", "本体質量は約9.2kgです[1]。", []),
        # a cited passage adding nothing loses its marker
        ("東京23区では2,000円を加算します[1][2]。", "東京23区では2,000円を加算します[2]。", []),
        # a figure no passage holds: dropped
        ("1か月の電気代は約120円です[1]。", "", ["1か月の電気代は約120円です[1]。"]),
        # the terms of another subject, figure or not: dropped
        (
            "社員食堂の営業時間は食堂棟で案内しています[3]。",
            "",
            ["社員食堂の営業時間は食堂棟で案内しています[3]。"],
        ),
        # prompt markup: dropped
        (
            '<passage id="1">の第1行に記載されています。',
            "",
            ['<passage id="1">の第1行に記載されています。'],
        ),
        # the question asked back instead of an answer: dropped
        ("出張の申請には何を記入しますか[1]？\n", "\n", ["出張の申請には何を記入しますか[1]？"]),
        # no claim, and the refusal sentence: kept
        ("以下のとおりです。\n", "以下のとおりです。\n", []),
        ("ドキュメントに記載がありません。", "ドキュメントに記載がありません。", []),
        # a claim needing two passages: cited by both
        (
            "部長は14,000円で、東京23区は2,000円を加算します。",
            "部長は14,000円で、東京23区は2,000円を加算します[2]。",
            [],
        ),
        (
            "INC-2024-0004は10:42に復旧し、本体質量は約9.2kgです。",
            "INC-2024-0004は10:42に復旧し、本体質量は約9.2kgです[1][3]。",
            [],
        ),
    ],
)
def test_each_sentence_is_cited_by_what_supports_it(
    reply: str, kept: str, dropped: list[str]
) -> None:
    assert check_reply(reply, PASSAGES) == (kept, dropped)


def test_a_reply_keeps_its_supported_sentences_in_order() -> None:
    reply = (
        "消費電力は4Wです[1]。そのため、1か月の電気代は約120円です。"
        '<passage id="1">の第1行に記載されています。宿泊費は１泊１４，０００円です[2]。'
    )
    assert check_reply(reply, PASSAGES) == (
        "消費電力は4Wです[1]。宿泊費は１泊１４，０００円です[2]。",
        ["そのため、1か月の電気代は約120円です。", '<passage id="1">の第1行に記載されています。'],
    )


@pytest.mark.parametrize(
    ("text", "done", "rest"),
    [
        ("一文目。二文", "一文目。", "二文"),
        ("一文目。", "", "一文目。"),  # a marker may still follow the stop
        ("一文目。[1]", "", "一文目。[1]"),
        ("一文目。[", "", "一文目。["),
        ("一文目。[1]二", "一文目。[1]", "二"),
        ("一文目。 次", "一文目。", " 次"),
        ("一文目。二文目。三", "一文目。二文目。", "三"),
    ],
)
def test_sentences_are_checked_once_finished(text: str, done: str, rest: str) -> None:
    assert complete_sentences(text) == (done, rest)


def test_sentences_keep_their_markers_and_join_back() -> None:
    text = "一文目。[1]二文目[2]。\n- 行\n残り"
    assert sentences(text) == ["一文目。[1]", "二文目[2]。", "\n", "- 行\n", "残り"]
    assert "".join(sentences(text)) == text
