"""The regression gate: verdicts per metric and what gates."""

from __future__ import annotations

from shirabe.evaluation.baseline import compare, compare_metric, newly_failing, passed
from shirabe.evaluation.metrics import (
    report,
)

from tests.evaluation.results import RESULTS, result


def test_compare_metric_verdicts() -> None:
    assert compare_metric("hit@1", 0.80, 0.78).verdict == "ok"  # exactly the tolerance
    assert compare_metric("hit@1", 0.80, 0.77).verdict == "worse"
    assert compare_metric("hit@1", 0.80, 0.90).verdict == "better"
    assert compare_metric("hit@1", 0.80, 0.77, tolerance=0.05).verdict == "ok"
    # a higher false refusal rate is worse
    assert compare_metric("false_refusal_rate", 0.10, 0.15).verdict == "worse"
    assert compare_metric("false_refusal_rate", 0.10, 0.05).verdict == "better"
    # latency never gates, however much slower
    slow = compare_metric("latency_p95", 0.1, 5.0)
    assert (slow.verdict, slow.gates) == ("info", False)
    assert compare_metric("refusal_precision", 0.5, None).verdict == "n/a"


def test_compare_gates_on_overall_metrics_only() -> None:
    base = report(RESULTS, {})
    assert passed(compare(base, base))
    worse_results = [result("a", rank=3, contained=False), *RESULTS[1:]]
    now = report(worse_results, {})
    rows = compare(base, now)
    worse = {r.metric for r in rows if r.verdict == "worse"}
    assert worse == {"hit@1", "mrr@10", "containment", "correct"}
    assert not passed(rows)
    # the per-kind rows moved too, but only inform
    fact = {r.metric: r for r in rows if r.metric.startswith("fact.")}
    assert fact["fact.hit@1"].verdict == "info"
    assert newly_failing(base, now) == ["a"]
