"""Searching and answering: ``/api/search``, ``/api/ask`` and its stream."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, Field
from sse_starlette.sse import EventSourceResponse
from starlette.concurrency import iterate_in_threadpool, run_in_threadpool

from shirabe.errors import GeneratorError, NotFoundError
from shirabe.records import (
    Answer,
    CitationsEvent,
    DoneEvent,
    ErrorEvent,
    GenerationEvent,
    HitsEvent,
    NewTurn,
    TokenEvent,
    Turn,
    answer_json,
    citation_json,
    hit_json,
)
from shirabe.server.deps import Principal, Server, ServerDep, Who
from shirabe.server.errors import ApiError
from shirabe.server.routes.conversations import history, owner_of

logger = logging.getLogger(__name__)

router = APIRouter(tags=["answers"])


QUESTION_CHARS = 2000
"""The longest question accepted (the page counts down to it)."""
ANSWER_CHARS = 8000
"""The longest earlier answer a conversation's history may carry."""


class TurnModel(BaseModel):
    question: str = Field(min_length=1, max_length=QUESTION_CHARS, description="前の質問")
    answer: str = Field(default="", max_length=ANSWER_CHARS, description="前の回答")


class AskRequest(BaseModel):
    question: str = Field(min_length=1, max_length=QUESTION_CHARS, description="質問")
    top_k: int | None = Field(default=None, ge=1, le=50)
    categories: list[str] = Field(default_factory=list, max_length=50)
    history: list[TurnModel] = Field(
        default_factory=list, max_length=20, description="この会話のこれまでの質問と回答（古い順）"
    )
    conversation: str | None = Field(
        default=None,
        max_length=64,
        description="保存された会話の ID: その続きとして答え、質問と回答を記録する",
    )
    new_conversation: bool = Field(
        default=False,
        description="新しい会話として記録する: 回答ができたときに、この質問と回答を最初のやりとりと"
        "する会話を作る（conversation とは併用できない）",
    )
    again: int | None = Field(
        default=None,
        ge=1,
        description="答え直す質問の番号（会話の中の位置）: その質問より前の会話の続きとして答え、"
        "新しい回答をその質問の次の版として記録し、選ぶ（版の数は "
        "SHIRABE_SERVER__MAX_ANSWER_VERSIONS まで）",
    )
    edit: int | None = Field(
        default=None,
        ge=1,
        description="書き換える質問の番号: question をその質問として、それより前の会話の続きとして"
        "答え、その質問と回答（前の版と評価も）を置き換え、後の質問と回答をすべて削除する",
    )

    def turns(self) -> list[Turn]:
        return [Turn(t.question, t.answer) for t in self.history]


MAX_HISTORY = 20
"""Earlier turns a follow-up is understood in (the latest ones)."""


class Asking:
    """A question as asked through the API: its scope, the conversation it continues, and
    where its answer is recorded: a new turn, another answer of a turn (``again``), or an
    edited turn in place of the one asked before (``edit``)."""

    def __init__(self, who: Principal, server: Server, body: AskRequest, request: Request) -> None:
        self.who, self.server, self.body = who, server, body
        self.filters = server.scope(who, body.categories)
        self.owner: str | None = None
        self.turns = body.turns()
        self.redo = body.again if body.again is not None else body.edit
        if body.again is not None and body.edit is not None:
            raise ApiError(422, "invalid_request", "again and edit: one or the other")
        if self.redo is not None and body.history:
            raise ApiError(
                422, "invalid_request", "again, edit: the stored turns are the history, not history"
            )
        if body.new_conversation:
            if body.conversation is not None or self.redo is not None:
                raise ApiError(
                    422,
                    "invalid_request",
                    "new_conversation: not with conversation, again or edit",
                )
            self.owner = owner_of(who, request, server)
        if body.conversation is not None:
            self.owner = owner_of(who, request, server)
            self._continued(body.conversation)
        elif self.redo is not None:
            raise ApiError(422, "invalid_request", "again, edit: only with a conversation")

    def _continued(self, ident: str) -> None:
        """The stored turns a question in conversation ``ident`` is asked after, checked
        against what it asks of the conversation."""
        assert self.owner is not None
        kept = self.server.shirabe.conversations
        try:
            found = kept.get(self.owner, ident)
            stored = kept.turns(self.owner, ident)
        except NotFoundError as exc:
            raise ApiError(404, "not_found", str(exc)) from None
        if self.redo is None and found.turns >= kept.max_turns:
            raise ApiError(
                409,
                "conversation_full",
                f"conversation {found.id!r} has {found.turns} turns, the most kept "
                "(SHIRABE_SERVER__MAX_CONVERSATION_TURNS): start a new one",
            )
        if self.redo is not None:  # 再生成 or an edit: asked after the turns before it
            asked = next((t for t in stored if t.position == self.redo), None)
            again = self.body.again is not None
            if asked is None or (again and asked.question != self.body.question):
                what = "this question" if again else "a turn"
                raise ApiError(
                    422,
                    "invalid_request",
                    f"turn {self.redo} of conversation {found.id!r} is not {what}",
                )
            if again and asked.versions >= kept.max_versions:
                raise ApiError(
                    409,
                    "too_many_versions",
                    f"turn {asked.position} has {asked.versions} answers, the most kept "
                    "(SHIRABE_SERVER__MAX_ANSWER_VERSIONS)",
                )
            stored = [t for t in stored if t.position < self.redo]
        if not self.turns:
            self.turns = history(self.server, self.who, stored)[-MAX_HISTORY:]

    def record(self, answer: Answer) -> dict[str, Any]:
        """The answer as JSON; in a conversation, recorded first (see :class:`Asking`). A new
        conversation is made here, with its first turn, so that a question stopped before its
        answer leaves no empty conversation behind."""
        shown = answer_json(answer, self.server.show)
        if self.owner is None:
            return shown
        kept = self.server.shirabe.conversations
        ident = self.body.conversation or kept.create(self.owner).id
        new = NewTurn(
            question=answer.question,
            answer=answer.text,
            refused=answer.refused,
            standalone=answer.standalone,
            refusal_reason=answer.refusal_reason,
            citations=shown["citations"],
            sources=[c.source for c in answer.citations],
            categories=self.body.categories,
        )
        if self.body.again is not None:
            turn = kept.add_version(self.owner, ident, self.body.again, new)
        elif self.body.edit is not None:
            turn = kept.replace_turn(self.owner, ident, self.body.edit, new)
        else:
            turn = kept.add_turn(self.owner, ident, new)
        return shown | {
            "conversation": ident,
            "turn": turn.position,
            "version": turn.version,
            "versions": turn.versions,
        }


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
def ask(who: Who, server: ServerDep, body: AskRequest, request: Request) -> dict[str, Any]:
    asking = Asking(who, server, body, request)
    answer = server.shirabe.ask(
        body.question, k=body.top_k, filters=asking.filters, history=asking.turns
    )
    return asking.record(answer)


@router.post("/api/ask/stream")
async def ask_stream(
    who: Who, server: ServerDep, body: AskRequest, request: Request
) -> EventSourceResponse:
    """Server-sent events: ``hits``, ``token`` (many), ``citations``, ``done``; or
    ``error``. Closing the connection stops the answer being written."""
    asking = await run_in_threadpool(Asking, who, server, body, request)  # reads the store
    events = server.shirabe.ask_stream(
        body.question, k=body.top_k, filters=asking.filters, history=asking.turns
    )

    async def send() -> AsyncIterator[dict[str, str]]:
        try:
            async for event in iterate_in_threadpool(events):
                if await request.is_disconnected():
                    break
                if isinstance(event, DoneEvent):
                    shown = await run_in_threadpool(asking.record, event.answer)
                else:
                    shown = _event(event, server.show)
                yield {"event": event.kind, "data": json.dumps(shown, ensure_ascii=False)}
        except GeneratorError as exc:
            yield {"event": "error", "data": json.dumps({"message": str(exc)}, ensure_ascii=False)}
        finally:
            # on a hang-up this runs cancelled, so no awaiting: closing the generator ends
            # the model's stream at once (the worker thread is idle by now)
            close_events(events)

    return EventSourceResponse(send(), ping=15)


def close_events(events: Iterator[GenerationEvent]) -> None:
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
