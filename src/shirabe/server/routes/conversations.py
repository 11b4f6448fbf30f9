"""Conversations kept on the server, and feedback on their answers: ``/api/conversations``.

Each caller sees only their own conversations: a signed-in user's, or an anonymous browser's,
known by the random id it sends in ``X-Shirabe-Client``. A stored answer is shown only while
the caller may still read every document it cites; otherwise its text and citations are
withheld (``withheld: true``) and it is not used to understand a follow-up.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Request, Response
from pydantic import BaseModel, Field

from shirabe.errors import ConversationError, NotFoundError
from shirabe.records import TITLE_CHARS, Conversation, Feedback, StoredTurn, Turn, with_marks
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


def turn_json(server: Server, who: Principal, turn: StoredTurn) -> dict[str, Any]:
    shown = readable(server, who, turn)
    return {
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
    }


def conversation_json(conversation: Conversation) -> dict[str, Any]:
    return {
        "id": conversation.id,
        "title": conversation.title,
        "created_at": conversation.created_at,
        "updated_at": conversation.updated_at,
        "turns": conversation.turns,
    }


def feedback_json(server: Server, who: Principal, feedback: Feedback) -> dict[str, Any]:
    return {
        "id": feedback.id,
        "conversation": feedback.conversation,
        "position": feedback.position,
        "rating": feedback.rating,
        "comment": feedback.comment,
        "at": feedback.at,
        "turn": turn_json(server, who, feedback.turn),
    }


def _not_found(exc: NotFoundError) -> ApiError:
    return ApiError(404, "not_found", str(exc))


class NewConversation(BaseModel):
    title: str = Field(
        default="", max_length=TITLE_CHARS * 4, description="題名（省略時は最初の質問）"
    )


class Rename(BaseModel):
    title: str = Field(min_length=1, max_length=TITLE_CHARS * 4)


class FeedbackRequest(BaseModel):
    rating: Literal["up", "down"]
    comment: str = Field(default="", max_length=2000)


@router.get("/api/conversations")
def list_conversations(server: ServerDep, owner: Owner) -> dict[str, Any]:
    """The caller's conversations, the most recently used first."""
    found = server.shirabe.conversations.of(owner)
    return {"conversations": [conversation_json(c) for c in found]}


@router.post("/api/conversations", status_code=201)
def create_conversation(server: ServerDep, owner: Owner, body: NewConversation) -> dict[str, Any]:
    return conversation_json(server.shirabe.conversations.create(owner, body.title))


@router.get("/api/conversations/{ident}")
def get_conversation(who: Who, server: ServerDep, owner: Owner, ident: str) -> dict[str, Any]:
    kept = server.shirabe.conversations
    try:
        conversation = kept.get(owner, ident)
        turns = kept.turns(owner, ident)
    except NotFoundError as exc:
        raise _not_found(exc) from None
    given = {f.position: f for f in kept.feedback(owner=owner, conversation=ident)}
    history = []
    for turn in turns:
        shown = turn_json(server, who, turn)
        rated = given.get(turn.position)
        if rated is not None:  # the page shows the 👍 / 👎 given, after a reload too
            shown["feedback"] = {"rating": rated.rating, "comment": rated.comment}
        history.append(shown)
    return conversation_json(conversation) | {"history": history}


@router.patch("/api/conversations/{ident}")
def rename_conversation(
    server: ServerDep, owner: Owner, ident: str, body: Rename
) -> dict[str, Any]:
    try:
        return conversation_json(server.shirabe.conversations.rename(owner, ident, body.title))
    except NotFoundError as exc:
        raise _not_found(exc) from None
    except ConversationError as exc:
        raise ApiError(422, "invalid_request", str(exc)) from None


@router.delete("/api/conversations/{ident}", status_code=204)
def delete_conversation(server: ServerDep, owner: Owner, ident: str) -> Response:
    try:
        server.shirabe.conversations.delete(owner, ident)
    except NotFoundError as exc:
        raise _not_found(exc) from None
    return Response(status_code=204)


@router.post("/api/conversations/{ident}/turns/{position}/feedback")
def give_feedback(
    who: Who, server: ServerDep, owner: Owner, ident: str, position: int, body: FeedbackRequest
) -> dict[str, Any]:
    """👍 or 👎, with an optional comment, on an answer of the caller's conversation."""
    try:
        given = server.shirabe.conversations.give_feedback(
            owner, ident, position, body.rating, body.comment
        )
    except NotFoundError as exc:
        raise _not_found(exc) from None
    except ConversationError as exc:
        raise ApiError(422, "invalid_request", str(exc)) from None
    return feedback_json(server, who, given)
