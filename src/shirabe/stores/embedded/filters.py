"""Filters (folders, categories, names, access groups, metadata) as the chunk ids they allow,
found in SQLite before the segments rank anything."""

from __future__ import annotations

import re
import sqlite3
import threading
from collections import OrderedDict

import numpy as np
from numpy.typing import NDArray

from shirabe.records import Filters
from shirabe.stores.embedded.schema import read_generation
from shirabe.stores.embedded.segments import IdArray
from shirabe.text.globs import glob_regex


def regexp(pattern: str, value: str | None) -> bool:
    """SQLite's ``value REGEXP pattern``, which it leaves to the application to define."""
    return value is not None and re.match(pattern, value) is not None


def add_regexp(conn: sqlite3.Connection) -> None:
    """Give ``conn`` the ``REGEXP`` operator (Python's ``re``, as the path globs need)."""
    conn.create_function("regexp", 2, regexp, deterministic=True)


def allowed_ids(conn: sqlite3.Connection, filters: Filters) -> IdArray:
    """The ids of the chunks ``filters`` allow. ``conn`` needs :func:`add_regexp`. The
    conditions on files are evaluated once per file, not once per chunk (at 10k chunks, once
    per chunk took 10-13 ms a search and ranker; now under 1 ms)."""
    clauses: list[str] = []
    params: list[str] = []
    if filters.path_glob:
        clauses.append("s.path REGEXP ?")
        params.append(glob_regex(filters.path_glob))
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
    files = "SELECT s.id FROM sources s WHERE " + (" AND ".join(clauses) or "1")
    # one text of ids, parsed by numpy: a row a chunk would cost more than the query
    sql = f"SELECT group_concat(c.id) FROM chunks c WHERE c.source_id IN ({files})"
    for key, value in filters.metadata.items():  # chunk-level values: checked per chunk
        sql += (
            " AND (json_extract(c.metadata, ?) = ? OR json_extract((SELECT s.metadata FROM "
            "sources s WHERE s.id = c.source_id), ?) = ?)"
        )
        params.extend([f"$.{key}", value, f"$.{key}", value])
    ids = conn.execute(sql, params).fetchone()[0]
    return np.sort(np.fromstring(ids, dtype=np.int64, sep=",")) if ids else np.zeros(0, np.int64)


SEARCH_BELOW = 4096
"""Fewer ids than this are looked up in the allowed ones by binary search; more, by
``np.isin``, which costs about a millisecond at 100k chunks however few ids it is given."""


def contains(allowed: IdArray, ids: IdArray) -> NDArray[np.bool_]:
    """Which of ``ids`` are in ``allowed`` (sorted, as :func:`allowed_ids` returns them)."""
    if len(ids) >= SEARCH_BELOW:
        return np.isin(ids, allowed)
    if len(allowed) == 0:
        return np.zeros(len(ids), dtype=np.bool_)
    at = np.searchsorted(allowed, ids)
    at[at == len(allowed)] = 0
    return np.asarray(allowed[at] == ids)


def keep_allowed(mask: NDArray[np.bool_], ids: IdArray, allowed: IdArray) -> None:
    """Clears the entries of ``mask`` whose ids are not in ``allowed`` (sorted), looking up
    only the ids still set."""
    at = np.flatnonzero(mask)
    mask[at] = contains(allowed, ids[at])


def allowed_rows(chunk_ids: IdArray, allowed: IdArray) -> NDArray[np.bool_]:
    """Which of a segment's rows (its ``chunk_ids``, ascending) are in ``allowed`` (sorted): a
    cost that grows with ``allowed``, each looked up in the segment's ids."""
    rows = np.zeros(len(chunk_ids), dtype=np.bool_)
    if len(chunk_ids) == 0 or len(allowed) == 0:
        return rows
    at = np.searchsorted(chunk_ids, allowed)
    inside = at < len(chunk_ids)
    at = at[inside]
    rows[at[chunk_ids[at] == np.asarray(allowed)[inside]]] = True
    return rows


def eligible_rows(
    chunk_ids: IdArray, alive: NDArray[np.bool_], allowed: IdArray | None
) -> NDArray[np.bool_]:
    """Which of a segment's rows (its ``chunk_ids``, ascending) are alive and allowed."""
    eligible = np.array(alive, dtype=np.bool_)
    if allowed is not None:
        eligible &= allowed_rows(np.asarray(chunk_ids), allowed)
    return eligible


KEPT_FILTERS = 8
"""Filters whose allowed ids :class:`AllowedIds` keeps (at 1M chunks, up to 8 MB each)."""

_Key = tuple[object, ...]


def filter_key(filters: Filters) -> _Key:
    """Every condition of ``filters``, in a form that can key a dictionary."""
    groups = None if filters.groups is None else tuple(sorted(filters.groups))
    return (
        filters.path_glob,
        tuple(sorted(filters.metadata.items())),
        tuple(sorted(filters.categories)),
        tuple(sorted(filters.entities)),
        groups,
    )


class AllowedIds:
    """:func:`allowed_ids`, kept per filter for the index's generation.

    A search asks once per ranker, and the searches of one reader (or of readers of the same
    groups) ask with the same filter: at 100k chunks with 90% of them readable, reading the
    ids took about 10 ms each time. The generation is read in the same snapshot as the ids, and
    every write to sources or chunks bumps it, so an entry never outlives the rows it was read
    from (a reader's groups changed by an ingest give a new generation, hence a new entry).
    """

    def __init__(self, size: int = KEPT_FILTERS) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._kept: OrderedDict[tuple[int, _Key], IdArray] = OrderedDict()

    def ids(
        self, conn: sqlite3.Connection, filters: Filters | None, among: IdArray | None = None
    ) -> IdArray | None:
        """The ids of the chunks ``filters`` allow (None: no filter, every chunk), only those
        ``among`` the given ones when there are (candidates to re-score)."""
        if not filters:
            return None
        began = not conn.in_transaction
        if began:
            conn.execute("BEGIN")
        try:
            key = (read_generation(conn), filter_key(filters))
            with self._lock:
                found = self._kept.get(key)
                if found is not None:
                    self._kept.move_to_end(key)
            if found is None:
                found = allowed_ids(conn, filters)
                found.flags.writeable = False
                if began:  # not inside the caller's transaction, which may hold uncommitted rows
                    with self._lock:
                        self._kept[key] = found
                        while len(self._kept) > self._size:
                            self._kept.popitem(last=False)
        finally:
            if began:
                conn.execute("COMMIT")
        return found if among is None else among[contains(found, among)]
