"""Steps the conversation tests share."""

from __future__ import annotations

from typing import Any

from shirabe.conversations import Conversations, user_owner
from shirabe.records import NewTurn

HANA = user_owner("hana")
KEN = user_owner("ken")


def turn(question: str, answer: str, **extra: Any) -> NewTurn:
    """A turn citing 人事/就業規則.md, asked under the 人事 category."""
    given: dict[str, Any] = {
        "citations": [{"number": 1, "file": "人事/就業規則.md"}],
        "sources": ["人事/就業規則.md", "人事/就業規則.md"],
        "categories": ["人事"],
    }
    return NewTurn(question=question, answer=answer, refused=False, **(given | extra))


def ask(kept: Conversations, owner: str, ident: str, question: str, answer: str) -> int:
    """Record a turn; its position."""
    return kept.add_turn(owner, ident, turn(question, answer)).position
