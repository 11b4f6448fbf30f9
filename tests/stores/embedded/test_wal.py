"""The switch of a SQLite database to WAL, tried again while another process holds it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from shirabe.stores.embedded.locks import wal


class Locked:
    """A connection whose first ``busy`` statements find the database locked."""

    def __init__(self, busy: int, error: str = "database is locked") -> None:
        self.busy = busy
        self.error = error
        self.statements: list[str] = []

    def execute(self, sql: str, /) -> None:
        self.statements.append(sql)
        if len(self.statements) <= self.busy:
            raise sqlite3.OperationalError(self.error)


def test_the_switch_is_tried_again_while_the_database_is_locked() -> None:
    conn = Locked(busy=3)
    wal(conn, seconds=5.0, pause=0.0)
    assert conn.statements == ["PRAGMA journal_mode=WAL"] * 4


def test_a_lock_that_outlasts_the_wait_is_an_error() -> None:
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        wal(Locked(busy=10**9), seconds=0.05, pause=0.01)


def test_other_errors_are_not_retried() -> None:
    conn = Locked(busy=1, error="disk I/O error")
    with pytest.raises(sqlite3.OperationalError, match="disk I/O"):
        wal(conn, seconds=5.0, pause=0.0)
    assert len(conn.statements) == 1


def test_a_real_database_ends_in_wal_mode(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "a.sqlite3")
    wal(conn)
    assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    conn.close()
