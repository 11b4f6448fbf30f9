"""The accounts tables of a PostgreSQL store (created by its numbered migrations)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from shirabe.access.accounts import DuplicateError, Row
from shirabe.stores.postgres.schema import migrate


class PostgresDatabase:
    """The accounts tables of a PostgreSQL store, shared by every server using it."""

    def __init__(self, url: str) -> None:
        from psycopg.rows import dict_row
        from psycopg_pool import ConnectionPool

        migrate(url)

        def configure(conn: Any) -> None:
            conn.row_factory = dict_row
            conn.autocommit = True

        self._pool = ConnectionPool(url, min_size=1, max_size=4, configure=configure, open=True)

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        with self._pool.connection() as conn:
            return list(conn.execute(sql.replace("?", "%s"), tuple(params)).fetchall())

    def change(self, sql: str, params: Sequence[Any] = ()) -> int:
        import psycopg

        try:
            with self._pool.connection() as conn:
                return int(conn.execute(sql.replace("?", "%s"), tuple(params)).rowcount)
        except psycopg.errors.UniqueViolation as exc:
            raise DuplicateError(str(exc)) from exc

    def changes(self, steps: Sequence[tuple[str, Sequence[Any]]]) -> list[int]:
        import psycopg

        try:
            with self._pool.connection() as conn, conn.transaction():
                return [
                    int(conn.execute(sql.replace("?", "%s"), tuple(params)).rowcount)
                    for sql, params in steps
                ]
        except psycopg.errors.UniqueViolation as exc:
            raise DuplicateError(str(exc)) from exc

    def close(self) -> None:
        self._pool.close()
