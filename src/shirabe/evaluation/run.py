"""Evaluation of answers against a YAML file of cases, and the regression gate on its metrics.

A case file (see ``eval/sample_docs.yaml``) lists questions with what a good answer looks like:
substrings the answer should contain, the source file (and page / sheet / slide) that should be
retrieved, or that the question must be refused. :func:`run` asks every case through
:meth:`shirabe.engine.Shirabe.ask`; :func:`summarize` turns the per-case results into metrics;
:func:`compare` checks them against a stored baseline so that a change which makes retrieval or
answers worse fails the build.

Everything except :func:`run` and :func:`load_cases` is a pure function of plain data, so the
metrics can be checked against small hand-computed tables.
"""

from __future__ import annotations

import logging
import math
import time
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from shirabe.errors import ShirabeError

if TYPE_CHECKING:
    from shirabe.engine import Shirabe
    from shirabe.records import Answer

logger = logging.getLogger(__name__)

LocatorValue = str | int
Verdict = Literal["ok", "better", "worse", "info", "n/a"]

# Overall metrics, in report order. Latency is reported but never gates.
RETRIEVAL_METRICS = ("hit@1", "hit@3", "hit@5", "mrr@10")
ANSWER_METRICS = ("containment", "refusal_precision", "refusal_recall", "false_refusal_rate")
LATENCY_METRICS = ("latency_p50", "latency_p95")
METRICS = RETRIEVAL_METRICS + ANSWER_METRICS + LATENCY_METRICS
# Metrics where a larger value is worse.
LOWER_IS_BETTER = frozenset({"false_refusal_rate", *LATENCY_METRICS})
DEFAULT_TOLERANCE = 0.02
MRR_DEPTH = 10
BASELINE_VERSION = 1


class CaseFileError(ShirabeError):
    """The case file cannot be read or a case is malformed; the message names the case and field."""


@dataclass(frozen=True, slots=True)
class ExpectedSource:
    """A file relative to the corpus root, and the locator keys its citation should carry."""

    file: str
    locator: Mapping[str, LocatorValue] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Case:
    id: str
    question: str
    kind: str = "other"
    expect_answer: tuple[str, ...] = ()
    expect_source: ExpectedSource | None = None
    expect_refusal: bool = False
    expect_all: tuple[str, ...] = ()
    """Substrings that must all be in the answer (questions asked together)."""

    @property
    def answerable(self) -> bool:
        return not self.expect_refusal


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
        return found


# ---- case file ----


def load_cases(path: Path) -> list[Case]:
    """Read and validate a YAML case file."""
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CaseFileError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    except yaml.YAMLError as exc:
        raise CaseFileError(f"{path}: not valid YAML ({_one_line(str(exc))})") from exc
    return parse_cases(data, origin=str(path))


def _one_line(text: str) -> str:
    return " ".join(text.split())


def parse_cases(data: object, origin: str = "cases") -> list[Case]:
    """Validate the parsed YAML: a mapping with ``cases``, a list of case mappings."""
    items = data.get("cases") if isinstance(data, Mapping) else data
    if not isinstance(items, list) or not items:
        raise CaseFileError(f"{origin}: expected a non-empty list under 'cases'")
    cases: list[Case] = []
    seen: set[str] = set()
    for index, item in enumerate(items, start=1):
        case = _parse_case(item, f"{origin}: case #{index}")
        if case.id in seen:
            raise CaseFileError(f"{origin}: case {case.id!r}: id: duplicate")
        seen.add(case.id)
        cases.append(case)
    return cases


def _parse_case(item: object, where: str) -> Case:
    if not isinstance(item, Mapping):
        raise CaseFileError(f"{where}: expected a mapping with id and question")
    case_id = item.get("id")
    if not isinstance(case_id, str) or not case_id.strip():
        raise CaseFileError(f"{where}: id: must be a non-empty string")
    where = f"{where.rsplit(': ', 1)[0]}: case {case_id!r}"
    known = {
        "id",
        "question",
        "kind",
        "expect_answer",
        "expect_all",
        "expect_source",
        "expect_refusal",
    }
    unknown = sorted(str(k) for k in item if k not in known)
    if unknown:
        raise CaseFileError(f"{where}: {unknown[0]}: unknown field")
    question = item.get("question")
    if not isinstance(question, str) or not question.strip():
        raise CaseFileError(f"{where}: question: must be a non-empty string")
    kind = item.get("kind", "other")
    if not isinstance(kind, str) or not kind.strip():
        raise CaseFileError(f"{where}: kind: must be a string")
    expect_answer = _parse_answers(item.get("expect_answer"), where)
    expect_all = _parse_answers(item.get("expect_all"), where, "expect_all")
    expect_source = _parse_source(item.get("expect_source"), where)
    expect_refusal = item.get("expect_refusal", False)
    if not isinstance(expect_refusal, bool):
        raise CaseFileError(f"{where}: expect_refusal: must be true or false")
    if expect_refusal and (expect_answer or expect_all or expect_source):
        raise CaseFileError(
            f"{where}: expect_refusal: cannot be combined with expect_answer, expect_all or "
            "expect_source"
        )
    if not (expect_refusal or expect_answer or expect_all or expect_source):
        raise CaseFileError(
            f"{where}: expect_answer: give expect_answer, expect_all, expect_source or "
            "expect_refusal"
        )
    return Case(
        id=case_id.strip(),
        question=question.strip(),
        kind=kind.strip(),
        expect_answer=expect_answer,
        expect_source=expect_source,
        expect_refusal=expect_refusal,
        expect_all=expect_all,
    )


def _parse_answers(value: object, where: str, name: str = "expect_answer") -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise CaseFileError(f"{where}: {name}: must be a list of non-empty strings")
    return tuple(value)


def _parse_source(value: object, where: str) -> ExpectedSource | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = {"file": value}
    if not isinstance(value, Mapping):
        raise CaseFileError(f"{where}: expect_source: must be a mapping with a file")
    file = value.get("file")
    if not isinstance(file, str) or not file.strip():
        raise CaseFileError(f"{where}: expect_source.file: must be a non-empty string")
    locator: dict[str, LocatorValue] = {}
    for key, loc in value.items():
        if key == "file":
            continue
        if not isinstance(loc, str | int) or isinstance(loc, bool):
            raise CaseFileError(f"{where}: expect_source.{key}: must be a string or a number")
        locator[str(key)] = loc
    return ExpectedSource(file=file.strip().replace("\\", "/").strip("/"), locator=locator)


# ---- scoring one case ----


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
    )


# ---- metrics ----


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


# ---- comparison ----


@dataclass(frozen=True, slots=True)
class Comparison:
    metric: str
    baseline: float | None
    now: float | None
    delta: float | None
    verdict: Verdict
    gates: bool


def compare_metric(
    metric: str,
    baseline: float | None,
    now: float | None,
    tolerance: float = DEFAULT_TOLERANCE,
    *,
    gates: bool = True,
) -> Comparison:
    """Verdict for one metric: ``worse`` when it moved the wrong way by more than tolerance."""
    if baseline is None or now is None:
        return Comparison(metric, baseline, now, None, "n/a", False)
    delta = now - baseline
    name = metric.rsplit(".", 1)[-1]
    gates = gates and name not in LATENCY_METRICS
    if not gates:
        return Comparison(metric, baseline, now, delta, "info", False)
    loss = delta if name in LOWER_IS_BETTER else -delta
    # a small epsilon so that a drop of exactly the tolerance (0.8 - 0.78) passes
    if loss > tolerance + 1e-9:
        verdict: Verdict = "worse"
    elif loss < -1e-9:
        verdict = "better"
    else:
        verdict = "ok"
    return Comparison(metric, baseline, now, delta, verdict, True)


def compare(
    baseline: Mapping[str, Any], current: Mapping[str, Any], tolerance: float = DEFAULT_TOLERANCE
) -> list[Comparison]:
    """Compare two report documents. Overall metrics gate; per-kind ones are for information
    (a kind has few cases, so one flipped case would move it by more than any useful tolerance).
    """
    rows: list[Comparison] = []
    base_metrics = baseline.get("metrics", {})
    now_metrics = current.get("metrics", {})
    for metric in METRICS:
        rows.append(
            compare_metric(metric, base_metrics.get(metric), now_metrics.get(metric), tolerance)
        )
    base_kinds = baseline.get("by_kind", {})
    now_kinds = current.get("by_kind", {})
    for kind in sorted(set(base_kinds) | set(now_kinds)):
        for metric in METRICS:
            if metric in LATENCY_METRICS:
                continue
            rows.append(
                compare_metric(
                    f"{kind}.{metric}",
                    base_kinds.get(kind, {}).get(metric),
                    now_kinds.get(kind, {}).get(metric),
                    tolerance,
                    gates=False,
                )
            )
    return rows


def passed(rows: Iterable[Comparison]) -> bool:
    return not any(row.verdict == "worse" for row in rows)


def newly_failing(baseline: Mapping[str, Any], current: Mapping[str, Any]) -> list[str]:
    """Ids of cases that passed in the baseline and fail now."""
    before = {c["id"]: bool(c.get("problems")) for c in baseline.get("cases", [])}
    return [
        c["id"]
        for c in current.get("cases", [])
        if c.get("problems") and before.get(c["id"]) is False
    ]


def check_baseline(data: object, origin: str) -> dict[str, Any]:
    """Validate a baseline document read from JSON."""
    if not isinstance(data, dict) or not isinstance(data.get("metrics"), dict):
        raise ShirabeError(f"{origin}: not a baseline written by `shirabe eval --out`")
    if data.get("version") != BASELINE_VERSION:
        raise ShirabeError(
            f"{origin}: baseline version {data.get('version')!r}, expected {BASELINE_VERSION}; "
            "write a new one with --out"
        )
    return data


# ---- running ----


def run(
    shirabe: Shirabe,
    cases: Sequence[Case],
    *,
    on_case: Callable[[CaseResult], None] | None = None,
    warm_up: bool = True,
) -> list[CaseResult]:
    """Ask every case and score it. One untimed question first loads the models, so that
    loading time does not land in the first case's latency."""
    if warm_up and cases:
        shirabe.ask(cases[0].question)
    results: list[CaseResult] = []
    for case in cases:
        started = time.perf_counter()
        answer = shirabe.ask(case.question)
        seconds = time.perf_counter() - started
        result = score_case(case, answer, seconds)
        if result.problems:
            logger.info("case %s: %s", case.id, "; ".join(result.problems))
        results.append(result)
        if on_case is not None:
            on_case(result)
    return results


def run_settings(shirabe: Shirabe) -> dict[str, Any]:
    """The settings that shape the figures, stored with a baseline for reference."""
    s = shirabe.settings
    return {
        "embedder": s.embedder,
        "retriever": s.retriever,
        "generator": s.generator,
        "model": shirabe.generator.name,
        "top_k": s.top_k,
        "understanding": [
            name
            for name, on in (
                ("multi-query", s.multi_query),
                ("keywords", s.keyword_extraction),
                ("decompose", s.decompose),
            )
            if on
        ],
        "synonyms": str(s.synonyms) if s.synonyms else None,
    }
