"""What the PostgreSQL store's connections share: each notes the statement it last ran, a
server process that ends under one becomes a clear error in one place, and the writer lock of
an ingest is held on a connection of its own. psycopg is imported on first use (it is an
optional dependency)."""

from __future__ import annotations

import functools
import re
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from shirabe.errors import ServerEndedError
from shirabe.stores.common import take_turn

_ENDED = frozenset({"57P01", "57P02"})
"""admin_shutdown (terminated, or the server stopped) and crash_shutdown (another server
process crashed, so the server restarts them all)."""
_CLOSED = "server closed the connection unexpectedly"
"""What libpq says when the process serving the connection died without a word (a crash)."""

_statements: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
"""The statement each connection ran last, as given (described only when it failed)."""


def _note(conn: Any, query: Any) -> None:
    _statements[conn] = query


def _described(query: Any) -> str:
    if isinstance(query, bytes):
        text = query.decode("utf-8", "replace")
    elif isinstance(query, str):
        text = query
    else:
        text = query.as_string() if hasattr(query, "as_string") else str(query)
    text = re.sub(r"\s+", " ", text).strip()
    return f"`{text}`" if len(text) <= 80 else f"`{text[:79]}…`"


@functools.cache
def traced_cursor() -> type[Any]:
    """A cursor class that notes on its connection the statement it runs, for error
    messages."""
    import psycopg

    class TracedCursor(psycopg.Cursor[Any]):
        def execute(self, query: Any, *args: Any, **kwargs: Any) -> Any:
            _note(self.connection, query)
            return super().execute(query, *args, **kwargs)

        def executemany(self, query: Any, *args: Any, **kwargs: Any) -> None:
            _note(self.connection, query)
            super().executemany(query, *args, **kwargs)

        @contextmanager
        def copy(self, statement: Any, *args: Any, **kwargs: Any) -> Iterator[psycopg.Copy]:
            _note(self.connection, statement)
            with super().copy(statement, *args, **kwargs) as copy:
                yield copy

    return TracedCursor


def configure_connection(conn: Any) -> None:
    """A connection as the store uses it: vectors, rows as dicts, statements noted."""
    from pgvector.psycopg import register_vector
    from psycopg.rows import dict_row

    register_vector(conn)
    conn.row_factory = dict_row
    conn.cursor_factory = traced_cursor()


@dataclass(slots=True)
class WriteClock:
    """When a claim's writes took the writer lock, and how long they waited for it."""

    locked_at: float | None = None
    """``perf_counter`` when the lock was first held (held then until the claim ends)."""
    waited: float = 0.0

    def locked(self, asked: float, held: float) -> None:
        if self.locked_at is None:
            self.locked_at, self.waited = held, held - asked


def server_ended(exc: BaseException, conn: Any) -> bool:
    """Whether ``exc`` says that the server process serving ``conn`` is gone."""
    import psycopg

    if not isinstance(exc, psycopg.OperationalError) or not conn.broken:
        return False
    return exc.sqlstate in _ENDED or _CLOSED in str(exc)


@contextmanager
def guarded(conn: Any) -> Iterator[None]:
    """The store's boundary with the database: the end of the server process serving
    ``conn`` (a crash, such as pgvector using CPU instructions this machine lacks, or a
    terminated backend) raises ServerEndedError naming the statement it ran."""
    try:
        yield
    except Exception as exc:
        if not server_ended(exc, conn):
            raise
        statement = _statements.get(conn)
        raise ServerEndedError(
            "a database call" if statement is None else _described(statement)
        ) from exc


@contextmanager
def advisory_lock(url: str, key: int, *, where: str, timeout: float) -> Iterator[None]:
    """A session-level advisory lock held on a connection of its own for the whole block,
    waited for up to ``timeout`` seconds (see :func:`~shirabe.stores.common.take_turn`); the
    server releases it if this process dies."""
    import psycopg

    with psycopg.connect(url, autocommit=True, cursor_factory=traced_cursor()) as conn:

        def try_lock() -> bool:
            with guarded(conn):
                row = conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()
            return bool(row and row[0])

        take_turn(try_lock, where, timeout)
        try:
            yield
        finally:
            if not conn.broken:
                with guarded(conn):
                    conn.execute("SELECT pg_advisory_unlock(%s)", (key,))


def copy_rows(
    conn: Any, table: str, values: Sequence[tuple[Any, ...]], types: Sequence[str] = ()
) -> None:
    """COPY ``values`` into ``table`` (a table name with its column list); with the columns'
    ``types``, in PostgreSQL's binary format (vectors go as their float32 bytes, not text)."""
    binary = " WITH (FORMAT BINARY)" if types else ""
    with conn.cursor().copy(f"COPY {table} FROM STDIN{binary}") as copy:
        if types:
            copy.set_types(list(types))
        for row in values:
            copy.write_row(row)
