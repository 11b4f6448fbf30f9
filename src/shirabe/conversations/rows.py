"""Rows of the conversation tables as records, and records as rows."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from shirabe.access.accounts import Row
from shirabe.records import Conversation, NewTurn, StoredTurn

ANSWER_COLUMNS = (
    "standalone",
    "answer",
    "refused",
    "refusal_reason",
    "citations",
    "sources",
    "categories",
    "at",
)
"""What each answer of a turn has, in ``turns`` (the chosen one) and ``turn_versions``."""

LISTED = (
    "SELECT c.id, c.title, c.created_at, c.updated_at, c.pinned, c.named, "
    "(SELECT COUNT(*) FROM turns t WHERE t.conversation = c.id) AS turns "
    "FROM conversations c "
)
"""A conversation with its count of turns; ``WHERE`` and ``ORDER BY`` follow."""
ORDER = "ORDER BY c.pinned DESC, c.updated_at DESC, c.id"
"""Pinned conversations first, then the most recently used."""


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")  # orders the list


def conversation_of(row: Row) -> Conversation:
    return Conversation(
        row["id"],
        row["title"],
        row["created_at"],
        row["updated_at"],
        int(row["turns"]),
        pinned=bool(row["pinned"]),
        named=bool(row["named"]),
    )


def turn_of(row: Row) -> StoredTurn:
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
        version=int(row.get("version") or 1),
        versions=int(row.get("versions") or 1),
    )


def answer_values(turn: NewTurn, at: str) -> tuple[Any, ...]:
    """The answer of ``turn`` as the values of :data:`ANSWER_COLUMNS`."""
    return (
        turn.standalone,
        turn.answer,
        int(turn.refused),
        turn.refusal_reason,
        json.dumps(list(turn.citations), ensure_ascii=False),
        json.dumps(list(dict.fromkeys(turn.sources)), ensure_ascii=False),
        json.dumps(list(turn.categories), ensure_ascii=False),
        at,
    )


def stored_values(turn: StoredTurn) -> tuple[Any, ...]:
    """The answer of a stored turn as the values of :data:`ANSWER_COLUMNS`."""
    return (
        turn.standalone,
        turn.answer,
        int(turn.refused),
        turn.refusal_reason,
        json.dumps(turn.citations, ensure_ascii=False),
        json.dumps(list(turn.sources), ensure_ascii=False),
        json.dumps(list(turn.categories), ensure_ascii=False),
        turn.at,
    )


def columns(prefix: str = "") -> str:
    return ", ".join(prefix + c for c in ANSWER_COLUMNS)


def settings(prefix: str = "") -> str:
    """``standalone = ?, answer = ?, …`` for an ``UPDATE``."""
    return ", ".join(f"{prefix}{c} = ?" for c in ANSWER_COLUMNS)


def chosen_or_version(column: str) -> str:
    """The column of the version feedback was given on (``v``), else of the turn (``t``)."""
    return f"CASE WHEN v.version IS NULL THEN t.{column} ELSE v.{column} END AS {column}"
