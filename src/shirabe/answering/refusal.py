"""What shirabe says when the documents do not answer the question, and why."""

from __future__ import annotations

from shirabe.records import Answer, Hit, RefusalCode

REFUSAL_TEXT = "ドキュメントに記載がありません"


def refusal(
    question: str,
    hits: list[Hit],
    why: tuple[RefusalCode, str],
    *,
    mode: str = "extractive",
    timings: dict[str, float] | None = None,
) -> Answer:
    """The refusal of ``question``, with its reason as a code and in words."""
    code, reason = why
    return Answer(
        question=question,
        text=REFUSAL_TEXT,
        citations=[],
        refused=True,
        hits=hits,
        timings=timings or {},
        mode=mode,
        refusal_reason=reason,
        refusal_code=code,
    )
