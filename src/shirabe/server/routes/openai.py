"""An OpenAI-compatible face: ``GET /v1/models`` and ``POST /v1/chat/completions``.

Chat front-ends that speak the OpenAI API (Open WebUI, LibreChat, LM Studio's and editors' chat
panels) use shirabe as a model named ``shirabe``. The last user message is answered by the
normal pipeline, the earlier user and assistant messages are the conversation a follow-up is
understood in, and the citations are appended as a numbered source list. Tokens are shirabe's
own bearer tokens, so a front-end sees exactly what its user may read.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any, Literal

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field
from sse_starlette.sse import EventSourceResponse
from starlette.concurrency import iterate_in_threadpool, run_in_threadpool

from shirabe.errors import GeneratorError
from shirabe.records import Answer, DoneEvent, ErrorEvent, TokenEvent, Turn
from shirabe.server.deps import Server, ServerDep, Who
from shirabe.server.errors import ApiError
from shirabe.server.routes.answers import (
    ANSWER_CHARS,
    MAX_HISTORY,
    QUESTION_CHARS,
    close_events,
)

router = APIRouter(tags=["openai"])

MODEL = "shirabe"
SOURCES = "\n\n出典:\n"
"""What separates an answer from its source list (and, in the history a front-end sends back,
the answer from what is not part of it)."""
SEARCHED = "\n\n検索した質問: "
REASON = "\n\n理由: "
REPLACED = "\n\n---\n確認の結果、次の回答に置き換えます:\n\n"
MESSAGE_CHARS = 100_000
"""The longest message accepted (front-ends send long system prompts; only the last
``MAX_HISTORY`` turns are used, each cut to the API's limits)."""


class TextPart(BaseModel):
    model_config = ConfigDict(extra="ignore")
    type: str
    text: str | None = Field(default=None, max_length=MESSAGE_CHARS)


class Message(BaseModel):
    model_config = ConfigDict(extra="ignore")
    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[TextPart] | None = Field(default=None, max_length=MESSAGE_CHARS)

    def text(self) -> str:
        if isinstance(self.content, list):
            return "".join(p.text or "" for p in self.content if p.type == "text")
        return self.content or ""


class ChatRequest(BaseModel):
    """The fields of an OpenAI chat request shirabe reads; the others (temperature, tools, …)
    are accepted and ignored."""

    model_config = ConfigDict(extra="ignore")
    model: str = Field(max_length=200)
    messages: list[Message] = Field(min_length=1, max_length=500)
    stream: bool = False
    categories: list[str] = Field(
        default_factory=list, max_length=50, description="shirabe の拡張: 検索するカテゴリー"
    )

    def question(self) -> str:
        last = self.messages[-1]
        text = last.text().strip()
        if last.role != "user" or not text:
            raise ApiError(
                422, "invalid_request", "messages: the last message must be a user's question"
            )
        if len(text) > QUESTION_CHARS:
            raise ApiError(
                422,
                "invalid_request",
                f"messages: the question has {len(text)} characters, at most {QUESTION_CHARS}",
            )
        return text

    def turns(self) -> list[Turn]:
        """The earlier questions, each with the answer that followed it (if any)."""
        turns: list[Turn] = []
        asked: str | None = None
        for message in self.messages[:-1]:
            if message.role == "user" and message.text().strip():
                if asked is not None:
                    turns.append(Turn(asked, ""))
                asked = message.text().strip()[:QUESTION_CHARS]
            elif message.role == "assistant" and asked is not None:
                turns.append(Turn(asked, answer_of(message.text())[:ANSWER_CHARS]))
                asked = None
        if asked is not None:
            turns.append(Turn(asked, ""))
        return turns[-MAX_HISTORY:]


def answer_of(reply: str) -> str:
    """The answer of a reply this face wrote, without the lines it added after it."""
    if REPLACED in reply:
        reply = reply.rsplit(REPLACED, 1)[1]
    for marker in (SEARCHED, REASON, SOURCES):
        reply = reply.split(marker, 1)[0]
    return reply.strip()


def footer(answer: Answer, server: Server) -> str:
    """What follows the answer: the question as searched (a follow-up made standalone) and the
    numbered sources."""
    text = ""
    if answer.standalone and answer.standalone != answer.question:
        text += SEARCHED + answer.standalone
    if answer.refused and answer.refusal_reason and answer.refusal_reason not in answer.text:
        text += REASON + answer.refusal_reason
    if answer.citations:
        text += SOURCES + "\n".join(
            f"- [{c.number}] {c.label(server.show(c.source))}" for c in answer.citations
        )
    return text


@router.get("/v1/models")
def models(who: Who) -> dict[str, Any]:
    """The one model: ``shirabe``."""
    return {
        "object": "list",
        "data": [{"id": MODEL, "object": "model", "created": 0, "owned_by": "shirabe"}],
    }


def _checked(body: ChatRequest) -> None:
    if body.model != MODEL:
        raise ApiError(404, "model_not_found", f"model: {body.model!r} unknown; use {MODEL!r}")


@router.post("/v1/chat/completions", response_model=None)
async def chat_completions(
    who: Who, server: ServerDep, body: ChatRequest, request: Request
) -> dict[str, Any] | EventSourceResponse:
    """A chat completion: the last user message answered from the documents the caller may
    read, with the conversation before it; ``stream: true`` sends chunks as server-sent events
    and ``[DONE]``."""
    _checked(body)
    question, turns = body.question(), body.turns()
    filters = server.scope(who, body.categories)
    ident, created = f"chatcmpl-{uuid.uuid4().hex}", int(time.time())
    shirabe = server.shirabe
    if not body.stream:
        answer = await run_in_threadpool(shirabe.ask, question, filters=filters, history=turns)
        return {
            "id": ident,
            "object": "chat.completion",
            "created": created,
            "model": MODEL,
            "choices": [
                {
                    "index": 0,
                    "message": {
                        "role": "assistant",
                        "content": answer.text + footer(answer, server),
                    },
                    "finish_reason": "stop",
                }
            ],
        }
    events = shirabe.ask_stream(question, filters=filters, history=turns)

    def chunk(delta: dict[str, str], finish: str | None = None) -> dict[str, str]:
        data = {
            "id": ident,
            "object": "chat.completion.chunk",
            "created": created,
            "model": MODEL,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        return {"data": json.dumps(data, ensure_ascii=False)}

    async def send() -> AsyncIterator[dict[str, str]]:
        yield chunk({"role": "assistant", "content": ""})
        wrote = ""
        try:
            async for event in iterate_in_threadpool(events):
                if await request.is_disconnected():
                    return
                if isinstance(event, TokenEvent):
                    wrote += event.text
                    yield chunk({"content": event.text})
                elif isinstance(event, DoneEvent):
                    answer = event.answer
                    if wrote.strip() == answer.text.strip():
                        rest = ""
                    else:  # a model's reply that did not hold up, or nothing streamed
                        rest = (REPLACED if wrote else "") + answer.text
                    yield chunk({"content": rest + footer(answer, server)})
                elif isinstance(event, ErrorEvent):
                    yield chunk({"content": f"\n\nエラー: {event.message}"})
        except GeneratorError as exc:
            yield chunk({"content": f"\n\nエラー: {exc}"})
        finally:
            close_events(events)
        yield chunk({}, "stop")
        yield {"data": "[DONE]"}

    return EventSourceResponse(send(), ping=15)
