"""The regression gate: metrics compared with a stored baseline, so that a change which makes
retrieval or answers worse fails the build."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from shirabe.errors import ShirabeError
from shirabe.evaluation.metrics import BASELINE_VERSION, LATENCY_METRICS, METRICS

Verdict = Literal["ok", "better", "worse", "info", "n/a"]
LOWER_IS_BETTER = frozenset({"false_refusal_rate", "followed", *LATENCY_METRICS})
DEFAULT_TOLERANCE = 0.02


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
