"""Answers and hits as JSON-ready dictionaries, the same for the CLI's --json and the API."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from shirabe.records import Answer, Citation, Hit

ShowPath = Callable[[str], str]


def _same(path: str) -> str:
    return path


def hit_json(hit: Hit, show_path: ShowPath = _same) -> dict[str, Any]:
    chunk = hit.chunk
    return {
        "chunk_id": chunk.id,
        "source": show_path(chunk.source),
        "heading_path": list(chunk.heading_path),
        "locator": chunk.locator,
        "is_summary": chunk.is_summary,
        "score": hit.score,
        "ranks": hit.ranks,
        "scores": hit.scores,
        "text": chunk.text,
    }


def citation_json(citation: Citation, show_path: ShowPath = _same) -> dict[str, Any]:
    shown = show_path(citation.source)
    return asdict(citation) | {"source": shown, "label": citation.label(shown)}


def answer_json(answer: Answer, show_path: ShowPath = _same) -> dict[str, Any]:
    return {
        "question": answer.question,
        "answer": answer.text,
        "refused": answer.refused,
        "mode": answer.mode,
        "citations": [citation_json(c, show_path) for c in answer.citations],
        "hits": [hit_json(h, show_path) for h in answer.hits],
        "searches": answer.searches,
        "timings": answer.timings,
    }
