"""The generator interface: a question and its hits in, a cited answer out.

Streaming generators also yield typed events, so a CLI or a server can show tokens as they
arrive and the citations once the answer is complete.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from shirabe.records import Answer, Citation, Hit
from shirabe.retrieval.query import Query


class Generator(Protocol):
    @property
    def name(self) -> str: ...

    def generate(self, query: Query, hits: list[Hit]) -> Answer: ...


@runtime_checkable
class StreamingGenerator(Generator, Protocol):
    """A generator that can also hand out its answer piece by piece."""

    def stream(self, query: Query, hits: list[Hit]) -> Iterator[GenerationEvent]: ...


@dataclass(frozen=True, slots=True)
class HitsEvent:
    """The passages retrieved for the question, before any answer text."""

    hits: list[Hit]
    kind: str = "hits"


@dataclass(frozen=True, slots=True)
class TokenEvent:
    """A piece of answer text, to be appended to what came before."""

    text: str
    kind: str = "token"


@dataclass(frozen=True, slots=True)
class CitationsEvent:
    """The citations of the finished answer, numbered as in the streamed text."""

    citations: list[Citation]
    kind: str = "citations"


@dataclass(frozen=True, slots=True)
class DoneEvent:
    """The finished answer; always the last event of a successful stream."""

    answer: Answer
    kind: str = "done"


@dataclass(frozen=True, slots=True)
class ErrorEvent:
    """The stream failed; always the last event. Text already streamed should be discarded."""

    message: str
    error: Exception | None = None
    kind: str = "error"


GenerationEvent = HitsEvent | TokenEvent | CitationsEvent | DoneEvent | ErrorEvent


def answer_events(answer: Answer) -> Iterator[GenerationEvent]:
    """A finished answer as a stream: hits, the whole text as one token, citations, done."""
    yield HitsEvent(answer.hits)
    yield TokenEvent(answer.text)
    yield CitationsEvent(answer.citations)
    yield DoneEvent(answer)
