"""Questions asked together: one answer from the answers to each part."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from shirabe.answering.refusal import REFUSAL_TEXT
from shirabe.records import Answer, Citation


def renumber_markers(text: str, mapping: dict[int, int]) -> str:
    """``[n]`` markers renumbered by ``mapping`` (numbers not in it are kept)."""
    return re.sub(
        r"\[(\d+)\]", lambda m: f"[{mapping.get(int(m.group(1)), int(m.group(1)))}]", text
    )


def merge_answers(question: str, parts: Sequence[str], answers: Sequence[Answer]) -> Answer:
    """One answer to questions asked together: each part's answer under its question, with
    citations renumbered across them (a passage cited twice keeps one number).

    Refused only if every part was refused; a refused part says so in its place.
    """
    citations: list[Citation] = []
    by_chunk: dict[int, int] = {}
    lines: list[str] = []
    hits = []
    seen_hits: set[int] = set()
    timings: dict[str, float] = {}
    for part, answer in zip(parts, answers, strict=True):
        mapping: dict[int, int] = {}
        for citation in answer.citations:
            number = by_chunk.get(citation.chunk_id)
            if number is None:
                number = len(citations) + 1
                by_chunk[citation.chunk_id] = number
                citations.append(replace(citation, number=number))
            mapping[citation.number] = number
        text = renumber_markers(answer.text, mapping)
        lines.append(f"・{part}\n{text}")
        for hit in answer.hits:
            if hit.chunk_id not in seen_hits:
                seen_hits.add(hit.chunk_id)
                hits.append(hit)
        for key, value in answer.timings.items():
            timings[key] = timings.get(key, 0.0) + value
    refused = all(a.refused for a in answers)
    return Answer(
        question=question,
        text=REFUSAL_TEXT if refused else "\n".join(lines),
        citations=[] if refused else citations,
        refused=refused,
        hits=hits,
        timings=timings,
        mode=answers[0].mode if answers else "extractive",
    )
