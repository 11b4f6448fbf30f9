"""Feedback (👍 / 👎 with a comment) on the answers of stored turns."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from shirabe.access.accounts import Database
from shirabe.conversations.rows import ANSWER_COLUMNS, chosen_or_version, now, turn_of
from shirabe.errors import ConversationError
from shirabe.records import COMMENT_CHARS, Feedback, Rating, StoredTurn

_GIVEN = (
    "SELECT f.id AS feedback_id, f.owner AS feedback_owner, f.rating, f.comment, "
    "f.at AS feedback_at, f.version AS feedback_version, t.conversation, t.position, "
    "t.question, t.versions, f.version AS version, "
    + ", ".join(chosen_or_version(c) for c in ANSWER_COLUMNS)
    + " FROM feedback f JOIN turns t ON t.conversation = f.conversation AND t.position = "
    "f.position LEFT JOIN turn_versions v ON v.conversation = f.conversation AND "
    "v.position = f.position AND v.version = f.version"
)
"""Feedback with the answer it was given on: the turn's, or the version's when the turn has
several."""


class FeedbackBook(ABC):
    """Feedback on the turns of each owner's conversations."""

    def __init__(self, database: Database) -> None:
        self._db = database

    @abstractmethod
    def turn(self, owner: str, ident: str, position: int) -> StoredTurn:
        """Turn ``position`` of the owner's conversation (``NotFoundError`` if none)."""

    def give_feedback(
        self, owner: str, ident: str, position: int, rating: Rating, comment: str = ""
    ) -> Feedback:
        """👍 or 👎 on the answer a turn of the owner's conversation shows; giving it again
        on that answer replaces it."""
        if rating not in ("up", "down"):
            raise ConversationError(f"rating must be 'up' or 'down', not {rating!r}")
        if len(comment) > COMMENT_CHARS:
            raise ConversationError(f"comment is longer than {COMMENT_CHARS} characters")
        version = self.turn(owner, ident, position).version
        where = (ident, position, version)
        self._db.changes(
            [
                (
                    "DELETE FROM feedback WHERE conversation = ? AND position = ? AND version = ?",
                    where,
                ),
                (
                    "INSERT INTO feedback (owner, conversation, position, version, rating, "
                    "comment, at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (owner, *where, rating, comment.strip(), now()),
                ),
            ]
        )
        return next(
            f
            for f in self.feedback(owner=owner, conversation=ident)
            if (f.position, f.version) == (position, version)
        )

    def feedback(
        self,
        *,
        owner: str | None = None,
        rating: Rating | None = None,
        conversation: str | None = None,
    ) -> list[Feedback]:
        """Feedback with the answers it was given on, oldest first: one owner's, or
        everyone's (for admins)."""
        where: list[str] = []
        params: list[Any] = []
        for column, value in (("owner", owner), ("rating", rating), ("conversation", conversation)):
            if value is not None:
                where.append(f"f.{column} = ?")
                params.append(value)
        sql = _GIVEN + (" WHERE " + " AND ".join(where) if where else "")
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
                turn=turn_of(r),
                version=int(r["feedback_version"]),
            )
            for r in rows
        ]
