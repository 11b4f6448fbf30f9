"""Searching and answering: ``/api/search``, ``/api/ask`` and its stream."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, Field
from sse_starlette.sse import EventSourceResponse
from starlette.concurrency import iterate_in_threadpool

from shirabe.answering.followup import Turn
from shirabe.answering.protocol import (
    CitationsEvent,
    DoneEvent,
    ErrorEvent,
    GenerationEvent,
    HitsEvent,
    TokenEvent,
)
from shirabe.errors import GeneratorError
from shirabe.records import answer_json, citation_json, hit_json
from shirabe.server.deps import ServerDep, Who

logger = logging.getLogger(__name__)

router = APIRouter(tags=["answers"])


class TurnModel(BaseModel):
    question: str = Field(min_length=1, max_length=2000, description="前の質問")
    answer: str = Field(default="", max_length=8000, description="前の回答")


class AskRequest(BaseModel):
    question: str = Field(min_length=1, max_length=2000, description="質問")
    top_k: int | None = Field(default=None, ge=1, le=50)
    categories: list[str] = Field(default_factory=list, max_length=50)
    history: list[TurnModel] = Field(
        default_factory=list, max_length=20, description="この会話のこれまでの質問と回答（古い順）"
    )

    def turns(self) -> list[Turn]:
        return [Turn(t.question, t.answer) for t in self.history]


@router.get("/api/search")
def search(
    who: Who,
    server: ServerDep,
    q: Annotated[str, Query(min_length=1, max_length=2000, description="検索語")],
    top_k: Annotated[int, Query(ge=1, le=50)] = 10,
    category: Annotated[list[str] | None, Query()] = None,
) -> dict[str, Any]:
    hits = server.shirabe.search(q, k=top_k, filters=server.scope(who, category))
    return {"query": q, "hits": [hit_json(h, server.show) for h in hits]}


@router.post("/api/ask")
def ask(who: Who, server: ServerDep, body: AskRequest) -> dict[str, Any]:
    filters = server.scope(who, body.categories)
    answer = server.shirabe.ask(body.question, k=body.top_k, filters=filters, history=body.turns())
    return answer_json(answer, server.show)


@router.post("/api/ask/stream")
async def ask_stream(
    who: Who, server: ServerDep, body: AskRequest, request: Request
) -> EventSourceResponse:
    """Server-sent events: ``hits``, ``token`` (many), ``citations``, ``done``; or
    ``error``. Closing the connection stops the answer being written."""
    events = server.shirabe.ask_stream(
        body.question,
        k=body.top_k,
        filters=server.scope(who, body.categories),
        history=body.turns(),
    )

    async def send() -> AsyncIterator[dict[str, str]]:
        try:
            async for event in iterate_in_threadpool(events):
                if await request.is_disconnected():
                    break
                data = json.dumps(_event(event, server.show), ensure_ascii=False)
                yield {"event": event.kind, "data": data}
        except GeneratorError as exc:
            yield {"event": "error", "data": json.dumps({"message": str(exc)}, ensure_ascii=False)}
        finally:
            # on a hang-up this runs cancelled, so no awaiting: closing the generator ends
            # the model's stream at once (the worker thread is idle by now)
            _close(events)

    return EventSourceResponse(send(), ping=15)


def _close(events: Iterator[GenerationEvent]) -> None:
    close = getattr(events, "close", None)
    if callable(close):
        try:
            close()
        except ValueError:  # still running in a worker thread: it ends with the request
            logger.warning("answer stream still running at hang-up; it stops at its next token")


def _event(event: GenerationEvent, show: Callable[[str], str]) -> dict[str, Any]:
    if isinstance(event, HitsEvent):
        return {"hits": [hit_json(h, show) for h in event.hits]}
    if isinstance(event, TokenEvent):
        return {"text": event.text}
    if isinstance(event, CitationsEvent):
        return {"citations": [citation_json(c, show) for c in event.citations]}
    if isinstance(event, DoneEvent):
        return answer_json(event.answer, show)
    if isinstance(event, ErrorEvent):
        return {"message": event.message}
    return {}
