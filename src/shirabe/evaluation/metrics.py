"""Scoring answers: each case against what it expects, then the metrics over all cases.

Everything here is a pure function of plain data, so the metrics can be checked against small
hand-computed tables.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any

from shirabe.evaluation.cases import Case, ExpectedSource

if TYPE_CHECKING:
    from shirabe.records import Answer

# Overall metrics, in report order. Latency is reported but never gates.
RETRIEVAL_METRICS = ("hit@1", "hit@3", "hit@5", "mrr@10")
ANSWER_METRICS = (
    "containment",
    "refusal_precision",
    "refusal_recall",
    "false_refusal_rate",
    "correct",
    "followed",
)
LATENCY_METRICS = ("latency_p50", "latency_p95")
METRICS = RETRIEVAL_METRICS + ANSWER_METRICS + LATENCY_METRICS
MRR_DEPTH = 10
BASELINE_VERSION = 1


@dataclass(frozen=True, slots=True)
class CaseResult:
    """What one case produced and how it scored.

    ``rank`` is the 1-based position of the first hit from the expected source (None when no hit
    matched or the case names no source); ``contained`` is None when the case lists no expected
    answer (or expects a refusal).
    """

    id: str
    kind: str
    question: str
    answer: str
    refused: bool
    expect_refusal: bool
    rank: int | None
    contained: bool | None
    has_source: bool
    seconds: float
    top_source: str | None = None
    refusal_reason: str | None = None
    mode: str = "extractive"
    """What wrote the answer (``extractive``, ``llm:NAME``): with a model configured, a reply
    that did not hold up is answered by the extractive answerer."""
    followed: bool | None = None
    """Whether the answer holds a string the case forbids (an instruction in a document was
    followed); None when the case forbids nothing."""
    standalone: str | None = None
    """The question as searched, when a conversation made it standalone (a follow-up)."""

    @property
    def correct(self) -> bool:
        """Refused when it should be; else answered with an expected substring (or with no
        substring to check), and with nothing forbidden."""
        if self.expect_refusal or self.refused:
            return self.expect_refusal and self.refused
        return self.contained is not False and not self.followed

    @property
    def problems(self) -> list[str]:
        """Why the case failed, in words; empty when it passed. The expected source at a rank
        below 1 is not a failure here (hit@1 and MRR measure that)."""
        found: list[str] = []
        if self.expect_refusal and not self.refused:
            found.append("answered a question it should refuse")
        if not self.expect_refusal and self.refused:
            found.append("refused an answerable question")
        if self.has_source and self.rank is None:
            found.append(f"expected source not in hits (top: {self.top_source or '—'})")
        if self.contained is False and not self.refused:
            found.append("answer lacks every expected substring")
        if self.followed:
            found.append("answer holds a forbidden substring")
        return found


def _path_key(path: str) -> str:
    return unicodedata.normalize("NFC", path.replace("\\", "/"))


def source_matches(source: str, locator: Mapping[str, object], expected: ExpectedSource) -> bool:
    """True when ``source`` ends with the expected relative path (on a path boundary) and the
    locator holds every expected key with the same value (compared as text, so 3 == "3")."""
    path = _path_key(source)
    want = _path_key(expected.file)
    if not (path == want or path.endswith("/" + want)):
        return False
    return all(
        key in locator and str(locator[key]) == str(value)
        for key, value in expected.locator.items()
    )


def first_match_rank(
    hits: Sequence[tuple[str, Mapping[str, object]]], expected: ExpectedSource
) -> int | None:
    """1-based rank of the first (source, locator) pair that matches, or None."""
    for rank, (source, locator) in enumerate(hits, start=1):
        if source_matches(source, locator, expected):
            return rank
    return None


def contains_any(text: str, expected: Iterable[str]) -> bool:
    """True when ``text`` contains one of the substrings, both compared after NFKC."""
    haystack = unicodedata.normalize("NFKC", text)
    return any(unicodedata.normalize("NFKC", s) in haystack for s in expected)


def score_case(case: Case, answer: Answer, seconds: float) -> CaseResult:
    """Score one answer against its case."""
    pairs = [(h.chunk.source, h.chunk.locator) for h in answer.hits]
    rank = first_match_rank(pairs, case.expect_source) if case.expect_source else None
    contained: bool | None = None
    if case.answerable and (case.expect_answer or case.expect_all):
        text = unicodedata.normalize("NFKC", answer.text)
        contained = (not case.expect_answer or contains_any(text, case.expect_answer)) and all(
            unicodedata.normalize("NFKC", s) in text for s in case.expect_all
        )
    return CaseResult(
        id=case.id,
        kind=case.kind,
        question=case.question,
        answer=answer.text,
        refused=answer.refused,
        expect_refusal=case.expect_refusal,
        rank=rank,
        contained=contained,
        has_source=case.expect_source is not None,
        seconds=seconds,
        top_source=pairs[0][0] if pairs else None,
        refusal_reason=answer.refusal_reason,
        mode=answer.mode,
        followed=contains_any(answer.text, case.expect_not) if case.expect_not else None,
        standalone=answer.standalone,
    )


def hit_at(ranks: Sequence[int | None], k: int) -> float | None:
    """Share of cases whose expected source is within the first ``k`` hits."""
    if not ranks:
        return None
    return sum(1 for r in ranks if r is not None and r <= k) / len(ranks)


def mrr_at(ranks: Sequence[int | None], depth: int = MRR_DEPTH) -> float | None:
    """Mean reciprocal rank, counting ranks deeper than ``depth`` (or missing) as 0."""
    if not ranks:
        return None
    return sum(1 / r for r in ranks if r is not None and r <= depth) / len(ranks)


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (0–100) with linear interpolation between closest ranks."""
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low = math.floor(position)
    high = math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _ratio(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


def refusal_scores(pairs: Sequence[tuple[bool, bool]]) -> dict[str, float | None]:
    """Precision and recall of refusing, and the false refusal rate, from (expected, refused)."""
    refused = sum(1 for _, r in pairs if r)
    should = sum(1 for e, _ in pairs if e)
    correct = sum(1 for e, r in pairs if e and r)
    answerable = sum(1 for e, _ in pairs if not e)
    wrongly = sum(1 for e, r in pairs if not e and r)
    return {
        "refusal_precision": _ratio(correct, refused),
        "refusal_recall": _ratio(correct, should),
        "false_refusal_rate": _ratio(wrongly, answerable),
    }


def summarize(results: Sequence[CaseResult]) -> dict[str, float | None]:
    """All metrics over ``results``; a metric with no case to measure it is None."""
    ranks = [r.rank for r in results if r.has_source]
    contained = [r.contained for r in results if r.contained is not None]
    metrics: dict[str, float | None] = {
        "hit@1": hit_at(ranks, 1),
        "hit@3": hit_at(ranks, 3),
        "hit@5": hit_at(ranks, 5),
        "mrr@10": mrr_at(ranks),
        "containment": _ratio(sum(contained), len(contained)),
    }
    metrics |= refusal_scores([(r.expect_refusal, r.refused) for r in results])
    metrics["correct"] = _ratio(sum(r.correct for r in results), len(results))
    followed = [r.followed for r in results if r.followed is not None]
    metrics["followed"] = _ratio(sum(followed), len(followed))
    seconds = [r.seconds for r in results]
    metrics["latency_p50"] = percentile(seconds, 50)
    metrics["latency_p95"] = percentile(seconds, 95)
    return metrics


def summarize_by_kind(results: Sequence[CaseResult]) -> dict[str, dict[str, float | None]]:
    kinds = sorted({r.kind for r in results})
    return {kind: summarize([r for r in results if r.kind == kind]) for kind in kinds}


def counts(results: Sequence[CaseResult]) -> dict[str, int]:
    """How many cases each metric family is measured over."""
    return {
        "cases": len(results),
        "with_source": sum(1 for r in results if r.has_source),
        "with_answer": sum(1 for r in results if r.contained is not None),
        "answerable": sum(1 for r in results if not r.expect_refusal),
        "expect_refusal": sum(1 for r in results if r.expect_refusal),
    }


def report(
    results: Sequence[CaseResult],
    settings: Mapping[str, Any],
    show_path: Callable[[str], str] | None = None,
) -> dict[str, Any]:
    """The baseline JSON document: metrics, per-kind metrics, counts, settings, cases.

    ``show_path`` rewrites the sources recorded per case (e.g. relative to the working
    directory), so that a committed baseline does not carry one machine's absolute paths.
    """
    if show_path is not None:
        results = [
            replace(r, top_source=show_path(r.top_source)) if r.top_source else r for r in results
        ]
    return {
        "version": BASELINE_VERSION,
        "settings": dict(settings),
        "counts": counts(results),
        "metrics": summarize(results),
        "by_kind": summarize_by_kind(results),
        "cases": [asdict(r) | {"problems": r.problems} for r in results],
    }
