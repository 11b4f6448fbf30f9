"""Case results made by hand for the metric and baseline tests."""

from __future__ import annotations

from shirabe.evaluation.metrics import CaseResult


def result(
    case_id: str,
    *,
    kind: str = "fact",
    rank: int | None = 1,
    contained: bool | None = True,
    refused: bool = False,
    expect_refusal: bool = False,
    seconds: float = 0.1,
) -> CaseResult:
    return CaseResult(
        id=case_id,
        kind=kind,
        question="?",
        answer="",
        refused=refused,
        expect_refusal=expect_refusal,
        rank=None if expect_refusal else rank,
        contained=None if expect_refusal else contained,
        has_source=not expect_refusal,
        seconds=seconds,
    )


RESULTS = [
    result("a", rank=1, contained=True, seconds=0.1),
    result("b", rank=2, contained=False, seconds=0.2),
    result("c", kind="id", rank=None, contained=False, refused=True, seconds=0.3),
    result("d", kind="refusal", refused=True, expect_refusal=True, seconds=0.4),
    result("e", kind="refusal", refused=False, expect_refusal=True, seconds=0.5),
]
