"""Filters (folders, categories, names, access groups, metadata) as SQL, applied before ranking.

Filters on files resolve to a list of readable file ids first (files are few); the search then
checks one id per row, which the search tables carry beside each chunk id. An access filter
also names the reader sets its groups may read (``parts.py``), so that a search reads only
their partitions and graphs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from shirabe.records import Filters
from shirabe.stores.postgres import parts
from shirabe.text.globs import glob_regex


@dataclass(frozen=True, slots=True)
class Readable:
    """What a filter leaves: the readable files and how many chunks they hold together, and
    the reader sets to read (None: every one) with how many chunks those hold and those of
    them that hold any."""

    files: list[int]
    chunks: int
    sets: list[int] | None = None
    set_chunks: int = 0
    filled: tuple[int, ...] = ()

    def partitions(self, alias: str, column: str = "reader_set") -> tuple[str, list[Any]]:
        """A condition on table ``alias`` (with a reader set's id in ``column``) naming the
        partitions to read (``true`` for all), and its parameters."""
        if self.sets is None:
            return "true", []
        return f"{alias}.{column} = ANY(%s::integer[])", [self.sets]


def readable_files(conn: Any, filters: Filters) -> Readable:
    """The files ``filters`` allow, with how many chunks they hold, and the reader sets an
    access filter may read."""
    clauses: list[str] = ["true"]
    params: list[Any] = []
    if filters.path_glob:
        clauses.append("s.path ~ %s")
        params.append(glob_regex(filters.path_glob))
    if filters.categories:
        clauses.append("s.metadata ->> 'category' = ANY(%s)")
        params.append(sorted(filters.categories))
    if filters.entities:
        clauses.append("coalesce(s.metadata ->> 'entities', '[]')::jsonb ?| %s")
        params.append(sorted(filters.entities))
    if filters.groups is not None:  # documents without groups are nobody's (fail closed)
        clauses.append(f"{parts.GROUPS}::jsonb ?| %s")
        params.append(sorted(filters.groups))
    row = conn.execute(
        "SELECT coalesce(array_agg(s.id), '{}') AS ids, coalesce(sum(s.chunk_count), 0) AS n "
        "FROM sources s WHERE " + " AND ".join(clauses),
        params,
    ).fetchone()
    files, chunks = list(row["ids"]), int(row["n"])
    if filters.groups is None:
        return Readable(files, chunks)
    sets = parts.readable(conn, filters.groups)
    return Readable(files, chunks, sets.ids, sets.chunks, sets.filled)


def filter_sql(
    conn: Any,
    filters: Filters | None,
    alias: str,
    *,
    readable: Readable | None = None,
) -> tuple[str, list[Any], Readable | None]:
    """A condition on table ``alias`` (with ``chunk_id`` and ``source_id`` columns) keeping the
    chunks ``filters`` allow, its parameters, and what the filter leaves (None: no filter);
    ``readable`` is what :func:`readable_files` gave for them, if it was asked."""
    if not filters:
        return "", [], None
    found = readable if readable is not None else readable_files(conn, filters)
    # a hashed set: a long list of files costs one lookup per row, not one per file
    sql = f"{alias}.source_id IN (SELECT unnest(%s::bigint[]))"
    params: list[Any] = [found.files]
    for key, value in filters.metadata.items():  # chunk-level values: checked per chunk
        sql += (
            f" AND {alias}.chunk_id IN (SELECT c.id FROM chunks c JOIN sources s "
            "ON s.id = c.source_id WHERE c.metadata ->> %s = %s OR s.metadata ->> %s = %s)"
        )
        params.extend([key, value, key, value])
    return sql, params, found
