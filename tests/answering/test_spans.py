"""Candidate spans of a line and their features, on words written by hand."""

from __future__ import annotations

from shirabe.answering import spans
from shirabe.answering.features import question
from shirabe.answering.spans import SPAN_FEATURES, span_features

from tests.answering.test_features import NOUN, NUMERAL, PARTICLE

SUFFIX = ("接尾辞", "名詞的", "一般", "*", "*", "*")
UNIT = ("名詞", "普通名詞", "助数詞可能", "*", "*", "*")
BRACKET_OPEN = ("補助記号", "括弧開", "*", "*", "*", "*")
BRACKET_CLOSE = ("補助記号", "括弧閉", "*", "*", "*", "*")

# 本体ボトル（500mL）と詰め替え用（1200mL）
LINE = [
    ("本体", "本体", NOUN),
    ("ボトル", "ボトル", NOUN),
    ("（", "（", BRACKET_OPEN),
    ("500", "500", NUMERAL),
    ("mL", "mL", UNIT),
    ("）", "）", BRACKET_CLOSE),
    ("と", "と", PARTICLE),
    ("詰め替え", "詰め替え", NOUN),
    ("用", "用", SUFFIX),
    ("（", "（", BRACKET_OPEN),
    ("1200", "1200", NUMERAL),
    ("mL", "mL", UNIT),
    ("）", "）", BRACKET_CLOSE),
]


def test_spans_are_runs_cut_at_brackets_and_particles_with_their_parts() -> None:
    texts = [s.text for s in spans.spans(LINE)]
    assert texts == [
        "本体",
        "本体ボトル",
        "ボトル",
        "500",
        "500mL",
        "mL",
        "詰め替え",
        "詰め替え用",
        "用",
        "1200",
        "1200mL",
        "mL",
    ]
    whole = [s.text for s in spans.spans(LINE) if s.whole]
    assert whole == ["本体ボトル", "500mL", "詰め替え用", "1200mL"]


def test_a_number_with_thousands_separators_is_one_span() -> None:
    words = [("価格", "価格", NOUN), ("54,780", "54,780", NUMERAL), ("円", "円", UNIT)]
    assert [s.text for s in spans.spans(words) if s.whole] == ["価格54,780円"]
    assert "54,780円" in [s.text for s in spans.spans(words)]


def test_the_asked_unit_does_not_place_a_figure_near_the_question() -> None:
    """Both figures carry mL, the unit 何mL asks for: only 詰め替え用 (the question's words,
    one run) says which figure is the one asked, and 1200mL is the nearer to it."""
    words = [("詰め替え", "詰め替え", NOUN), ("用", "用", SUFFIX), ("何mL", "何mL", NOUN)]
    q = question("詰め替え用には何mL入っていますか", words)
    found = [s for s in spans.spans(LINE) if s.whole and s.text.endswith("mL")]
    rows = span_features(q, LINE, found, 0.9, 0)
    at = SPAN_FEATURES.index("distance")
    bottle, refill = (row[at] for row in rows)
    assert refill < bottle
    assert bottle * len(LINE) == 3  # 500mL ends three words before 詰め替え
    assert refill * len(LINE) == 2  # 1200mL starts two words after 用, of the same run
