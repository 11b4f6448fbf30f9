"""Asking every case of a case file through :meth:`shirabe.engine.Shirabe.ask` and scoring it."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from shirabe.errors import ShirabeError, UnsearchableError
from shirabe.evaluation.cases import Case
from shirabe.evaluation.metrics import CaseResult, score_case
from shirabe.records import Turn

if TYPE_CHECKING:
    from shirabe.engine import Shirabe

logger = logging.getLogger(__name__)


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
    history: list[Turn] = []
    dialogue: str | None = None
    for case in cases:
        if case.dialogue is None or case.dialogue != dialogue:
            history = []
        dialogue = case.dialogue
        started = time.perf_counter()
        try:
            answer = shirabe.ask(case.question, history=history)
        except UnsearchableError as exc:
            raise ShirabeError(f"case {case.id}: question: {exc}") from exc
        seconds = time.perf_counter() - started
        if dialogue is not None:
            history.append(Turn(case.question, answer.text))
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
    found, generator, chat = s.retrieval, s.answering.generator, s.chat_model
    return {
        "embedder": s.embedder.name,
        "retriever": found.retriever,
        "generator": generator,
        "model": shirabe.generator.name,
        "top_k": found.top_k,
        "understanding": [
            name
            for name, on in (
                ("multi-query", found.multi_query),
                ("keywords", found.keyword_extraction),
                ("decompose", found.decompose),
            )
            if on
        ],
        "synonyms": str(found.synonyms) if found.synonyms else None,
        # how a chat model was asked (none for extractive answers); never a key or a URL
        "llm": None
        if generator == "extractive"
        else {
            "model_file": chat.model_path.name if chat.model_path else None,
            "context_tokens": s.answering.context_tokens,
            "max_tokens": chat.max_tokens,
            "temperature": chat.temperature,
            "threads": chat.threads,
            "n_ctx": chat.n_ctx if generator == "llama" else None,
        },
    }
