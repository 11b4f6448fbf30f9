"""The SQLite schema of an embedded index: numbered migrations, kept in ``PRAGMA
user_version`` and applied once each, in order."""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from shirabe.stores.embedded.upgrades import fewer_bytes

log = logging.getLogger(__name__)

# Numbered schema migrations; the n-th entry takes an index from version n-1 to n: SQL, or a
# function of the connection for what SQL alone cannot do (upgrades.py).
MIGRATIONS: tuple[str | Callable[[sqlite3.Connection], None], ...] = (
    """
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE sources (
        id INTEGER PRIMARY KEY,
        path TEXT NOT NULL UNIQUE,
        sha256 TEXT NOT NULL,
        size INTEGER NOT NULL,
        mtime REAL NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
        error TEXT,
        metadata TEXT NOT NULL DEFAULT '{}',
        ingested_at TEXT NOT NULL
    );
    CREATE TABLE chunks (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        source_id INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        text TEXT NOT NULL,
        heading_path TEXT NOT NULL,
        start_offset INTEGER NOT NULL,
        end_offset INTEGER NOT NULL,
        locator TEXT NOT NULL DEFAULT '{}',
        is_summary INTEGER NOT NULL DEFAULT 0,
        metadata TEXT NOT NULL DEFAULT '{}',
        tokens TEXT NOT NULL,
        vector_keys TEXT NOT NULL
    );
    CREATE INDEX chunks_by_source ON chunks(source_id);
    CREATE TABLE embeddings (
        model TEXT NOT NULL,
        key TEXT NOT NULL,
        vector BLOB NOT NULL,
        PRIMARY KEY (model, key)
    ) WITHOUT ROWID;
    CREATE TABLE ingests (
        id INTEGER PRIMARY KEY,
        finished_at TEXT NOT NULL,
        seconds REAL NOT NULL,
        added INTEGER NOT NULL,
        updated INTEGER NOT NULL,
        removed INTEGER NOT NULL,
        unchanged INTEGER NOT NULL,
        failed INTEGER NOT NULL
    );
    INSERT INTO meta (key, value) VALUES ('generation', '0');
    """,
    """
    ALTER TABLE chunks ADD COLUMN sentence_tokens TEXT NOT NULL DEFAULT '[]';
    DELETE FROM meta WHERE key = 'tokenizer';
    """,
    """
    ALTER TABLE sources ADD COLUMN warnings TEXT NOT NULL DEFAULT '[]';
    """,
    # The embedding cache as a rowid table: a vector (1,536 bytes) is more than a WITHOUT ROWID
    # row keeps in its page (about 1,000 bytes of 4,096), so each spilled to a page of its own,
    # 4.7 kB a vector; kept in the row, 2.2 kB.
    """
    CREATE TABLE embeddings_kept (
        id INTEGER PRIMARY KEY,
        model TEXT NOT NULL,
        key TEXT NOT NULL,
        vector BLOB NOT NULL,
        UNIQUE (model, key)
    );
    INSERT INTO embeddings_kept (model, key, vector) SELECT model, key, vector FROM embeddings;
    DROP TABLE embeddings;
    ALTER TABLE embeddings_kept RENAME TO embeddings;
    """,
    fewer_bytes,
)

FREEING = frozenset({5})
"""Migrations after which most of the file is free pages: ``VACUUM`` gives them back to the
disk once they are applied."""

DATABASE = "index.sqlite3"
"""The database's file name in the index folder."""


def meta_value(conn: sqlite3.Connection, key: str) -> str | None:
    """A value of the index's ``meta`` table (None: not set)."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def read_generation(conn: sqlite3.Connection) -> int:
    """The index's generation: every write to sources or chunks bumps it."""
    return int(meta_value(conn, "generation") or 0)


def migrate(conn: sqlite3.Connection) -> None:
    """Apply the migrations the database on ``conn`` (in autocommit mode) has not had yet.

    Each migration reads the version inside its own write transaction, so a process that
    waited for another one migrating the same database finds the work done."""
    applied: list[int] = []
    while True:
        conn.execute("BEGIN IMMEDIATE")
        try:
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
            if version >= len(MIGRATIONS):
                conn.execute("COMMIT")
                break
            started = time.perf_counter()
            step = MIGRATIONS[version]
            if callable(step):
                step(conn)
            else:
                for statement in step.split(";"):
                    if statement.strip():
                        conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {version + 1}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        applied.append(version + 1)
        log.info(
            "applied schema migration %d in %.1f s", version + 1, time.perf_counter() - started
        )
    if FREEING.intersection(applied) and _had_rows(conn):
        _vacuum(conn)


def _had_rows(conn: sqlite3.Connection) -> bool:
    """Whether the index had anything a migration could free (a new one has not)."""
    return bool(conn.execute("SELECT EXISTS (SELECT 1 FROM embeddings)").fetchone()[0])


def _vacuum(conn: sqlite3.Connection) -> None:
    """Give the pages a migration freed back to the disk; a failure (no room for the copy
    VACUUM writes) leaves them to later writes."""
    started = time.perf_counter()
    try:
        conn.execute("VACUUM")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the copy went through the WAL
    except sqlite3.Error as exc:
        log.warning("VACUUM after the schema migration failed (%s); the file keeps its size", exc)
        return
    log.info("VACUUM after the schema migration took %.1f s", time.perf_counter() - started)


def schema_version(home: Path) -> int:
    """The schema version of the index in ``home`` (0 when there is none yet)."""
    path = home / DATABASE
    if not path.exists():
        return 0
    with contextlib.closing(sqlite3.connect(path)) as conn:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])
