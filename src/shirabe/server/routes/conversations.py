"""Conversations kept on the server, and feedback on their answers: ``/api/conversations``.

Each caller sees only their own conversations: a signed-in user's, or an anonymous browser's,
known by the random id it sends in ``X-Shirabe-Client``. A stored answer is shown only while
the caller may still read every document it cites; otherwise its text and citations are
withheld (``withheld: true``) and it is not used to understand a follow-up.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal
from urllib.parse import quote

from fastapi import APIRouter, Depends, Path, Query, Request, Response
from fastapi.responses import PlainTextResponse
from pydantic import BaseModel, Field

from shirabe.errors import ConversationError, NotFoundError
from shirabe.records import (
    COMMENT_CHARS,
    SEARCH_CHARS,
    TITLE_CHARS,
    Conversation,
    Feedback,
    StoredTurn,
    Turn,
    with_marks,
)
from shirabe.server.deps import Principal, Server, ServerDep, Who
from shirabe.server.errors import ApiError

router = APIRouter(tags=["conversations"])

CLIENT_HEADER = "x-shirabe-client"
WITHHELD = "この回答が引用した文書は、現在あなたには閲覧できないため表示しません。"


def owner_of(who: Principal, request: Request, server: Server) -> str:
    """Whose conversations a request may see: the user's, or the anonymous browser's."""
    kept = server.shirabe.conversations
    if who.name is not None:
        return kept.user_owner(who.name)
    client = request.headers.get(CLIENT_HEADER, "")
    if not client:
        raise ApiError(
            400, "no_client", f"anonymous callers keep conversations under an {CLIENT_HEADER} id"
        )
    try:
        return kept.client_owner(client)
    except ConversationError as exc:
        raise ApiError(400, "bad_client", str(exc)) from None


def _owner(who: Who, request: Request, server: ServerDep) -> str:
    return owner_of(who, request, server)


Owner = Annotated[str, Depends(_owner)]
Position = Annotated[int, Path(ge=1, le=1_000_000, description="会話の中の質問の番号")]


def readable(server: Server, who: Principal, turn: StoredTurn) -> bool:
    """Whether ``who`` may read every document the turn's answer cites, as they are now."""
    catalog = server.shirabe.catalog
    return all(catalog.source(key, who.reader) is not None for key in turn.sources)


def history(server: Server, who: Principal, turns: list[StoredTurn]) -> list[Turn]:
    """Stored turns as the conversation a follow-up is understood in, each question as it was
    searched (a follow-up made standalone), so that it is not read again against turns that
    came before it in another order (再生成); an answer the caller may no longer read is left
    out."""
    return [
        Turn(t.standalone or t.question, t.answer if readable(server, who, t) else "")
        for t in turns
    ]


def turn_json(
    server: Server, who: Principal, turn: StoredTurn, given: Feedback | None = None
) -> dict[str, Any]:
    """A stored turn as the caller may see it, with the 👍 / 👎 ``given`` on its answer."""
    shown = readable(server, who, turn)
    out: dict[str, Any] = {
        "position": turn.position,
        "question": turn.question,
        "standalone": turn.standalone,
        "answer": turn.answer if shown else WITHHELD,
        "refused": turn.refused,
        "refusal_reason": turn.refusal_reason,
        "citations": with_marks(turn.citations, turn.answer) if shown else [],
        "categories": list(turn.categories),
        "withheld": not shown,
        "at": turn.at,
        "version": turn.version,
        "versions": turn.versions,
    }
    if given is not None:  # the page shows the 👍 / 👎 given, after a reload too
        out["feedback"] = {"rating": given.rating, "comment": given.comment}
    return out


def conversation_json(conversation: Conversation) -> dict[str, Any]:
    return {
        "id": conversation.id,
        "title": conversation.title,
        "created_at": conversation.created_at,
        "updated_at": conversation.updated_at,
        "turns": conversation.turns,
        "pinned": conversation.pinned,
    }


def feedback_json(server: Server, who: Principal, feedback: Feedback) -> dict[str, Any]:
    return {
        "id": feedback.id,
        "conversation": feedback.conversation,
        "position": feedback.position,
        "version": feedback.version,
        "rating": feedback.rating,
        "comment": feedback.comment,
        "at": feedback.at,
        "turn": turn_json(server, who, feedback.turn),
    }


def _not_found(exc: NotFoundError) -> ApiError:
    return ApiError(404, "not_found", str(exc))


def _given(server: Server, owner: str, ident: str) -> dict[tuple[int, int], Feedback]:
    """The feedback given in a conversation, by turn and answer version."""
    found = server.shirabe.conversations.feedback(owner=owner, conversation=ident)
    return {(f.position, f.version): f for f in found}


class NewConversation(BaseModel):
    title: str = Field(
        default="", max_length=TITLE_CHARS * 4, description="題名（省略時は最初の質問から付ける）"
    )


class ConversationChange(BaseModel):
    title: str | None = Field(
        default=None, min_length=1, max_length=TITLE_CHARS * 4, description="新しい題名"
    )
    pinned: bool | None = Field(default=None, description="一覧の上に固定する（ピン留め）")


class VersionChoice(BaseModel):
    version: int = Field(ge=1, le=100, description="表示し、続きの質問が読む回答の版")


class FeedbackRequest(BaseModel):
    rating: Literal["up", "down"]
    comment: str = Field(default="", max_length=COMMENT_CHARS)


@router.get("/api/conversations")
def list_conversations(
    who: Who,
    server: ServerDep,
    owner: Owner,
    q: Annotated[
        str | None,
        Query(
            min_length=1,
            max_length=SEARCH_CHARS,
            description="検索語: 題名・質問・回答にすべての語を含む会話だけ（閲覧できなくなった"
            "回答は探さない）",
        ),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 200,
) -> dict[str, Any]:
    """The caller's conversations: the pinned ones, then the most recently used first; with
    ``q``, those it finds, each with the words around the match (``match``)."""
    kept = server.shirabe.conversations
    if q is None:
        return {"conversations": [conversation_json(c) for c in kept.of(owner, limit=limit)]}
    found = kept.search(owner, q, may_read=_reader_of(server, who), limit=limit)
    return {
        "query": q,
        "conversations": [conversation_json(f.conversation) | {"match": f.excerpt} for f in found],
    }


def _reader_of(server: Server, who: Principal) -> Callable[[Sequence[str]], bool]:
    """Whether ``who`` may read every one of some documents (each looked up once)."""
    catalog = server.shirabe.catalog
    known: dict[str, bool] = {}

    def may_read(keys: Sequence[str]) -> bool:
        for key in keys:
            if key not in known:
                known[key] = catalog.source(key, who.reader) is not None
            if not known[key]:
                return False
        return True

    return may_read


@router.post("/api/conversations", status_code=201)
def create_conversation(server: ServerDep, owner: Owner, body: NewConversation) -> dict[str, Any]:
    return conversation_json(server.shirabe.conversations.create(owner, body.title))


@router.get("/api/conversations/{ident}")
def get_conversation(who: Who, server: ServerDep, owner: Owner, ident: str) -> dict[str, Any]:
    """The conversation with its turns, each with its chosen answer."""
    kept = server.shirabe.conversations
    try:
        conversation = kept.get(owner, ident)
        turns = kept.turns(owner, ident)
    except NotFoundError as exc:
        raise _not_found(exc) from None
    given = _given(server, owner, ident)
    history = [turn_json(server, who, t, given.get((t.position, t.version))) for t in turns]
    return conversation_json(conversation) | {"history": history}


@router.patch("/api/conversations/{ident}")
def change_conversation(
    server: ServerDep, owner: Owner, ident: str, body: ConversationChange
) -> dict[str, Any]:
    """Rename (``title``, kept from then on) or pin (``pinned``) the conversation."""
    kept = server.shirabe.conversations
    if body.title is None and body.pinned is None:
        raise ApiError(422, "invalid_request", "give a title, pinned, or both")
    try:
        changed = kept.get(owner, ident)
        if body.title is not None:
            changed = kept.rename(owner, ident, body.title)
        if body.pinned is not None:
            changed = kept.pin(owner, ident, body.pinned)
    except NotFoundError as exc:
        raise _not_found(exc) from None
    except ConversationError as exc:
        raise ApiError(422, "invalid_request", str(exc)) from None
    return conversation_json(changed)


@router.delete("/api/conversations/{ident}", status_code=204)
def delete_conversation(server: ServerDep, owner: Owner, ident: str) -> Response:
    try:
        server.shirabe.conversations.delete(owner, ident)
    except NotFoundError as exc:
        raise _not_found(exc) from None
    return Response(status_code=204)


@router.patch("/api/conversations/{ident}/turns/{position}")
def choose_version(
    who: Who, server: ServerDep, owner: Owner, ident: str, position: Position, body: VersionChoice
) -> dict[str, Any]:
    """Show answer ``version`` of the turn (kept): the answer its later follow-ups read."""
    try:
        turn = server.shirabe.conversations.choose_version(owner, ident, position, body.version)
    except NotFoundError as exc:
        raise _not_found(exc) from None
    given = _given(server, owner, ident).get((turn.position, turn.version))
    return turn_json(server, who, turn, given)


@router.get(
    "/api/conversations/{ident}/export",
    response_class=PlainTextResponse,
    responses={200: {"content": {"text/markdown": {}}, "description": "会話の Markdown"}},
)
def export_conversation(who: Who, server: ServerDep, owner: Owner, ident: str) -> Response:
    """The conversation as a Markdown file: each question, its chosen answer and the
    answer's sources (file › heading path › page / sheet / slide), every text escaped."""

    def withheld(turn: StoredTurn) -> str:
        return "" if readable(server, who, turn) else WITHHELD

    limit = server.shirabe.settings.server.export_bytes
    try:
        name, text = server.shirabe.conversations.export(
            owner, ident, withheld=withheld, limit_bytes=limit
        )
    except NotFoundError as exc:
        raise _not_found(exc) from None
    disposition = f"attachment; filename=\"shirabe-{ident}.md\"; filename*=UTF-8''{quote(name)}"
    return Response(
        text,
        media_type="text/markdown; charset=utf-8",
        headers={"Content-Disposition": disposition},
    )


@router.post("/api/conversations/{ident}/turns/{position}/feedback")
def give_feedback(
    who: Who, server: ServerDep, owner: Owner, ident: str, position: Position, body: FeedbackRequest
) -> dict[str, Any]:
    """👍 or 👎, with an optional comment, on the answer a turn of the caller's conversation
    shows."""
    try:
        given = server.shirabe.conversations.give_feedback(
            owner, ident, position, body.rating, body.comment
        )
    except NotFoundError as exc:
        raise _not_found(exc) from None
    except ConversationError as exc:
        raise ApiError(422, "invalid_request", str(exc)) from None
    return feedback_json(server, who, given)
