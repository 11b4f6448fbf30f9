"""Each test of conversations runs against a real SQLite file and a real PostgreSQL database."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from shirabe.access.accounts import Database
from shirabe.conversations import Conversations
from shirabe.stores.embedded.accounts import SQLiteDatabase
from shirabe.stores.postgres.accounts import PostgresDatabase


@pytest.fixture(params=["embedded", pytest.param("postgres", marks=pytest.mark.postgres)])
def database(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Database]:
    made: Database
    if request.param == "embedded":
        made = SQLiteDatabase(tmp_path / "accounts.sqlite3")
    else:
        made = PostgresDatabase(request.getfixturevalue("database_url"))
    yield made
    made.close()


@pytest.fixture
def kept(database: Database) -> Conversations:
    return Conversations(database, max_turns=3, max_versions=3)
