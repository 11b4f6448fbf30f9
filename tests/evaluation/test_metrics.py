"""Scoring answers and the metrics over cases, on hand-made tables."""

from __future__ import annotations

from typing import Any

import pytest

from shirabe.evaluation.cases import Case, ExpectedSource
from shirabe.evaluation.metrics import (
    CaseResult,
    contains_any,
    first_match_rank,
    hit_at,
    mrr_at,
    percentile,
    refusal_scores,
    report,
    score_case,
    source_matches,
    summarize,
)
from shirabe.records import Answer, Chunk, Hit

from tests.evaluation.results import RESULTS

XLSX = ExpectedSource("情報システム/利用者台帳.xlsx", {"sheet": "利用者一覧"})


PDF = ExpectedSource("製品/ガイド.pdf", {"page": 2})


@pytest.mark.parametrize(
    ("source", "locator", "expected", "match"),
    [
        ("/srv/docs/情報システム/利用者台帳.xlsx", {"sheet": "利用者一覧", "row": 3}, XLSX, True),
        ("情報システム/利用者台帳.xlsx", {"sheet": "利用者一覧"}, XLSX, True),
        ("C:\\docs\\情報システム\\利用者台帳.xlsx", {"sheet": "利用者一覧"}, XLSX, True),
        ("/srv/docs/情報システム/利用者台帳.xlsx", {"sheet": "権限一覧"}, XLSX, False),
        ("/srv/docs/情報システム/利用者台帳.xlsx", {}, XLSX, False),
        # suffix on a path boundary only
        ("/srv/docs/旧情報システム/利用者台帳.xlsx", {"sheet": "利用者一覧"}, XLSX, False),
        ("/srv/docs/製品/ガイド.pdf", {"page": 2}, PDF, True),
        ("/srv/docs/製品/ガイド.pdf", {"page": "2"}, PDF, True),
        ("/srv/docs/製品/ガイド.pdf", {"page": 3}, PDF, False),
        ("/srv/docs/製品/ガイド.pdf", {}, ExpectedSource("製品/ガイド.pdf"), True),
        # a decomposed (NFD) path from macOS still matches
        ("/srv/docs/製品/カ\u3099イト\u3099.pdf", {"page": 2}, PDF, True),
    ],
)
def test_source_matches(
    source: str, locator: dict[str, Any], expected: ExpectedSource, match: bool
) -> None:
    assert source_matches(source, locator, expected) is match


def test_first_match_rank() -> None:
    hits: list[tuple[str, dict[str, Any]]] = [
        ("/d/製品/ガイド.pdf", {"page": 1}),
        ("/d/a.md", {}),
        ("/d/製品/ガイド.pdf", {"page": 2}),
        ("/d/製品/ガイド.pdf", {"page": 2}),
    ]
    assert first_match_rank(hits, PDF) == 3
    assert first_match_rank(hits, ExpectedSource("製品/ガイド.pdf")) == 1
    assert first_match_rank(hits, ExpectedSource("b.md")) is None
    assert first_match_rank([], PDF) is None


@pytest.mark.parametrize(
    ("text", "expected", "found"),
    [
        ("上限は１２，０００円です", ["12,000円"], True),  # full-width in the answer
        ("上限は12,000円です", ["１２，０００円"], True),  # full-width in the case
        ("ＥＲＲ－１０５", ["ERR-105"], True),
        ("上限は12,000円です", ["13,000円", "12000円"], False),
        ("", ["x"], False),
    ],
)
def test_contains_any_after_nfkc(text: str, expected: list[str], found: bool) -> None:
    assert contains_any(text, expected) is found


def test_hit_at_and_mrr() -> None:
    ranks = [1, 3, None, 2, 11]
    assert hit_at(ranks, 1) == pytest.approx(1 / 5)
    assert hit_at(ranks, 3) == pytest.approx(3 / 5)
    assert hit_at(ranks, 5) == pytest.approx(3 / 5)
    # 1 + 1/3 + 0 + 1/2 + 0 (rank 11 is past the depth)
    assert mrr_at(ranks) == pytest.approx((1 + 1 / 3 + 1 / 2) / 5)
    assert mrr_at(ranks, depth=20) == pytest.approx((1 + 1 / 3 + 1 / 2 + 1 / 11) / 5)
    assert hit_at([], 1) is None
    assert mrr_at([]) is None


def test_percentile_interpolates() -> None:
    assert percentile([4.0, 1.0, 3.0, 2.0], 50) == pytest.approx(2.5)
    # position (4 - 1) * 0.95 = 2.85 → 3 + 0.85 * (4 - 3)
    assert percentile([1.0, 2.0, 3.0, 4.0], 95) == pytest.approx(3.85)
    assert percentile([7.0], 95) == 7.0
    assert percentile([], 50) is None


def test_refusal_scores() -> None:
    # (expected refusal, refused)
    pairs = [(True, True), (True, False), (False, True), (False, False), (False, False)]
    scores = refusal_scores(pairs)
    assert scores["refusal_precision"] == pytest.approx(1 / 2)  # 2 refused, 1 right
    assert scores["refusal_recall"] == pytest.approx(1 / 2)  # 2 to refuse, 1 refused
    assert scores["false_refusal_rate"] == pytest.approx(1 / 3)  # 3 answerable, 1 refused
    nothing_refused = refusal_scores([(False, False), (True, False)])
    assert nothing_refused["refusal_precision"] is None
    assert nothing_refused["refusal_recall"] == 0.0


def test_summarize_table() -> None:
    m = summarize(RESULTS)
    # ranks over a, b, c: [1, 2, None]
    assert m["hit@1"] == pytest.approx(1 / 3)
    assert m["hit@3"] == pytest.approx(2 / 3)
    assert m["mrr@10"] == pytest.approx((1 + 1 / 2) / 3)
    assert m["containment"] == pytest.approx(1 / 3)
    # refused: c (wrong), d (right); should refuse: d, e
    assert m["refusal_precision"] == pytest.approx(1 / 2)
    assert m["refusal_recall"] == pytest.approx(1 / 2)
    assert m["false_refusal_rate"] == pytest.approx(1 / 3)
    assert m["latency_p50"] == pytest.approx(0.3)
    assert m["latency_p95"] == pytest.approx(0.4 + 0.8 * 0.1)  # position 4 * 0.95 = 3.8


def test_problems_say_why() -> None:
    assert RESULTS[0].problems == []
    assert RESULTS[1].problems == ["answer lacks every expected substring"]
    assert RESULTS[2].problems == [
        "refused an answerable question",
        "expected source not in hits (top: —)",
    ]
    assert RESULTS[3].problems == []
    assert RESULTS[4].problems == ["answered a question it should refuse"]


def test_score_case_from_an_answer() -> None:
    hits = [
        Hit(Chunk("x", "/c/a.md", id=1), 0.9),
        Hit(Chunk("y", "/c/製品/ガイド.pdf", locator={"page": 2}, id=2), 0.8),
    ]
    answer = Answer("q", "においは２〜３日で消えます。[1]", [], False, hits)
    case = Case("smell", "q", expect_answer=("2〜3日",), expect_source=PDF)
    scored = score_case(case, answer, 0.05)
    assert scored.rank == 2
    assert scored.contained is True
    assert scored.top_source == "/c/a.md"
    assert scored.problems == []


def test_expect_all_needs_every_part() -> None:
    case = Case("two", "q", expect_all=("3.6L", "1年間"))
    both = Answer("q", "容量は約３．６Ｌ[1]、保証は1年間[2]", [], False, [])
    one = Answer("q", "容量は約3.6L[1]", [], False, [])
    assert score_case(case, both, 0.1).contained is True  # compared after NFKC
    assert score_case(case, one, 0.1).contained is False
    mixed = Case("mixed", "q", expect_answer=("約3.6", "3600mL"), expect_all=("1年間",))
    assert score_case(mixed, both, 0.1).contained is True
    assert score_case(mixed, one, 0.1).contained is False


def test_report_rewrites_recorded_paths() -> None:
    missed = CaseResult(
        id="m",
        kind="fact",
        question="?",
        answer="",
        refused=False,
        expect_refusal=False,
        rank=None,
        contained=True,
        has_source=True,
        seconds=0.1,
        top_source="/srv/docs/a.md",
    )
    doc = report([missed], {"top_k": 5}, show_path=lambda p: p.removeprefix("/srv/"))
    [case] = doc["cases"]
    assert case["top_source"] == "docs/a.md"
    assert case["problems"] == ["expected source not in hits (top: docs/a.md)"]
    assert doc["settings"] == {"top_k": 5}
    assert doc["counts"] == {
        "cases": 1,
        "with_source": 1,
        "with_answer": 1,
        "answerable": 1,
        "expect_refusal": 0,
    }
