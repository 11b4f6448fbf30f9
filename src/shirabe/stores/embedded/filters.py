"""Filters (folders, categories, names, access groups, metadata) as the chunk ids they allow,
found in SQLite before the segments rank anything."""

from __future__ import annotations

import re
import sqlite3

import numpy as np

from shirabe.records import Filters
from shirabe.stores.embedded.segments import IdArray
from shirabe.text.globs import glob_regex


def regexp(pattern: str, value: str | None) -> bool:
    """SQLite's ``value REGEXP pattern``, which it leaves to the application to define."""
    return value is not None and re.match(pattern, value) is not None


def add_regexp(conn: sqlite3.Connection) -> None:
    """Give ``conn`` the ``REGEXP`` operator (Python's ``re``, as the path globs need)."""
    conn.create_function("regexp", 2, regexp, deterministic=True)


def allowed_ids(conn: sqlite3.Connection, filters: Filters | None) -> IdArray | None:
    """The ids of the chunks ``filters`` allow (None: no filter, every chunk). ``conn`` needs
    :func:`add_regexp`."""
    if not filters:
        return None
    clauses: list[str] = []
    params: list[str] = []
    if filters.path_glob:  # matched once per file, not once per chunk
        clauses.append("s.id IN (SELECT id FROM sources WHERE path REGEXP ?)")
        params.append(glob_regex(filters.path_glob))
    for key, value in filters.metadata.items():
        clauses.append("(json_extract(c.metadata, ?) = ? OR json_extract(s.metadata, ?) = ?)")
        params.extend([f"$.{key}", value, f"$.{key}", value])
    if filters.categories:
        marks = ", ".join("?" * len(filters.categories))
        clauses.append(f"json_extract(s.metadata, '$.category') IN ({marks})")
        params.extend(sorted(filters.categories))
    if filters.entities:
        marks = ", ".join("?" * len(filters.entities))
        clauses.append(
            "EXISTS (SELECT 1 FROM json_each(coalesce(json_extract(s.metadata, "
            f"'$.entities'), '[]')) AS e WHERE e.value IN ({marks}))"
        )
        params.extend(sorted(filters.entities))
    if filters.groups is not None:  # documents without groups are nobody's (fail closed)
        marks = ", ".join("?" * len(filters.groups)) or "NULL"
        clauses.append(
            "EXISTS (SELECT 1 FROM json_each(coalesce(json_extract(s.metadata, "
            f"'$.groups'), '[]')) AS g WHERE g.value IN ({marks}))"
        )
        params.extend(sorted(filters.groups))
    rows = conn.execute(
        "SELECT c.id FROM chunks c JOIN sources s ON s.id = c.source_id WHERE "
        + " AND ".join(clauses),
        params,
    )
    return np.fromiter((r[0] for r in rows), dtype=np.int64)
