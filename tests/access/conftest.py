"""The accounts database of both stores, for the tests of what is kept in it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from shirabe.access.accounts import Accounts
from shirabe.stores.embedded.accounts import SQLiteDatabase
from shirabe.stores.postgres.accounts import PostgresDatabase


@pytest.fixture(params=["embedded", pytest.param("postgres", marks=pytest.mark.postgres)])
def accounts(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Accounts]:
    """Accounts in a new SQLite file, or in the test PostgreSQL database."""
    if request.param == "embedded":
        made = Accounts(SQLiteDatabase(tmp_path / "accounts.sqlite3"))
    else:
        made = Accounts(PostgresDatabase(request.getfixturevalue("database_url")))
    yield made
    made.close()
