"""The conversations of every owner, their turns and their answers' versions."""

from __future__ import annotations

import json
import secrets
from collections import defaultdict
from collections.abc import Callable, Sequence
from functools import partial

from shirabe.access.accounts import Database
from shirabe.conversations import markdown
from shirabe.conversations.feedback import FeedbackBook
from shirabe.conversations.owners import client_owner, user_owner
from shirabe.conversations.rows import (
    ANSWER_COLUMNS,
    LISTED,
    ORDER,
    answer_values,
    columns,
    conversation_of,
    now,
    settings,
    turn_of,
)
from shirabe.conversations.search import Searched, matched, search_words
from shirabe.conversations.titles import title_of
from shirabe.errors import ConversationError, NotFoundError
from shirabe.records import Conversation, FoundConversation, NewTurn, StoredTurn

Titler = Callable[[str], str]
"""A title for a new conversation, from its first question."""


class Conversations(FeedbackBook):
    """The conversations and feedback of every owner; each method is for one owner."""

    user_owner = staticmethod(user_owner)
    """The owner of a signed-in user's conversations."""
    client_owner = staticmethod(client_owner)
    """The owner of an anonymous browser's conversations, from the id it keeps."""

    def __init__(
        self,
        database: Database,
        *,
        max_turns: int = 200,
        max_versions: int = 10,
        titles: Titler = title_of,
    ) -> None:
        super().__init__(database)
        self.max_turns = max_turns
        self.max_versions = max_versions
        self._titles = titles

    def create(self, owner: str, title: str = "") -> Conversation:
        """A new conversation; one given a title keeps it (else its first question names
        it)."""
        stamp = now()
        ident = secrets.token_urlsafe(12)
        clean = title_of(title)
        self._db.change(
            "INSERT INTO conversations (id, owner, title, created_at, updated_at, named) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (ident, owner, clean, stamp, stamp, int(bool(clean))),
        )
        return self.get(owner, ident)

    def of(self, owner: str, *, limit: int = 200) -> list[Conversation]:
        """The owner's conversations: the pinned ones, then the most recently used first."""
        rows = self._db.query(LISTED + f"WHERE c.owner = ? {ORDER} LIMIT ?", (owner, limit))
        return [conversation_of(r) for r in rows]

    def get(self, owner: str, ident: str) -> Conversation:
        rows = self._db.query(LISTED + "WHERE c.id = ? AND c.owner = ?", (ident, owner))
        if not rows:
            raise NotFoundError(f"conversation {ident!r} not found")
        return conversation_of(rows[0])

    def turns(self, owner: str, ident: str) -> list[StoredTurn]:
        """The turns in order, each with its chosen answer."""
        self.get(owner, ident)
        rows = self._db.query(
            "SELECT * FROM turns WHERE conversation = ? ORDER BY position", (ident,)
        )
        return [turn_of(r) for r in rows]

    def turn(self, owner: str, ident: str, position: int) -> StoredTurn:
        self.get(owner, ident)
        rows = self._db.query(
            "SELECT * FROM turns WHERE conversation = ? AND position = ?", (ident, position)
        )
        if not rows:
            raise NotFoundError(f"conversation {ident!r} has no turn {position}")
        return turn_of(rows[0])

    def add_turn(self, owner: str, ident: str, turn: NewTurn) -> StoredTurn:
        """Record ``turn`` at the end of the conversation; its first question names an
        untitled conversation."""
        found = self.get(owner, ident)
        if found.turns >= self.max_turns:
            raise ConversationError(
                f"conversation {ident!r} has {found.turns} turns, the most kept "
                "(SHIRABE_SERVER__MAX_CONVERSATION_TURNS): start a new one"
            )
        title = found.title or self._titles(turn.question)
        stamp = now()
        self._db.changes(
            [
                (
                    f"INSERT INTO turns (conversation, position, question, {columns()}) VALUES "
                    "(?, (SELECT COALESCE(MAX(position), 0) + 1 FROM turns WHERE conversation = ?),"
                    " ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (ident, ident, turn.question, *answer_values(turn, stamp)),
                ),
                (
                    "UPDATE conversations SET updated_at = ?, title = ? WHERE id = ? AND owner = ?",
                    (stamp, title, ident, owner),
                ),
            ]
        )
        return self.turns(owner, ident)[-1]

    def add_version(self, owner: str, ident: str, position: int, turn: NewTurn) -> StoredTurn:
        """Keep ``turn``'s answer as the next version of turn ``position`` (asked again with
        the same question), and choose it."""
        stored = self.turn(owner, ident, position)
        if stored.question != turn.question:
            raise ConversationError(
                f"turn {position} of conversation {ident!r} is not this question"
            )
        if stored.versions >= self.max_versions:
            raise ConversationError(
                f"turn {position} of conversation {ident!r} has {stored.versions} answers, the "
                "most kept (SHIRABE_SERVER__MAX_ANSWER_VERSIONS)"
            )
        stamp, number, where = now(), stored.versions + 1, (ident, position)
        self._db.changes(
            [
                (  # the first answer becomes version 1 when the turn gets a second
                    f"INSERT INTO turn_versions (conversation, position, version, {columns()}) "
                    f"SELECT conversation, position, 1, {columns()} FROM turns "
                    "WHERE conversation = ? AND position = ? AND versions = 1",
                    where,
                ),
                (
                    f"INSERT INTO turn_versions (conversation, position, version, {columns()}) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (*where, number, *answer_values(turn, stamp)),
                ),
                (
                    f"UPDATE turns SET {settings()}, version = ?, versions = ? "
                    "WHERE conversation = ? AND position = ? AND versions = ?",
                    (*answer_values(turn, stamp), number, number, *where, stored.versions),
                ),
                ("UPDATE conversations SET updated_at = ? WHERE id = ?", (stamp, ident)),
            ]
        )
        return self.turn(owner, ident, position)

    def choose_version(self, owner: str, ident: str, position: int, version: int) -> StoredTurn:
        """Make answer ``version`` the one turn ``position`` shows and its follow-ups read."""
        stored = self.turn(owner, ident, position)
        if version == stored.version:
            return stored
        rows = self._db.query(
            f"SELECT {columns()} FROM turn_versions "
            "WHERE conversation = ? AND position = ? AND version = ?",
            (ident, position, version),
        )
        if not rows:
            raise NotFoundError(
                f"turn {position} of conversation {ident!r} has no answer {version}"
            )
        values = tuple(rows[0][c] for c in ANSWER_COLUMNS)
        self._db.change(
            f"UPDATE turns SET {settings()}, version = ? WHERE conversation = ? AND position = ?",
            (*values, version, ident, position),
        )
        return self.turn(owner, ident, position)

    def replace_turn(self, owner: str, ident: str, position: int, turn: NewTurn) -> StoredTurn:
        """Turn ``position`` asked with an edited question: its question and answer replaced,
        its earlier answers and feedback dropped, and every turn after it removed, in one
        transaction. An edited first question names the conversation again unless its owner
        named it."""
        found = self.get(owner, ident)
        self.turn(owner, ident, position)
        renamed = position == 1 and not found.named
        title = self._titles(turn.question) if renamed else found.title
        stamp, where = now(), (ident, position)
        self._db.changes(
            [
                ("DELETE FROM feedback WHERE conversation = ? AND position >= ?", where),
                ("DELETE FROM turn_versions WHERE conversation = ? AND position >= ?", where),
                ("DELETE FROM turns WHERE conversation = ? AND position > ?", where),
                (
                    f"UPDATE turns SET question = ?, {settings()}, version = 1, versions = 1 "
                    "WHERE conversation = ? AND position = ?",
                    (turn.question, *answer_values(turn, stamp), *where),
                ),
                (
                    "UPDATE conversations SET updated_at = ?, title = ? WHERE id = ? AND owner = ?",
                    (stamp, title, ident, owner),
                ),
            ]
        )
        return self.turn(owner, ident, position)

    def rename(self, owner: str, ident: str, title: str) -> Conversation:
        """Give the conversation a title of the owner's, kept from now on."""
        clean = title_of(title)
        if not clean:
            raise ConversationError("title must not be empty")
        self.get(owner, ident)
        self._db.change(
            "UPDATE conversations SET title = ?, named = 1 WHERE id = ? AND owner = ?",
            (clean, ident, owner),
        )
        return self.get(owner, ident)

    def pin(self, owner: str, ident: str, pinned: bool = True) -> Conversation:
        """Keep the conversation at the top of the owner's list (or no longer)."""
        self.get(owner, ident)
        self._db.change(
            "UPDATE conversations SET pinned = ? WHERE id = ? AND owner = ?",
            (int(pinned), ident, owner),
        )
        return self.get(owner, ident)

    def delete(self, owner: str, ident: str) -> None:
        """The conversation, its turns, their answers and the feedback given on them."""
        self.get(owner, ident)
        self._db.changes(
            [
                ("DELETE FROM feedback WHERE conversation = ?", (ident,)),
                ("DELETE FROM turn_versions WHERE conversation = ?", (ident,)),
                ("DELETE FROM turns WHERE conversation = ?", (ident,)),
                ("DELETE FROM conversations WHERE id = ? AND owner = ?", (ident, owner)),
            ]
        )

    def search(
        self,
        owner: str,
        text: str,
        *,
        may_read: Callable[[Sequence[str]], bool],
        limit: int = 50,
    ) -> list[FoundConversation]:
        """The owner's conversations with every word of ``text`` in their title, questions
        or chosen answers (only answers ``may_read`` allows, given the documents they cite),
        in the order of :meth:`of`, at most ``limit``. The owner's turns are read and
        compared here, so that widths and case fold alike on every database (one person's
        chats are a few thousand turns at most)."""
        words = search_words(text)
        if not words:
            return []
        rows = self._db.query(
            "SELECT t.conversation, t.question, t.answer, t.sources FROM turns t "
            "JOIN conversations c ON c.id = t.conversation WHERE c.owner = ? "
            "ORDER BY t.conversation, t.position",
            (owner,),
        )
        turns: dict[str, list[Searched]] = defaultdict(list)
        for row in rows:
            readable = partial(may_read, sources_of(row["sources"]))
            turns[row["conversation"]].append(Searched(row["question"], row["answer"], readable))
        listed = self._db.query(LISTED + f"WHERE c.owner = ? {ORDER}", (owner,))
        found: list[FoundConversation] = []
        for row in listed:
            conversation = conversation_of(row)
            shown = matched(conversation.title, turns[conversation.id], words)
            if shown is not None:
                found.append(FoundConversation(conversation, shown))
                if len(found) >= limit:
                    break
        return found

    def export(
        self,
        owner: str,
        ident: str,
        *,
        withheld: Callable[[StoredTurn], str],
        limit_bytes: int,
    ) -> tuple[str, str]:
        """A file name and the Markdown of the conversation: each turn's chosen answer with
        its sources, or what ``withheld`` says instead of an answer the owner may no longer
        read (an empty string: the answer is shown)."""
        conversation = self.get(owner, ident)
        turns = ((t, withheld(t)) for t in self.turns(owner, ident))
        text = markdown.conversation_markdown(
            conversation, turns, exported_at=now()[:19] + "Z", limit_bytes=limit_bytes
        )
        return markdown.file_name(conversation.title, f"shirabe-{ident}"), text


def sources_of(raw: str) -> tuple[str, ...]:
    """The document keys of a stored ``sources`` column."""
    keys = json.loads(raw)
    return tuple(str(k) for k in keys) if isinstance(keys, list) else ()
