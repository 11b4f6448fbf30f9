"""An accounts file or database made before chats could be pinned or keep answer versions
gains them in place, with its chats, turns and feedback intact."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from shirabe.conversations import Conversations
from shirabe.stores.embedded.accounts import SQLiteDatabase
from shirabe.stores.postgres import schema
from shirabe.stores.postgres.accounts import PostgresDatabase

from tests.conversations.helpers import HANA, turn

OLD_CHATS = """
CREATE TABLE conversations (id TEXT PRIMARY KEY, owner TEXT NOT NULL,
    title TEXT NOT NULL DEFAULT '', created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
CREATE TABLE turns (
    conversation TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    position INTEGER NOT NULL, question TEXT NOT NULL, standalone TEXT, answer TEXT NOT NULL,
    refused INTEGER NOT NULL, refusal_reason TEXT, citations TEXT NOT NULL,
    sources TEXT NOT NULL, categories TEXT NOT NULL, at TEXT NOT NULL,
    PRIMARY KEY (conversation, position));
CREATE TABLE feedback (id INTEGER PRIMARY KEY AUTOINCREMENT, owner TEXT NOT NULL,
    conversation TEXT NOT NULL, position INTEGER NOT NULL, rating TEXT NOT NULL,
    comment TEXT NOT NULL DEFAULT '', at TEXT NOT NULL,
    FOREIGN KEY (conversation, position) REFERENCES turns(conversation, position)
        ON DELETE CASCADE);
"""
"""The conversation tables as they were first made."""

CHATS = [
    ("c-old", "有給休暇の申請方法は？", "2024-01-02"),
    ("c-older", "AQ-300の重さは？", "2024-01-01"),
]


def write_old_chats(change: Callable[[str, Sequence[Any]], object]) -> None:
    """Two chats of Hana's, with a turn each and feedback on the first, as the old code kept
    them (no pinned, named or version columns)."""
    for ident, question, at in CHATS:
        change(
            "INSERT INTO conversations (id, owner, title, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (ident, HANA, question, at, at),
        )
        change(
            "INSERT INTO turns (conversation, position, question, standalone, answer, refused, "
            "refusal_reason, citations, sources, categories, at) "
            "VALUES (?, 1, ?, NULL, ?, 0, NULL, '[]', '[\"人事/就業規則.md\"]', '[]', ?)",
            (ident, question, question + "の回答", at),
        )
    change(
        "INSERT INTO feedback (owner, conversation, position, rating, comment, at) "
        "VALUES (?, 'c-old', 1, 'down', '違う', '2024-01-03')",
        (HANA,),
    )


def check_intact_and_upgraded(chats: Conversations) -> None:
    listed = chats.of(HANA)
    assert [(c.id, c.title, c.turns, c.pinned) for c in listed] == [
        ("c-old", "有給休暇の申請方法は？", 1, False),
        ("c-older", "AQ-300の重さは？", 1, False),
    ]
    first = chats.turns(HANA, "c-old")[0]
    assert (first.answer, first.sources, first.version, first.versions) == (
        "有給休暇の申請方法は？の回答",
        ("人事/就業規則.md",),
        1,
        1,
    )
    given = chats.feedback(owner=HANA)
    assert [(f.rating, f.comment, f.version, f.turn.answer) for f in given] == [
        ("down", "違う", 1, "有給休暇の申請方法は？の回答")
    ]
    # what the new columns and table give works on the old chats
    chats.pin(HANA, "c-older")
    again = chats.add_version(HANA, "c-old", 1, turn("有給休暇の申請方法は？", "二つ目の回答"))
    assert (again.version, again.versions) == (2, 2)
    assert chats.choose_version(HANA, "c-old", 1, 1).answer == "有給休暇の申請方法は？の回答"
    assert [c.id for c in chats.of(HANA)] == ["c-older", "c-old"]


def test_an_older_accounts_file_gains_pins_and_versions_with_its_chats(tmp_path: Path) -> None:
    path = tmp_path / "accounts.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.executescript(OLD_CHATS)
    conn.close()
    raw = sqlite3.connect(path)

    def change(sql: str, params: Sequence[Any]) -> object:  # plain SQL, as the old code wrote
        with raw:
            return raw.execute(sql, tuple(params)).rowcount

    write_old_chats(change)
    raw.close()
    database = SQLiteDatabase(path)
    check_intact_and_upgraded(Conversations(database))
    database.close()
    again = SQLiteDatabase(path)  # opened again: nothing more to add, nothing lost
    assert [c.pinned for c in Conversations(again).of(HANA)] == [True, False]
    again.close()


@pytest.mark.postgres
def test_an_older_accounts_database_gains_pins_and_versions_with_its_chats(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    number = next(n for n, s in enumerate(schema.MIGRATIONS, 1) if "turn_versions" in s)
    monkeypatch.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[: number - 1])
    old = PostgresDatabase(database_url)  # as made before chats had pins and versions
    write_old_chats(old.change)
    old.close()
    monkeypatch.undo()
    assert schema.schema_version(database_url) == number - 1
    database = PostgresDatabase(database_url)
    assert schema.schema_version(database_url) == len(schema.MIGRATIONS)
    check_intact_and_upgraded(Conversations(database))
    database.close()
