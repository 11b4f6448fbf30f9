"""Where an answer quotes its passage: golden tables of folded text and of the spans marked,
counted by hand; the text after each span is there to read the table by."""

from __future__ import annotations

import pytest

from shirabe.engine import Shirabe
from shirabe.evaluation.cases import load_cases
from shirabe.records import Turn, answer_json, with_marks
from shirabe.text.marks import fold, marks

from tests.support import ROOT

# (text, its folded characters, the span of the text each came from)
FOLDED: list[tuple[str, str, list[tuple[int, int]]]] = [
    ("", "", []),
    ("・課長　１２", "課長12", [(1, 2), (2, 3), (4, 5), (5, 6)]),  # full width folded
    ("| 質量 | 約9.2kg |", "質量約9.2kg", [(2, 3), (3, 4), *((i, i + 1) for i in range(7, 13))]),
    ("1. 乾かす", "乾かす", [(3, 4), (4, 5), (5, 6)]),  # the number of an item
    ("9.2kg", "9.2kg", [(i, i + 1) for i in range(5)]),  # a figure, not a number
    ("① 拭く", "拭く", [(2, 3), (3, 4)]),
    ("## 手順", "手順", [(3, 4), (4, 5)]),
    ("ｶﾞｲﾄﾞ", "ガイド", [(0, 2), (2, 3), (3, 5)]),  # a voiced mark written apart
    (
        "AQ-300：9kg",
        "aq3009kg",
        [(0, 1), (1, 2), *((i, i + 1) for i in range(3, 6)), *((i, i + 1) for i in range(7, 10))],
    ),
]


@pytest.mark.parametrize(("text", "chars", "spans"), FOLDED)
def test_fold(text: str, chars: str, spans: list[tuple[int, int]]) -> None:
    folded = fold(text)
    assert folded.chars == chars
    assert list(folded.spans) == spans


HOTEL = "・部長　　１泊あたり１４，０００円\n・課長　　１泊あたり１２，０００円"
SPEC = "| 項目 | 値 |\n| --- | --- |\n| 質量 | 約9.2kg |"
LEAVE = (
    "| 休暇 | 日数 | 期限 |\n| --- | --- | --- |\n"
    "| 本人の結婚 | 5日 | 6か月以内 |\n| 父母の死亡 | 5日 | 1か月以内 |"
)
DAYS = "| 休暇 | 日数 |\n| --- | --- |\n| 本人の結婚 | 5日 |\n| 父母の死亡 | 5日 |"
STEPS = "① 電源を入れる\n● フィルターを外す\n- 水を捨てる\n1. 乾かす"

# (name, passage, answer, citation number, the spans marked as (start, end, passage[start:end]))
MARKED: list[tuple[str, str, str, int | None, list[tuple[int, int, str]]]] = [
    # a row laid out with spaces, quoted as 項目: 値, and only the row asked
    (
        "aligned row",
        HOTEL,
        "課長: １泊あたり１２，０００円[1]",
        1,
        [(19, 35, "課長\u3000\u3000１泊あたり１２，０００円")],
    ),
    ("table row", SPEC, "質量: 約9.2kg", None, [(27, 38, "質量 | 約9.2kg")]),
    (
        "widths",
        "１泊あたり１２，０００円まで",
        "1泊あたり12,000円",
        None,
        [(0, 12, "１泊あたり１２，０００円")],
    ),
    (
        "list markers",
        STEPS,
        "電源を入れる。\nフィルターを外す\n乾かす",
        None,
        [(2, 8, "電源を入れる"), (11, 19, "フィルターを外す"), (31, 34, "乾かす")],
    ),
    ("nothing quoted", "宿泊費は実費を支給する。", "交通費は支給しない。", None, []),
    # 5日 is in two rows: neither is marked; the header 日数 is in one place
    ("ambiguous cell", DAYS, "日数: 5日", None, [(7, 9, "日数")]),
    # the row the longer runs are on decides which 5日
    (
        "cells of one row",
        LEAVE,
        "本人の結婚 — 日数: 5日 / 期限: 6か月以内",
        None,
        [
            (7, 9, "日数"),
            (12, 14, "期限"),
            (39, 44, "本人の結婚"),
            (47, 49, "5日"),
            (52, 57, "6か月以内"),
        ],
    ),
    ("a short line whole", "本体の質量は約9.2kgです。", "9.2kg", None, [(7, 12, "9.2kg")]),
    ("a short run is chance", "本体の質量は約9.2kgです。", "質量は軽い", None, []),
    # only the lines citing [2] (or nothing) are read for citation 2
    (
        "the lines that cite it",
        "有給休暇は3営業日前までに申請する。\n病気休暇は5日まで取得できる。",
        "3営業日前までに申請する。[1]\n病気休暇は5日まで取得できる。[2]",
        2,
        [(19, 34, "病気休暇は5日まで取得できる。")],
    ),
    ("half-width kana", "ｶﾞｲﾄﾞを読んでください", "ガイドを読んで", None, [(0, 9, "ｶﾞｲﾄﾞを読んで")]),
    (
        "bold",
        "**注意**: 水以外を入れないでください。",
        "注意: 水以外を入れないでください",
        None,
        [(2, 21, "注意**: 水以外を入れないでください")],
    ),
    # two quoted lines that touch in the passage are one span
    (
        "merged",
        "右の表示を確認する。電源を切る。",
        "右の表示を確認する。[1]\n電源を切る。[1]",
        1,
        [(0, 16, "右の表示を確認する。電源を切る。")],
    ),
]


@pytest.mark.parametrize(
    ("passage", "answer", "number", "expected"),
    [case[1:] for case in MARKED],
    ids=[case[0] for case in MARKED],
)
def test_marks(
    passage: str, answer: str, number: int | None, expected: list[tuple[int, int, str]]
) -> None:
    found = marks(answer, passage, number)
    assert [(s, e, passage[s:e]) for s, e in found] == expected


def test_a_citation_no_line_names_is_read_against_every_line() -> None:
    assert marks("電源を切ってください。[1]", "必ず電源を切ってください。", 2) == [(2, 13)]


def test_citations_kept_before_marks_are_marked_when_read() -> None:
    old = {"number": 1, "text": "必ず電源を切ってください。", "source": "a.md"}
    marked = {"number": 2, "text": "電源を切る。", "marks": [[0, 3]]}
    assert with_marks([old, marked], "電源を切ってください。[1]") == [
        old | {"marks": [[2, 13]]},
        marked,  # as kept
    ]


@pytest.mark.slow
def test_every_cited_passage_of_the_sample_answers_is_marked(
    sample_app: Shirabe, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every question of eval/sample_docs.yaml asked with the real model; each passage an
    answer cites has at least one span marked (the table of passages cited and marked by
    kind of question is printed)."""
    counts: dict[str, list[int]] = {}
    unmarked: list[str] = []
    history: list[Turn] = []
    dialogue: str | None = None
    for case in load_cases(ROOT / "eval" / "sample_docs.yaml"):
        if case.dialogue is None or case.dialogue != dialogue:
            history = []
        dialogue = case.dialogue
        answer = sample_app.ask(case.question, history=history)
        if dialogue is not None:
            history.append(Turn(case.question, answer.text))
        row = counts.setdefault(case.kind, [0, 0])
        for citation in answer_json(answer)["citations"]:
            row[0] += 1
            row[1] += bool(citation["marks"])
            if not citation["marks"]:
                unmarked.append(f"{case.id} [{citation['number']}]: {answer.text[:80]!r}")
    lines = [f"{'kind':<12}{'cited':>8}{'marked':>8}"]
    lines += [f"{kind:<12}{cited:>8}{marked:>8}" for kind, (cited, marked) in counts.items()]
    total = [sum(row[i] for row in counts.values()) for i in (0, 1)]
    lines.append(f"{'all':<12}{total[0]:>8}{total[1]:>8}")
    with capsys.disabled():
        print("\npassages cited / passages marked\n" + "\n".join(lines))
    assert total[0] > 0
    assert not unmarked, "\n".join(unmarked)
