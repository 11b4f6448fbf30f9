"""Feedback on answers written as evaluation cases, so that bad answers become regression
tests (``shirabe feedback export``; the YAML is what ``shirabe eval`` reads).

=============  ==============================  ============================================
rating         the answer                      the case
=============  ==============================  ============================================
👍 up          answered                        ``expect_answer``: its first line;
                                               ``expect_source``: the file it cited first
👍 up          refused                         ``expect_refusal: true``
👎 down        answered                        ``expect_not``: its first line (a wrong
                                               answer must not come back)
👎 down        refused                         written commented out: only a person knows
                                               the expected answer; fill in and uncomment
=============  ==============================  ============================================

Each case carries the rating, the date, the asker and their comment as YAML comments above
it. A follow-up is exported as the question it was searched as (``standalone``), so that it
reads on its own.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from shirabe.records import Feedback

FIRST_LINE_CHARS = 80
_MARKERS = re.compile(r"\[\d+\]")


def first_line(answer: str) -> str:
    """The answer's first line without citation markers or its closing stop."""
    line = next((ln for ln in answer.splitlines() if ln.strip()), "")
    line = _MARKERS.sub("", line).strip().rstrip("。．.")
    return line[:FIRST_LINE_CHARS]


def case_of(feedback: Feedback) -> dict[str, Any]:
    """The evaluation case a piece of feedback makes (see the module notes)."""
    turn = feedback.turn
    case: dict[str, Any] = {
        "id": f"feedback-{feedback.id}",
        "kind": f"feedback-{feedback.rating}",
        "question": turn.standalone or turn.question,
    }
    if feedback.rating == "up":
        if turn.refused:
            case["expect_refusal"] = True
            return case
        line = first_line(turn.answer)
        if line:
            case["expect_answer"] = [line]
        if turn.citations:
            case["expect_source"] = {"file": str(turn.citations[0]["source"])}
        return case
    if turn.refused:
        case["expect_answer"] = ["（期待する回答をここに）"]
        return case
    case["expect_not"] = [first_line(turn.answer)]
    return case


def _header(feedback: Feedback) -> list[str]:
    who = feedback.owner.removeprefix("user:")
    if who.startswith("anon:"):
        who = "anonymous"
    mark = "👍" if feedback.rating == "up" else "👎"
    lines = [f"# {mark} {who} {feedback.at[:10]}"]
    if feedback.turn.standalone:
        lines.append(f"# asked in a conversation as: {_one_line(feedback.turn.question)}")
    if feedback.comment:
        lines.append(f"# comment: {_one_line(feedback.comment)}")
    return lines


def _one_line(text: str) -> str:
    return " ".join(text.split())


def export_cases(given: Sequence[Feedback]) -> str:
    """The YAML case file for ``given`` (oldest first), comments included."""
    import yaml

    lines = [
        "# Evaluation cases made from feedback on answers (shirabe feedback export).",
        "# Run: shirabe eval THIS_FILE --index DIR",
        "cases:",
    ]
    live = 0
    for feedback in given:
        case = case_of(feedback)
        body = yaml.safe_dump([case], allow_unicode=True, sort_keys=False, width=1000)
        lines.append("")
        lines += ["  " + line for line in _header(feedback)]
        pending = feedback.rating == "down" and feedback.turn.refused
        if pending:
            lines.append("  # refused, marked wrong: fill in expect_answer, then uncomment")
        for line in body.splitlines():
            lines.append(("  # " if pending else "  ") + line)
        live += not pending
    if not live:
        lines.append("  []")
    return "\n".join(lines) + "\n"
