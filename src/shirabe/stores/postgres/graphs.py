"""The HNSW graphs over chunk vectors: one over every chunk, and one per reader set.

``chunk_vectors`` is one table (schema migration 14). Its graph of every chunk serves the
searches that may read most of the index (unfiltered, or a filter whose reader sets hold more
than half of its chunks): one walk of one graph. Each reader set (``parts.py``) also has a
graph of its own chunks, a partial index (``WHERE reader_set = 3``), which a search reading few
reader sets walks instead, so it ranks among what its reader may read from the first step.

Partitioning the table by reader set gave each set its graph, but left no graph of the whole:
at 1M chunks in ten sets, an unfiltered vector search walked ten graphs of 100k chunks, 59 ms at
p50 for the 200 nearest against 21 ms for one graph of them all (``bench/postgres.py``). The
partial graphs cost as many bytes again as the graph of the whole (1,168 MB at 1M chunks);
the vectors are stored once.

A partial index serves only a statement whose condition names its reader set as a constant,
so searches write the reader set ids into the statement (integers read from the database),
never as parameters that a prepared statement's generic plan would not match.
"""

from __future__ import annotations

import logging
import time
from typing import Any

log = logging.getLogger(__name__)

HNSW_BUILD = "m = 16, ef_construction = 200"
"""How the HNSW graphs are built. pgvector's default ``ef_construction`` (64) gave recall@10
0.963 against exact search on a random 300 questions at 100k chunks (``ef_search`` 128); 200
gives 0.991 at the same search time, for an index build of 95 s instead of 33 s
(bench/postgres.py)."""

WHOLE = "chunk_vectors_hnsw"
"""The graph of every chunk."""


def name(reader_set: int) -> str:
    """The name of reader set ``reader_set``'s graph."""
    return f"{WHOLE}_{int(reader_set)}"


def index_sql(dim: int, reader_set: int | None = None) -> str:
    """The graph of every chunk (``reader_set`` None) or of one reader set's. HNSW needs a fixed
    dimension, so it indexes the column cast to it (and searches cast alike to use it)."""
    where = "" if reader_set is None else f" WHERE reader_set = {int(reader_set)}"
    return (
        f"CREATE INDEX IF NOT EXISTS {WHOLE if reader_set is None else name(reader_set)} "
        f"ON chunk_vectors USING hnsw ((embedding::halfvec({int(dim)})) halfvec_cosine_ops) "
        f"WITH ({HNSW_BUILD}){where}"
    )


def wanted(conn: Any, dim: int) -> dict[str, str]:
    """Every graph the index keeps, by name, with the statement that builds it: the whole's and
    each reader set's."""
    sets = [int(r["id"]) for r in conn.execute("SELECT id FROM reader_sets ORDER BY id")]
    return {WHOLE: index_sql(dim)} | {name(s): index_sql(dim, s) for s in sets}


def add(conn: Any, reader_set: int) -> None:
    """Reader set ``reader_set``'s graph, made with the set (in the caller's transaction), if
    the index keeps graphs now: during a bulk load, and before the next start after a migration,
    there are none, and they are all built then (``bulk.py``)."""
    row = conn.execute(
        "SELECT (SELECT value FROM shirabe_meta WHERE key = 'embedding_dim') AS dim, "
        "to_regclass(%s) IS NOT NULL AS kept",
        (WHOLE,),
    ).fetchone()
    if row["dim"] is None or not row["kept"]:
        return
    started = time.perf_counter()
    conn.execute(index_sql(int(row["dim"]), reader_set))
    log.info("graph of reader set %d made in %.1f s", reader_set, time.perf_counter() - started)
