"""What shirabe says when the documents do not answer the question, and why."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

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


def quoted(question: str, terms: Sequence[str]) -> str:
    """Terms as the question spells them (AQ-250, not aq-250), each in 「」; terms written
    next to each other in the question are one (「東出張所」, not 「東」「出張所」), and a fee
    looked for as what it pays for is shown as asked (「電気代」, not 「電気」)."""
    plain = unicodedata.normalize("NFKC", question)
    shown: list[str] = []
    end = -1
    for term in terms:
        found = re.search(re.escape(term) + "(?:代)?", plain, re.IGNORECASE)
        if found and shown and found.start() == end:
            shown[-1] += found.group()
        else:
            shown.append(found.group() if found else term)
        end = found.end() if found else -1
    return "".join(f"「{t}」" for t in shown)
