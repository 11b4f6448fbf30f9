"""Bulk loads into an empty index: the search indexes are dropped before the load and built
once after it, which PostgreSQL does far faster than keeping them up to date row by row (an
HNSW graph built in memory, B-trees from sorted input), and the term statistics and the BM25
posting blocks are made once at the end (``compaction.py``) instead of by every file.

A marker in ``shirabe_meta`` says a load is under way. If the process stops during the load,
the next :meth:`PostgresStore.bind` finds the marker, counts the statistics and builds whatever
index is missing, so an interrupted load costs time, never correctness.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from shirabe.stores.postgres import compaction, forward, graphs, lexical

log = logging.getLogger(__name__)


def deferred_indexes(conn: Any, dim: int) -> dict[str, tuple[str, str]]:
    """The indexes a bulk load builds at its end, by name, with the statements that create and
    drop each: all but the keys that writes check (chunk ids, which the vector and sentence
    rows reference), the HNSW graphs included (the whole's and each reader set's)."""
    plain = {
        "chunks_by_source": "chunks (source_id)",
        "chunk_vectors_by_source": "chunk_vectors (source_id)",
    }
    out = {
        name: (f"CREATE INDEX IF NOT EXISTS {name} ON {on}", f"DROP INDEX IF EXISTS {name}")
        for name, on in plain.items()
    }
    for name, create in graphs.wanted(conn, dim).items():
        out[name] = (create, f"DROP INDEX IF EXISTS {name}")
    return out


MARKER = "bulk_load"


def begin(conn: Any, dim: int) -> bool:
    """Start a bulk load if the index is empty (True), marking it and dropping the deferred
    indexes; else nothing changes (False)."""
    with conn.transaction():
        if conn.execute("SELECT EXISTS (SELECT 1 FROM chunks) AS x").fetchone()["x"]:
            return False
        conn.execute(
            "INSERT INTO shirabe_meta VALUES (%s, 'started') ON CONFLICT DO NOTHING", (MARKER,)
        )
        drop_indexes(conn, dim)
    return True


def under_way(conn: Any) -> bool:
    """Whether a bulk load is under way (its marker is there)."""
    row = conn.execute(
        "SELECT EXISTS (SELECT 1 FROM shirabe_meta WHERE key = %s) AS x", (MARKER,)
    ).fetchone()
    return bool(row["x"])


def finish(conn: Any, dim: int, *, memory: str) -> None:
    """End a bulk load (or repair one that stopped): count the statistics and build the
    posting blocks if the marker is there (or a migration asked for the blocks), then build the
    missing indexes and remove the marker."""
    with conn.transaction():
        marked = conn.execute(
            "SELECT 1 FROM shirabe_meta WHERE key = %s FOR UPDATE", (MARKER,)
        ).fetchone()
        if marked:
            started = time.perf_counter()
            lexical.recount_stats(conn)
            log.info("counted term statistics in %.1f s", time.perf_counter() - started)
        asked = compaction.asked(conn)
        if asked:  # a migration: each chunk's terms by row, then the blocks
            forward.fill(conn)
        if marked or asked:
            compaction.rebuild(conn)
    build_indexes(conn, dim, memory=memory)
    conn.execute("DELETE FROM shirabe_meta WHERE key = %s", (MARKER,))


def drop_indexes(conn: Any, dim: int) -> None:
    for _create, drop in deferred_indexes(conn, dim).values():
        conn.execute(drop)


def missing_indexes(conn: Any, dim: int) -> list[str]:
    names = list(deferred_indexes(conn, dim))
    rows = conn.execute(
        "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() "
        "AND indexname = ANY(%s)",
        (names,),
    ).fetchall()
    present = {r["indexname"] for r in rows}
    return [n for n in names if n not in present]


def build_indexes(conn: Any, dim: int, *, memory: str) -> None:
    """Create the deferred indexes that are missing, with ``memory`` for each build
    (``maintenance_work_mem``: an HNSW graph that fits is built several times faster)."""
    missing = missing_indexes(conn, dim)
    if not missing:
        return
    conn.execute("SELECT set_config('maintenance_work_mem', %s, false)", (memory,))
    statements = deferred_indexes(conn, dim)
    for name in missing:
        started = time.perf_counter()
        conn.execute(statements[name][0])
        log.info("built index %s in %.1f s", name, time.perf_counter() - started)
    conn.execute("RESET maintenance_work_mem")
