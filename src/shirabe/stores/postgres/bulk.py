"""Bulk loads into an empty index: the search indexes are dropped before the load and built
once after it, which PostgreSQL does far faster than keeping them up to date row by row (an
HNSW graph built in memory, B-trees from sorted input).

If the process stops during the load, the next :meth:`PostgresStore.bind` builds whatever
index is missing, so an interrupted load costs time, never correctness.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from shirabe.stores.postgres import dense

log = logging.getLogger(__name__)

POSTINGS_BY_IMPACT = """
    CREATE INDEX IF NOT EXISTS postings_by_impact ON postings
        (term, ((tf::real / (tf + 1.2 * (0.25 + 0.75 * length / 200.0))::real)) DESC)
        INCLUDE (chunk_id, tf, length, source_id)
"""
"""Each term's postings by their BM25 term-frequency part, best first (migration 5; the
expression is :func:`shirabe.stores.postgres.lexical.impact_sql`'s)."""


def deferred_indexes(dim: int) -> dict[str, str]:
    """The indexes a bulk load builds at its end, by name: those that only searches and
    deletions read (the primary keys stay, writes need them)."""
    return {
        "chunks_by_source": "CREATE INDEX IF NOT EXISTS chunks_by_source ON chunks (source_id)",
        "chunk_vectors_by_source": "CREATE INDEX IF NOT EXISTS chunk_vectors_by_source "
        "ON chunk_vectors (source_id)",
        "postings_by_chunk": "CREATE INDEX IF NOT EXISTS postings_by_chunk ON postings (chunk_id)",
        "sentence_postings_by_chunk": "CREATE INDEX IF NOT EXISTS sentence_postings_by_chunk "
        "ON sentence_postings (chunk_id)",
        "postings_by_impact": POSTINGS_BY_IMPACT,
        "chunk_vectors_hnsw": dense.hnsw_index_sql(dim),
    }


def is_empty(conn: Any) -> bool:
    return not conn.execute("SELECT EXISTS (SELECT 1 FROM chunks) AS x").fetchone()["x"]


def drop_indexes(conn: Any, dim: int) -> None:
    for name in deferred_indexes(dim):
        conn.execute(f"DROP INDEX IF EXISTS {name}")


def missing_indexes(conn: Any, dim: int) -> list[str]:
    names = list(deferred_indexes(dim))
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
    statements = deferred_indexes(dim)
    for name in missing:
        started = time.perf_counter()
        conn.execute(statements[name])
        log.info("built index %s in %.1f s", name, time.perf_counter() - started)
    conn.execute("RESET maintenance_work_mem")
