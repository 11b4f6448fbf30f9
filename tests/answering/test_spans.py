"""Candidate spans of a line and their features, on words written by hand."""

from __future__ import annotations

from shirabe.answering import spans
from shirabe.answering.features import question
from shirabe.answering.spans import SPAN_FEATURES, span_features

from tests.answering.test_features import NOUN, NUMERAL, PARTICLE, VERB

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


def _words(*pairs: tuple[str, tuple[str, ...]]) -> list[tuple[str, str, tuple[str, ...]]]:
    return [(surface, surface, pos) for surface, pos in pairs]


SPACE = ("空白", "*", "*", "*", "*", "*")
SYMBOL = ("補助記号", "一般", "*", "*", "*", "*")

# この期間を梅雨の中休み（つゆのなかやすみ）という
RAINY = _words(
    ("この", ("連体詞", "*", "*", "*", "*", "*")),
    ("期間", NOUN),
    ("を", PARTICLE),
    ("梅雨", NOUN),
    ("の", PARTICLE),
    ("中休み", NOUN),
    ("（", BRACKET_OPEN),
    ("つゆ", NOUN),
    ("）", BRACKET_CLOSE),
    ("と", PARTICLE),
    ("いう", VERB),
)


def test_runs_joined_by_no_kara_ya_to_are_spans_from_any_word_of_the_first() -> None:
    linked = [(s.text, s.links, s.whole) for s in spans.spans(RAINY) if s.links]
    assert linked == [("梅雨の中休み", ("の",), True)]
    # 5月下旬から6月上旬の頃: two links at most, each run's words ending at the last run
    words = _words(
        ("5", NUMERAL), ("月", UNIT), ("下旬", NOUN), ("から", PARTICLE),
        ("6", NUMERAL), ("月", UNIT), ("上旬", NOUN), ("の", PARTICLE), ("頃", NOUN),
    )  # fmt: skip
    joined = [(s.text, s.links) for s in spans.spans(words) if s.links]
    assert joined == [
        ("5月下旬から6月上旬", ("から",)),
        ("月下旬から6月上旬", ("から",)),
        ("下旬から6月上旬", ("から",)),
        ("5月下旬から6月上旬の頃", ("から", "の")),
        ("月下旬から6月上旬の頃", ("から", "の")),
        ("下旬から6月上旬の頃", ("から", "の")),
        ("6月上旬の頃", ("の",)),
        ("月上旬の頃", ("の",)),
        ("上旬の頃", ("の",)),
    ]


def test_a_link_after_a_gloss_in_brackets_or_a_verb_joins_nothing() -> None:
    # 中休み（つゆ）という: と follows the bracket, not a run
    assert [s.text for s in spans.spans(RAINY) if "と" in s.links] == []
    # 書くと名前: と after a verb
    words = _words(("書く", VERB), ("と", PARTICLE), ("名前", NOUN))
    assert [s.text for s in spans.spans(words)] == ["名前"]


def test_a_gloss_the_tokenizer_keeps_inside_a_word_is_cut_and_ends_the_run() -> None:
    words = _words(("五月雨(さみだれ)", NOUN), ("の", PARTICLE), ("季節", NOUN))
    assert [(s.text, s.start, s.end) for s in spans.spans(words)] == [
        ("五月雨", 0, 1),
        ("季節", 2, 3),
    ]


def test_a_numeral_read_whole_with_separators_and_latin_words_apart_join() -> None:
    words = _words(("2億3,580万", NUMERAL), ("ドル", UNIT))
    assert [s.text for s in spans.spans(words) if s.whole] == ["2億3,580万ドル"]
    words = _words(("16", NUMERAL), ("S", NOUN), (" ", SPACE), ("rRNA", NOUN), ("解析", NOUN))
    assert [s.text for s in spans.spans(words) if s.whole] == ["16S rRNA解析"]
    # a space between Japanese words still cuts
    words = _words(("梅雨", NOUN), (" ", SPACE), ("前線", NOUN))
    assert [s.text for s in spans.spans(words) if s.whole] == ["梅雨", "前線"]


def test_the_particle_after_the_question_word() -> None:
    assert spans.wh_particle("誰が発明したか") == "が"
    assert spans.wh_particle("梅雨の半ばに天気が回復する期間を何という？") == "と"
    assert spans.wh_particle("どの機関から発表されるか") == "から"
    assert spans.wh_particle("何年に完成したか") == "に"  # past the counter
    assert spans.wh_particle("梅雨の期間は？") == ""


def test_a_span_is_described_by_the_words_around_it_against_the_question() -> None:
    """梅雨の中休み is followed (past its reading) by と, the particle after 何 in 何という,
    and by いう, a word of the question; 期間, two words before it past を, is one too; the
    question's words within six words of it, other than its own, are 期間 and いう."""
    words = _words(("期間", NOUN), ("を", PARTICLE), ("何", NOUN), ("と", PARTICLE), ("いう", VERB))
    q = question("期間を何という", words)
    found = [s for s in spans.spans(RAINY) if s.text in {"梅雨の中休み", "期間"}]
    rows = {s.text: dict(zip(SPAN_FEATURES, row, strict=True)) for s, row in zip(
        found, span_features(q, RAINY, found, 0.5, 0), strict=True
    )}  # fmt: skip
    rest = rows["梅雨の中休み"]
    assert (rest["wh_particle_match"], rest["before_in_question"], rest["after_in_question"]) == (
        1.0,
        1.0,
        1.0,
    )
    assert (rest["links"], rest["link_no"], rest["link_kara"]) == (1.0, 1.0, 0.0)
    assert [(t.text, t.weight) for t in q.terms] == [("期間", 2.0), ("いう", 1.0)]
    assert rest["window_cover"] == 1.0  # 期間 three words before, いう five after
    period = rows["期間"]
    assert period["wh_particle_match"] == 0.0  # を follows it
    assert period["window_cover"] == 0.0  # 期間 is its own text; いう is eight words on


def test_the_counter_of_the_question_word() -> None:
    assert spans.wh_counter("信濃川は何県を流れるか") == "県"
    assert spans.wh_counter("何年に完成したか") == "年"
    assert spans.wh_counter("何世紀ごろか") == "世紀"
    assert spans.wh_counter("何か月かかるか") == "か月"
    assert spans.wh_counter("何という") == ""
    assert spans.wh_counter("何が起きたか") == ""
    assert spans.wh_counter("何か問題はありますか") == ""  # not a question word
    assert spans.wh_counter("何故か") == ""


def test_a_figure_in_brackets_belongs_to_the_words_before_them() -> None:
    """In 本体ボトル（500mL）と詰め替え用（1200mL）, 1200mL is said of 詰め替え用, the
    question's words; 500mL of 本体ボトル, and the 詰め替え after its bracket is not its."""
    words = [("詰め替え", "詰め替え", NOUN), ("用", "用", SUFFIX), ("何mL", "何mL", NOUN)]
    q = question("詰め替え用には何mL入っていますか", words)
    found = [s for s in spans.spans(LINE) if s.whole and s.text.endswith("mL")]
    rows = [
        dict(zip(SPAN_FEATURES, row, strict=True)) for row in span_features(q, LINE, found, 0.9, 0)
    ]
    bottle, refill = rows
    assert [(t.text, t.weight) for t in q.terms] == [("詰め替え", 2.0)]  # 何mL is asked
    assert (bottle["owner_cover"], refill["owner_cover"]) == (0.0, 1.0)
    # the tokenizer reads 詰め替え as a verb: the owner is still 詰め替え用
    as_verb = [*LINE[:7], ("詰め替え", "詰め替え", VERB), *LINE[8:]]
    rows = [
        dict(zip(SPAN_FEATURES, r, strict=True)) for r in span_features(q, as_verb, found, 0.9, 0)
    ]
    assert [r["owner_cover"] for r in rows] == [0.0, 1.0]
    assert bottle["after_in_question"] == refill["after_in_question"] == 0.0


def test_a_short_answer_is_put_first_only_for_a_question_asked_by_word() -> None:
    assert spans.asks_by_word("夏季一斉休業中の8月14日の当番は誰ですか？")
    assert spans.asks_by_word("海外出張の日当は1日いくらですか？")
    assert spans.asks_by_word("梅雨の半ばに一旦天気が回復する期間を何という？")
    assert not spans.asks_by_word("AQ-300にERR-107と表示されました。運転は止まりますか？")
    assert not spans.asks_by_word("AQ-300の空気清浄の適用床面積は？")
    # words that only look like question words
    assert not spans.asks_by_word("何か問題はありますか")
    assert not spans.asks_by_word("全国で使えますか")
    assert not spans.asks_by_word("名前は変更できますか")


def test_a_family_and_given_name_apart_are_one_span() -> None:
    given = ("名詞", "固有名詞", "人名", "名", "*", "*")
    words = _words(("当番", NOUN), (":", SYMBOL), (" ", SPACE), ("例", NOUN), ("田", SUFFIX))
    words += _words((" ", SPACE), ("太郎", given))
    assert [s.text for s in spans.spans(words) if s.whole] == ["当番", "例田 太郎"]
    # a space read with no part of speech neither begins nor ends a span
    words = [*words[:5], (" ", " ", ()), words[6]]
    assert [s.text for s in spans.spans(words) if " " in s.text] == ["例田 太郎", "田 太郎"]
