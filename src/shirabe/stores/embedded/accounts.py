"""The accounts database of an embedded index: ``<home>/accounts.sqlite3``."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from shirabe.access.accounts import DuplicateError, Row
from shirabe.stores.embedded.locks import wal

SCHEMA = """
CREATE TABLE IF NOT EXISTS users (
    name TEXT PRIMARY KEY,
    groups TEXT NOT NULL,
    admin INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS tokens (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user TEXT NOT NULL REFERENCES users(name) ON DELETE CASCADE,
    hash TEXT NOT NULL UNIQUE,
    label TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    last_used_at TEXT,
    revoked INTEGER NOT NULL DEFAULT 0,
    expires_at TEXT
);
CREATE TABLE IF NOT EXISTS audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    path TEXT NOT NULL,
    detail TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS control (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS identities (
    issuer TEXT NOT NULL,
    subject TEXT NOT NULL,
    user TEXT NOT NULL REFERENCES users(name) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    signed_in_at TEXT NOT NULL,
    PRIMARY KEY (issuer, subject)
);
CREATE TABLE IF NOT EXISTS sessions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    hash TEXT NOT NULL UNIQUE,
    user TEXT NOT NULL REFERENCES users(name) ON DELETE CASCADE,
    via TEXT NOT NULL,
    token INTEGER REFERENCES tokens(id) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    ended_at TEXT
);
CREATE INDEX IF NOT EXISTS sessions_expiry ON sessions (expires_at);
CREATE TABLE IF NOT EXISTS conversations (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    title TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    pinned INTEGER NOT NULL DEFAULT 0,
    named INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS conversations_owner ON conversations (owner, updated_at);
CREATE TABLE IF NOT EXISTS turns (
    conversation TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    question TEXT NOT NULL,
    standalone TEXT,
    answer TEXT NOT NULL,
    refused INTEGER NOT NULL,
    refusal_reason TEXT,
    citations TEXT NOT NULL,
    sources TEXT NOT NULL,
    categories TEXT NOT NULL,
    at TEXT NOT NULL,
    version INTEGER NOT NULL DEFAULT 1,
    versions INTEGER NOT NULL DEFAULT 1,
    PRIMARY KEY (conversation, position)
);
CREATE TABLE IF NOT EXISTS feedback (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    owner TEXT NOT NULL,
    conversation TEXT NOT NULL,
    position INTEGER NOT NULL,
    rating TEXT NOT NULL,
    comment TEXT NOT NULL DEFAULT '',
    at TEXT NOT NULL,
    version INTEGER NOT NULL DEFAULT 1,
    FOREIGN KEY (conversation, position) REFERENCES turns(conversation, position)
        ON DELETE CASCADE
);
CREATE TABLE IF NOT EXISTS turn_versions (
    conversation TEXT NOT NULL,
    position INTEGER NOT NULL,
    version INTEGER NOT NULL,
    standalone TEXT,
    answer TEXT NOT NULL,
    refused INTEGER NOT NULL,
    refusal_reason TEXT,
    citations TEXT NOT NULL,
    sources TEXT NOT NULL,
    categories TEXT NOT NULL,
    at TEXT NOT NULL,
    PRIMARY KEY (conversation, position, version),
    FOREIGN KEY (conversation, position) REFERENCES turns(conversation, position)
        ON DELETE CASCADE
);
"""


ADDED_COLUMNS = (
    ("tokens", "expires_at", "TEXT"),
    # chats: pinned, titled by their owner, answers kept as versions (再生成)
    ("conversations", "pinned", "INTEGER NOT NULL DEFAULT 0"),
    ("conversations", "named", "INTEGER NOT NULL DEFAULT 0"),
    ("turns", "version", "INTEGER NOT NULL DEFAULT 1"),
    ("turns", "versions", "INTEGER NOT NULL DEFAULT 1"),
    ("feedback", "version", "INTEGER NOT NULL DEFAULT 1"),
)
"""Columns added since the tables were first made, in order: an older file gains them when
opened (new tables come from ``SCHEMA``, whose statements make only what is missing)."""


def _upgrade(conn: sqlite3.Connection) -> None:
    """Add the columns an older accounts file lacks (another process may add them first)."""
    for table, column, kind in ADDED_COLUMNS:
        if column not in _columns(conn, table):
            try:
                with conn:
                    conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
            except sqlite3.OperationalError:
                if column not in _columns(conn, table):
                    raise


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {str(row[1]) for row in conn.execute(f"PRAGMA table_info({table})")}


class SQLiteDatabase:
    """``<home>/accounts.sqlite3``: one connection per thread, WAL, safe across processes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=30)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA foreign_keys = ON")
            wal(conn)
            conn.executescript(SCHEMA)
            _upgrade(conn)
            self._local.conn = conn
        return conn

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        return [dict(r) for r in self._conn().execute(sql, tuple(params)).fetchall()]

    def change(self, sql: str, params: Sequence[Any] = ()) -> int:
        conn = self._conn()
        try:
            with conn:
                return int(conn.execute(sql, tuple(params)).rowcount)
        except sqlite3.IntegrityError as exc:
            raise DuplicateError(str(exc)) from exc

    def changes(self, steps: Sequence[tuple[str, Sequence[Any]]]) -> list[int]:
        conn = self._conn()
        try:
            with conn:
                return [int(conn.execute(sql, tuple(params)).rowcount) for sql, params in steps]
        except sqlite3.IntegrityError as exc:
            raise DuplicateError(str(exc)) from exc

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
