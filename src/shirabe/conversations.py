"""Conversations and feedback, kept per owner in the accounts database of the store.

An owner is a signed-in user (``user:<name>``) or an anonymous browser, known by a random
client id it keeps (``anon:`` and the id's SHA-256, so the id itself is never stored). Every
read and write names the owner, and a conversation of another owner is "not found", never
"forbidden", so ids cannot be probed.

A turn is stored with its answer, its citations and the keys of the documents they cite; the
faces show a stored answer only while its asker may still read every document it cites (see
``shirabe.server.routes.conversations``).

Feedback (👍 / 👎 with an optional comment) is given on a stored turn, so the question, the
answer and the citations recorded are the ones shirabe gave, not what a client claims.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
from datetime import UTC, datetime
from typing import Any

from shirabe.access.accounts import Database, Row
from shirabe.errors import ConversationError, NotFoundError
from shirabe.records import (
    COMMENT_CHARS,
    TITLE_CHARS,
    Conversation,
    Feedback,
    NewTurn,
    Rating,
    StoredTurn,
)

_CLIENT_ID = re.compile(r"[A-Za-z0-9_-]{16,128}")


def user_owner(name: str) -> str:
    return f"user:{name}"


def client_owner(client_id: str) -> str:
    """The owner of an anonymous browser's conversations, from the id it keeps."""
    if not _CLIENT_ID.fullmatch(client_id):
        raise ConversationError("client id must be 16-128 letters, digits, '-' or '_'")
    return "anon:" + hashlib.sha256(client_id.encode("ascii")).hexdigest()


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")  # orders the list


def title_of(question: str) -> str:
    text = " ".join(question.split())
    return text if len(text) <= TITLE_CHARS else text[: TITLE_CHARS - 1] + "…"


def _turn(row: Row) -> StoredTurn:
    return StoredTurn(
        position=int(row["position"]),
        question=row["question"],
        answer=row["answer"],
        refused=bool(row["refused"]),
        at=row["at"],
        standalone=row["standalone"],
        refusal_reason=row["refusal_reason"],
        citations=json.loads(row["citations"]),
        sources=tuple(json.loads(row["sources"])),
        categories=tuple(json.loads(row["categories"])),
    )


def _conversation(row: Row) -> Conversation:
    return Conversation(
        row["id"], row["title"], row["created_at"], row["updated_at"], int(row["turns"])
    )


class Conversations:
    """The conversations and feedback of every owner; each method is for one owner."""

    user_owner = staticmethod(user_owner)
    """The owner of a signed-in user's conversations."""
    client_owner = staticmethod(client_owner)
    """The owner of an anonymous browser's conversations, from the id it keeps."""

    def __init__(self, database: Database, *, max_turns: int = 200) -> None:
        self._db = database
        self.max_turns = max_turns

    def create(self, owner: str, title: str = "") -> Conversation:
        now = _now()
        ident = secrets.token_urlsafe(12)
        self._db.change(
            "INSERT INTO conversations (id, owner, title, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (ident, owner, title_of(title), now, now),
        )
        return self.get(owner, ident)

    def of(self, owner: str, *, limit: int = 200) -> list[Conversation]:
        """The owner's conversations, the most recently used first."""
        rows = self._db.query(
            "SELECT c.id, c.title, c.created_at, c.updated_at, "
            "(SELECT COUNT(*) FROM turns t WHERE t.conversation = c.id) AS turns "
            "FROM conversations c WHERE c.owner = ? ORDER BY c.updated_at DESC, c.id LIMIT ?",
            (owner, limit),
        )
        return [_conversation(r) for r in rows]

    def get(self, owner: str, ident: str) -> Conversation:
        rows = self._db.query(
            "SELECT c.id, c.title, c.created_at, c.updated_at, "
            "(SELECT COUNT(*) FROM turns t WHERE t.conversation = c.id) AS turns "
            "FROM conversations c WHERE c.id = ? AND c.owner = ?",
            (ident, owner),
        )
        if not rows:
            raise NotFoundError(f"conversation {ident!r} not found")
        return _conversation(rows[0])

    def turns(self, owner: str, ident: str) -> list[StoredTurn]:
        self.get(owner, ident)
        rows = self._db.query(
            "SELECT * FROM turns WHERE conversation = ? ORDER BY position", (ident,)
        )
        return [_turn(r) for r in rows]

    def add_turn(self, owner: str, ident: str, turn: NewTurn) -> StoredTurn:
        """Record ``turn`` at the end of the conversation; its first question names an
        untitled conversation."""
        found = self.get(owner, ident)
        if found.turns >= self.max_turns:
            raise ConversationError(
                f"conversation {ident!r} has {found.turns} turns, the most kept "
                "(SHIRABE_SERVER__MAX_CONVERSATION_TURNS): start a new one"
            )
        now = _now()
        self._db.change(
            "INSERT INTO turns (conversation, position, question, standalone, answer, refused, "
            "refusal_reason, citations, sources, categories, at) "
            "VALUES (?, (SELECT COALESCE(MAX(position), 0) + 1 FROM turns WHERE conversation = ?),"
            " ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                ident,
                ident,
                turn.question,
                turn.standalone,
                turn.answer,
                int(turn.refused),
                turn.refusal_reason,
                json.dumps(list(turn.citations), ensure_ascii=False),
                json.dumps(list(dict.fromkeys(turn.sources)), ensure_ascii=False),
                json.dumps(list(turn.categories), ensure_ascii=False),
                now,
            ),
        )
        title = found.title or title_of(turn.question)
        self._db.change(
            "UPDATE conversations SET updated_at = ?, title = ? WHERE id = ? AND owner = ?",
            (now, title, ident, owner),
        )
        return self.turns(owner, ident)[-1]

    def rename(self, owner: str, ident: str, title: str) -> Conversation:
        clean = title_of(title)
        if not clean:
            raise ConversationError("title must not be empty")
        self.get(owner, ident)
        self._db.change(
            "UPDATE conversations SET title = ? WHERE id = ? AND owner = ?", (clean, ident, owner)
        )
        return self.get(owner, ident)

    def delete(self, owner: str, ident: str) -> None:
        """The conversation, its turns and the feedback given on them."""
        self.get(owner, ident)
        self._db.change("DELETE FROM feedback WHERE conversation = ?", (ident,))
        self._db.change("DELETE FROM turns WHERE conversation = ?", (ident,))
        self._db.change("DELETE FROM conversations WHERE id = ? AND owner = ?", (ident, owner))

    # feedback

    def give_feedback(
        self, owner: str, ident: str, position: int, rating: Rating, comment: str = ""
    ) -> Feedback:
        """👍 or 👎 on a turn of the owner's conversation; giving it again replaces it."""
        if rating not in ("up", "down"):
            raise ConversationError(f"rating must be 'up' or 'down', not {rating!r}")
        if len(comment) > COMMENT_CHARS:
            raise ConversationError(f"comment is longer than {COMMENT_CHARS} characters")
        if not any(t.position == position for t in self.turns(owner, ident)):
            raise NotFoundError(f"conversation {ident!r} has no turn {position}")
        self._db.change(
            "DELETE FROM feedback WHERE conversation = ? AND position = ?", (ident, position)
        )
        self._db.change(
            "INSERT INTO feedback (owner, conversation, position, rating, comment, at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (owner, ident, position, rating, comment.strip(), _now()),
        )
        return next(
            f for f in self.feedback(owner=owner, conversation=ident) if f.position == position
        )

    def feedback(
        self,
        *,
        owner: str | None = None,
        rating: Rating | None = None,
        conversation: str | None = None,
    ) -> list[Feedback]:
        """Feedback with its turns, oldest first: one owner's, or everyone's (for admins)."""
        sql = (
            "SELECT f.id AS feedback_id, f.owner AS feedback_owner, f.rating, f.comment, "
            "f.at AS feedback_at, t.* FROM feedback f JOIN turns t "
            "ON t.conversation = f.conversation AND t.position = f.position"
        )
        where: list[str] = []
        params: list[Any] = []
        if owner is not None:
            where.append("f.owner = ?")
            params.append(owner)
        if rating is not None:
            where.append("f.rating = ?")
            params.append(rating)
        if conversation is not None:
            where.append("f.conversation = ?")
            params.append(conversation)
        if where:
            sql += " WHERE " + " AND ".join(where)
        rows = self._db.query(sql + " ORDER BY f.id", params)
        return [
            Feedback(
                id=int(r["feedback_id"]),
                owner=r["feedback_owner"],
                conversation=r["conversation"],
                position=int(r["position"]),
                rating=r["rating"],
                comment=r["comment"],
                at=r["feedback_at"],
                turn=_turn(r),
            )
            for r in rows
        ]
