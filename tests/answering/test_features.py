"""Candidate features: hand-computed values for small questions and lines."""

from __future__ import annotations

import pytest

from shirabe.answering import features
from shirabe.answering.features import (
    LINE_FEATURES,
    QUESTION_FEATURES,
    Line,
    Term,
    covered_weight,
    held_in_part,
    line_features,
    other_spellings,
    question,
    question_features,
    question_terms,
    weight_of,
    with_spellings,
)
from shirabe.training.figures import auc, choose_threshold

NOUN = ("名詞", "普通名詞", "一般", "*", "*", "*")
PROPER = ("名詞", "固有名詞", "一般", "*", "*", "*")
NUMERAL = ("名詞", "数詞", "*", "*", "*", "*")
VERB = ("動詞", "一般", "*", "*", "*", "*")
AUX_VERB = ("動詞", "非自立可能", "*", "*", "*", "*")
PARTICLE = ("助詞", "格助詞", "*", "*", "*", "*")


@pytest.mark.parametrize(
    ("word", "weight"),
    [
        (("AQ-300", "AQ-300", NOUN), 3.0),  # a code, whatever its part of speech
        (("札幌", "札幌", PROPER), 3.0),
        (("3", "3", NUMERAL), 2.0),
        (("容量", "容量", NOUN), 2.0),
        (("水", "水", NOUN), 1.0),  # one character says less
        (("入る", "入る", VERB), 1.0),
        (("する", "する", AUX_VERB), 0.0),
        (("の", "の", PARTICLE), 0.0),
        (("何", "何", ("代名詞", "*", "*", "*", "*", "*")), 0.0),
        (("何回", "何回", NOUN), 0.0),  # the question word with its counter: what is asked
        (("何番", "何番", NOUN), 0.0),
        (("場合", "場合", NOUN), 0.0),  # holds a place, names nothing
    ],
)
def test_weight_of_a_word(word: features.Word, weight: float) -> None:
    assert weight_of(word) == weight


def test_question_terms_are_folded_and_kept_once_at_their_highest_weight() -> None:
    words = [
        ("ＡＱ-300", "AQ-300", NOUN),
        ("の", "の", PARTICLE),
        ("容量", "容量", NOUN),
        ("容量", "容量", NOUN),
        ("は", "は", PARTICLE),
    ]
    assert question_terms(words) == [Term("aq-300", 3.0, code=True), Term("容量", 2.0)]


def test_a_code_the_tokenizer_splits_is_one_term() -> None:
    symbol = ("補助記号", "一般", "*", "*", "*", "*")
    words = [
        ("INC", "inc", NOUN),
        ("-", "-", symbol),
        ("2024", "2024", NUMERAL),
        ("-", "-", symbol),
        ("0004", "0004", NUMERAL),
        ("の", "の", PARTICLE),
        ("原因", "原因", NOUN),
    ]
    assert question_terms(words) == [Term("inc-2024-0004", 3.0, code=True), Term("原因", 2.0)]
    # a space ends a code; plain numbers in a row are no code
    apart = [("16", "16", NUMERAL), ("S", "s", NOUN), (" ", " ", ("空白",)), ("rRNA", "rrna", NOUN)]
    assert question_terms(apart) == [Term("16s", 3.0, code=True), Term("rrna", 2.0)]
    assert question_terms([("2024", "2024", NUMERAL), ("年", "年", NOUN)]) == [
        Term("2024", 2.0),
        Term("年", 1.0),
    ]


def test_the_counter_after_a_question_word_is_asked_not_a_term() -> None:
    counter = ("名詞", "普通名詞", "助数詞可能", "*", "*", "*")
    words = [("何", "何", ("代名詞", "*", "*", "*", "*", "*")), ("年", "年", counter)]
    founded = [*words, ("に", "に", PARTICLE), ("設立", "設立", NOUN)]
    assert question_terms(founded) == [Term("設立", 2.0)]
    # the same counter elsewhere is a word of the question
    assert question_terms([("年", "年", counter), ("会費", "会費", NOUN)]) == [
        Term("年", 0.5),
        Term("会費", 2.0),
    ]


def test_covered_weight() -> None:
    terms = [Term("aq-300", 3.0, code=True), Term("容量", 2.0), Term("入る", 1.0)]
    assert covered_weight(terms, "aq-300の仕様") == pytest.approx(3 / 6)
    assert covered_weight(terms, "容量に入る") == pytest.approx(3 / 6)
    assert covered_weight(terms, "") == 0.0
    assert covered_weight([], "何でも") == 0.0


def test_a_term_is_said_in_its_other_spellings_too() -> None:
    terms = [Term("はんこ", 2.0, spellings=("印鑑",)), Term("大きさ", 2.0)]
    assert covered_weight(terms, "登録する印鑑の大きさ") == 1.0
    assert covered_weight(terms, "はんこを押す") == pytest.approx(1 / 2)
    assert covered_weight(terms, "印章の寸法") == 0.0
    assert terms[0].said_in("印鑑登録") and not terms[1].said_in("印鑑登録")


@pytest.mark.parametrize(
    ("groups", "written", "expected"),
    [
        # only the words of the group that the passages write
        (
            {"はんこ": ["はんこ", "印鑑", "印章", "判子"]},
            "印鑑登録の判子",
            {"はんこ": ("判子", "印鑑")},
        ),
        # folded as the terms are (ＳＩＺＥ is size), the term itself is not its own spelling
        ({"大きさ": ["SIZE", "大きさ"]}, "size: 50mm", {"大きさ": ("size",)}),
        # one character is too short to tell from part of another word
        ({"はんこ": ["印", "印鑑"]}, "印鑑でなく印", {"はんこ": ("印鑑",)}),
        # nothing written, nothing given
        ({"はんこ": ["印鑑"]}, "署名で足ります", {}),
        # a code is never respelled
        ({"aq-300": ["aq300"]}, "aq300の仕様", {}),
    ],
)
def test_other_spellings(
    groups: dict[str, list[str]], written: str, expected: dict[str, tuple[str, ...]]
) -> None:
    terms = [Term("はんこ", 2.0), Term("大きさ", 2.0), Term("aq-300", 3.0, code=True)]
    assert other_spellings(terms, groups, written) == expected


def test_with_spellings_keeps_everything_else() -> None:
    words = [("国保", "国民健康保険", NOUN), ("は", "は", PARTICLE), ("何", "何", NOUN)]
    q = question("国保は何回払いですか", words)
    respelled = with_spellings(q, {"国保": ("国民健康保険",)})
    assert respelled.terms == (Term("国保", 2.0, spellings=("国民健康保険",)),)
    assert (respelled.text, respelled.kind, respelled.negated) == (q.text, q.kind, q.negated)
    assert with_spellings(q, {}) is q


@pytest.mark.parametrize(
    ("term", "text", "share"),
    [
        (Term("担当者", 2.0), "担当: 例田 次郎", 1.0),  # 担当 of 担当者
        (Term("内線番号", 2.0), "内線: 2440", 1.0),  # 内線 is half of 内線番号
        (Term("転出証明書", 2.0), "転出届", 0.0),  # 転出 is less than half of it
        (Term("担当者", 2.0), "担当者: 例田", 0.0),  # held whole, not in part
        (Term("inc-2024-0005", 3.0, code=True), "inc-2024-0004", 0.0),  # a code is whole or not
        (Term("印鑑", 2.0), "印章", 0.0),  # one character is no part
    ],
)
def test_held_in_part(term: Term, text: str, share: float) -> None:
    assert held_in_part([term], text) == share
    assert held_in_part([term, Term("x", 0.0)], text) == share
    assert held_in_part([], text) == 0.0


def _line(text: str, **kw: object) -> Line:
    base: dict[str, object] = {
        "text": text,
        "order": 0,
        "lines": 2,
        "hit_index": 0,
        "passage": text,
        "headings": "",
        "before": "",
        "is_record": False,
        "is_summary": False,
        "ranks": {"bm25": 1, "dense": 2},
        "scores": {"bm25": 10.0, "dense": 0.9, "dense_sentence": 0.92},
        "fused": 2.0,
        "dense": 0.9,
        "lexical": 0.5,
    }
    base.update(kw)
    return Line(**base)  # type: ignore[arg-type]


def test_line_features_by_hand() -> None:
    words = [("AQ-300", "AQ-300", NOUN), ("重さ", "重さ", NOUN), ("は", "は", PARTICLE)]
    q = question("AQ-300の重さは何kgですか", words)
    first = _line("質量: 約9.2kg", passage="型番: AQ-300\n質量: 約9.2kg", order=1)
    second = _line(
        "電源は100V",
        hit_index=1,
        fused=1.0,
        dense=0.8,
        lexical=0.25,
        ranks={"dense": 1},
        scores={"bm25": 5.0, "dense": 0.85},
    )
    peers = [first, second]
    got = dict(zip(LINE_FEATURES, line_features(q, first, peers), strict=True))
    assert got["hit_index"] == 0.0
    assert got["fused_ratio"] == 1.0
    assert got["rank_bm25"] == 1.0 and got["rank_bm25_sentence"] == features.MISSING_RANK
    assert got["bm25_ratio"] == 1.0
    assert got["dense_gap"] == 0.0 and got["dense_rank"] == 0.0
    assert got["cover_line"] == 0.0  # neither AQ-300 nor 重さ is in 質量: 約9.2kg
    assert got["cover_passage"] == pytest.approx(3 / 5)
    assert got["uncovered_weight"] == 2.0  # 重さ
    assert got["codes_asked"] == 1.0 and got["codes_missing"] == 0.0
    assert got["asks_number"] == 1.0 and got["asks_none"] == 0.0
    assert got["holds_kind"] == 1.0 and got["has_number"] == 1.0
    assert got["is_field"] == 1.0 and got["field_named"] == 0.0
    assert got["order_share"] == 1.0
    other = dict(zip(LINE_FEATURES, line_features(q, second, peers), strict=True))
    assert other["fused_ratio"] == 0.5 and other["bm25_ratio"] == 0.5
    assert other["dense_gap"] == pytest.approx(0.1) and other["dense_rank"] == 1.0
    assert other["lexical_gap"] == 0.25 and other["lexical_rank"] == 1.0
    assert other["codes_missing"] == 1.0 and other["holds_kind"] == 0.0
    assert other["uncovered_weight"] == 5.0


def test_line_features_read_a_terms_other_spellings() -> None:
    words = [("はんこ", "判子", NOUN), ("大きさ", "大きさ", NOUN), ("は", "は", PARTICLE)]
    plain = question("はんこの大きさは", words)
    respelled = with_spellings(plain, {"はんこ": ("印鑑",)})
    line = _line("印鑑の大きさは25mm以内", passage="印鑑登録\n印鑑の大きさは25mm以内")
    before = dict(zip(LINE_FEATURES, line_features(plain, line, [line]), strict=True))
    after = dict(zip(LINE_FEATURES, line_features(respelled, line, [line]), strict=True))
    assert before["cover_line"] == pytest.approx(1 / 2) and before["uncovered_weight"] == 2.0
    assert (after["cover_line"], after["uncovered_weight"]) == (1.0, 0.0)


def test_question_features_by_hand() -> None:
    words = [("札幌", "札幌", PROPER), ("人口", "人口", NOUN)]
    q = question("札幌の人口は？", words)
    lines = [_line("札幌の人口は約197万人。"), _line("函館は港町。", hit_index=1)]
    rows = [line_features(q, x, lines) for x in lines]
    got = dict(zip(QUESTION_FEATURES, question_features(q, rows, [0.2, 0.7]), strict=True))
    assert got["best"] == 0.7 and got["second"] == 0.2 and got["margin"] == pytest.approx(0.5)
    assert got["best_hit_index"] == 1.0
    assert got["mass_top3"] == pytest.approx(0.9)
    assert got["best_cover_line"] == 0.0 and got["max_cover_all"] == 1.0
    assert got["min_uncovered"] == 0.0 and got["best_uncovered"] == 5.0
    assert got["top_dense_sentence"] == 0.92
    assert got["question_weight"] == 5.0
    empty = dict(zip(QUESTION_FEATURES, question_features(q, [], []), strict=True))
    assert empty["best"] == 0.0 and empty["min_uncovered"] == 5.0


@pytest.mark.parametrize(
    ("values", "rate", "threshold"),
    [
        ([0.1, 0.5, 0.6, 0.7, 0.9], 0.2, 0.5),  # one of five may fall: 0.1
        ([0.1, 0.5, 0.6, 0.7, 0.9], 0.0, 0.1),
        ([0.1234, 0.9], 0.5, 0.9),
        ([], 0.03, 0.0),
    ],
)
def test_choose_threshold(values: list[float], rate: float, threshold: float) -> None:
    assert choose_threshold(values, rate) == threshold
    assert sum(v < threshold for v in values) <= rate * len(values)


def test_auc_by_hand() -> None:
    import numpy as np

    assert auc(np.asarray([0.1, 0.4, 0.35, 0.8]), np.asarray([0, 0, 1, 1])) == 0.75
    assert auc(np.asarray([0.5, 0.5]), np.asarray([0, 1])) == 0.5
