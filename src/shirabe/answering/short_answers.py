"""The short answer of an extractive answer: the span of its best lines that the span model
finds most likely to be the asked fact alone (手塚治虫, 約9.2kg), and whether the answer opens
with it."""

from __future__ import annotations

from collections.abc import Sequence

from shirabe.answering import showing, spans, stage
from shirabe.answering.context import Candidate
from shirabe.answering.learned import AnswerModel
from shirabe.records import Hit
from shirabe.retrieval.query import Query
from shirabe.text.normalize import folded

MARKER = 3
"""Characters of a line's citation marker ([1])."""


def best(
    model: AnswerModel,
    query: Query,
    hits: Sequence[Hit],
    ranked: Sequence[Candidate],
    judgement: stage.Judgement | None,
) -> tuple[str, float]:
    """The likeliest span of the best ranked lines with its probability; ('', 0) when there
    is none (no model decided, or the question asks for a reason or a way of doing)."""
    if judgement is None or not ranked:
        return "", 0.0
    top = [
        (c, text)
        for c in ranked[: stage.SPAN_LINES]
        if (text := showing.span_source(c, hits, query.text)) is not None
    ]
    return stage.best_span(
        model,
        judgement.question,
        [text for _c, text in top],
        [c.score for c, _text in top],
        query.words_of,
    )


def opening(
    model: AnswerModel,
    question: str,
    span: str,
    probability: float,
    lines: Sequence[str],
    max_chars: int,
) -> str | None:
    """The line an answer opens with (手塚治虫です。), or None. The span opens it when:

    - it is at least as likely as the model's span threshold;
    - the question asks with a question word or for a kind of fact
      (:func:`shirabe.answering.spans.asks_by_word`);
    - the first quoted line says it: a span of another line (600 of another incident's
      measure) would be an answer the citation does not show;
    - it fits before the lines, each with its citation marker, in ``max_chars``."""
    if not span or probability < model.span_threshold or not lines:
        return None
    if not spans.asks_by_word(question) or _bare(span) not in _bare(lines[0]):
        return None
    short = f"{span}です。"
    length = len(short) + 1 + sum(len(text) + MARKER + 1 for text in lines)  # 1: line breaks
    return short if length <= max_chars else None


def _bare(text: str) -> str:
    """Folded, without spaces: the form in which a span is looked for in a line."""
    return "".join(folded(text).split())
