"""Filters (folders, categories, names, access groups, metadata) as SQL, applied before ranking.

Filters on files resolve to a list of readable file ids first (files are few); the search then
checks one id per row, which the search tables carry beside each chunk id.
"""

from __future__ import annotations

from typing import Any

from shirabe.records import Filters
from shirabe.text.globs import glob_regex


def readable_files(conn: Any, filters: Filters) -> tuple[list[int], int]:
    """The ids of the files ``filters`` allow, and how many chunks they hold together."""
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
        clauses.append("coalesce(s.metadata ->> 'groups', '[]')::jsonb ?| %s")
        params.append(sorted(filters.groups))
    row = conn.execute(
        "SELECT coalesce(array_agg(s.id), '{}') AS ids, coalesce(sum(s.chunk_count), 0) AS n "
        "FROM sources s WHERE " + " AND ".join(clauses),
        params,
    ).fetchone()
    return list(row["ids"]), int(row["n"])


def filter_sql(
    conn: Any,
    filters: Filters | None,
    alias: str,
    *,
    readable: tuple[list[int], int] | None = None,
) -> tuple[str, list[Any], int | None]:
    """A condition on table ``alias`` (with ``chunk_id`` and ``source_id`` columns) keeping the
    chunks ``filters`` allow, its parameters, and how many chunks that leaves at most (None: no
    filter); ``readable`` is what :func:`readable_files` gave for them, if it was asked."""
    if not filters:
        return "", [], None
    ids, chunks = readable if readable is not None else readable_files(conn, filters)
    # a hashed set: a long list of files costs one lookup per row, not one per file
    sql = f"{alias}.source_id IN (SELECT unnest(%s::bigint[]))"
    params: list[Any] = [ids]
    for key, value in filters.metadata.items():  # chunk-level values: checked per chunk
        sql += (
            f" AND {alias}.chunk_id IN (SELECT c.id FROM chunks c JOIN sources s "
            "ON s.id = c.source_id WHERE c.metadata ->> %s = %s OR s.metadata ->> %s = %s)"
        )
        params.extend([key, value, key, value])
    return sql, params, chunks
