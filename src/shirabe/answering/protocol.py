"""The generator interface: a question and its hits in, a cited answer out.

Streaming generators also yield typed events, so a CLI or a server can show tokens as they
arrive and the citations once the answer is complete.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol, runtime_checkable

from shirabe.llm.protocol import ChatModel
from shirabe.records import (
    Answer,
    CitationsEvent,
    DoneEvent,
    GenerationEvent,
    Hit,
    HitsEvent,
    TokenEvent,
)
from shirabe.retrieval.query import Query


class Generator(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def chat_model(self) -> ChatModel | None:
        """The chat model that writes its answers, if any: it also makes follow-ups
        standalone and understands questions (other wordings, parts, keywords)."""
        ...

    def generate(self, query: Query, hits: list[Hit]) -> Answer: ...

    def close(self) -> None:
        """Let go of what it holds (a model server's connections)."""
        ...


@runtime_checkable
class StreamingGenerator(Generator, Protocol):
    """A generator that can also hand out its answer piece by piece."""

    def stream(self, query: Query, hits: list[Hit]) -> Iterator[GenerationEvent]: ...


def answer_events(answer: Answer) -> Iterator[GenerationEvent]:
    """A finished answer as a stream: hits, the whole text as one token, citations, done."""
    yield HitsEvent(answer.hits)
    yield TokenEvent(answer.text)
    yield CitationsEvent(answer.citations)
    yield DoneEvent(answer)
