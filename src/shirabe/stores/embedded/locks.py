"""The file locks of an embedded index: one taken while its schema is created or migrated, one
held by an ingest for its whole run. They are ``flock`` locks on files in the index folder, so
the system releases them when a process ends, however it ends. And the switch of a SQLite
database to WAL, which two processes opening a new database at once may have to retry."""

from __future__ import annotations

import fcntl
import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from shirabe.stores.common import take_turn

SCHEMA_LOCK = "schema.lock"
UPDATE_LOCK = "ingest.lock"


@contextmanager
def _open(path: Path) -> Iterator[int]:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        yield fd
    finally:
        os.close(fd)  # and with it the lock


@contextmanager
def schema_lock(home: Path) -> Iterator[None]:
    """Held while a process sets up the database: creating it, switching it to WAL and
    migrating it are quick, so others simply wait."""
    with _open(home / SCHEMA_LOCK) as fd:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield


@contextmanager
def update_lock(home: Path, *, timeout: float) -> Iterator[None]:
    """The writer lock of the index in ``home``, waited for up to ``timeout`` seconds
    (see :func:`~shirabe.stores.common.take_turn`)."""
    with _open(home / UPDATE_LOCK) as fd:

        def try_lock() -> bool:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False
            return True

        take_turn(try_lock, str(home), timeout)
        yield


class _Executes(Protocol):
    def execute(self, sql: str, /) -> Any: ...


def wal(conn: _Executes, seconds: float = 30.0, pause: float = 0.05) -> None:
    """Put the database ``conn`` opened in WAL mode. Two processes opening a new database
    at once may each hold a shared lock and want the other's released; SQLite then answers
    "database is locked" at once, without waiting for the connection's timeout, so the
    switch is tried again until ``seconds`` have passed."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(pause)
