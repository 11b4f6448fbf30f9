"""Vector search in pgvector: an HNSW cosine index over chunk vectors, and exact scans instead
when a filter leaves few enough chunks (so a filtered search ranks among the readable chunks
only), when candidates are re-scored, and at sentence level (which has no index).

A filter that leaves many chunks is applied after the index: the index's nearest
``k / share`` chunks (and some to spare) are read unfiltered and the readable ones kept, which
are then exactly the readable chunks nearest by the index. Only when that leaves fewer than
``k`` does the filter go inside the index scan (iterative scans), which at 100k chunks costs
75-95 ms a search against 9-13 ms (bench/postgres.py, 90% of the files readable).

Vectors are kept in half precision (``halfvec``), as the embedding cache keeps them. Every
score returned is that of the stored vector against the query's float32 one (the column cast
to ``vector``), as the embedded store scores; the index, which compares half-precision
vectors, only picks the candidates, and its nearest ``RESCORED × k`` are scored so."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from shirabe.embedders.protocol import Vector
from shirabe.records import Filters, ScoredId
from shirabe.stores.postgres.filters import Readable, filter_sql
from shirabe.stores.protocol import Level

RESCORED = 2
"""How many more of the index's nearest chunks than ``k`` are scored exactly."""

EXACT_DISTANCE = "x.embedding::vector <=> %s::vector"
"""The cosine distance of a stored (half-precision) vector to the float32 query."""

OVERSAMPLE = 1.25
"""How many more of the index's nearest chunks than ``k / share`` a filtered search reads."""

SPREAD = 2.5
"""A scan of several partitions (reader sets, ``parts.py``) walks each one's HNSW graph with
``SPREAD / partitions`` of the candidate list one graph would get (at least
:data:`LEAST_EF`): the partitions' nearest are merged, and each holds its share of them. At
100k chunks in 10 partitions, a list of 32 a graph found 98.7% of the exact nearest 100 in 5.6
ms, against 97.7% in 2.8 ms for one graph of them all with 128, and 99.8% in 19.0 ms for 128
a graph (``bench/postgres.py``)."""
LEAST_EF = 20
"""The shortest candidate list a partition's graph is walked with."""

MAX_FETCH = 1000
"""The most chunks read before filtering (pgvector's largest ``hnsw.ef_search``); a filter
leaving a smaller share goes inside the scan."""


@dataclass(frozen=True, slots=True)
class HnswSearch:
    """How a chunk-level vector search uses the HNSW index: the candidate list it scans
    (``hnsw.ef_search``, at least ``k``), and the number of chunks a filter must leave for
    the index to be used (at most ``exact_below``: every allowed chunk is scored instead)."""

    ef_search: int = 128
    exact_below: int = 20_000


def text_vector(vector: Vector) -> str:
    """pgvector's text form, exact for float32 (COPY and parameters alike)."""
    values = np.asarray(vector, dtype=np.float32).tolist()
    return "[" + ",".join(map(repr, values)) + "]"


HNSW_BUILD = "m = 16, ef_construction = 200"
"""How the HNSW graph is built. pgvector's default ``ef_construction`` (64) gave recall@10
0.963 against exact search on a random 300 questions at 100k chunks (``ef_search`` 128); 200
gives 0.991 at the same search time, for an index build of 95 s instead of 33 s
(bench/postgres.py)."""


def hnsw_index_sql(dim: int) -> str:
    """The HNSW index on chunk vectors; HNSW needs a fixed dimension, so it indexes the column
    cast to it (and searches must cast alike to use it)."""
    return (
        "CREATE INDEX IF NOT EXISTS chunk_vectors_hnsw ON chunk_vectors "
        f"USING hnsw ((embedding::halfvec({int(dim)})) halfvec_cosine_ops) WITH ({HNSW_BUILD})"
    )


def spread(ef_search: int, partitions: int) -> int:
    """The candidate list each of ``partitions`` HNSW graphs is walked with, for a scan that
    one graph would walk with ``ef_search``."""
    if partitions <= 1:
        return ef_search
    return max(math.ceil(ef_search * SPREAD / partitions), LEAST_EF)


def partitions_read(conn: Any, readable: Readable | None) -> int:
    """How many partitions of ``chunk_vectors`` holding chunks a scan under ``readable``
    reads."""
    if readable is not None and readable.sets is not None:
        return readable.filled
    row = conn.execute(
        "SELECT count(*) AS n FROM reader_sets r JOIN reader_level_stats l "
        "ON l.readers = r.readers AND l.level = 'chunk' AND l.rows > 0"
    ).fetchone()
    return int(row["n"])


def hnsw_settings(conn: Any, ef_search: int) -> None:
    """Session settings for HNSW scans, sent only when they change on this connection: the
    candidate list size, and iterative scans so that a filter still fills the top k (and a
    partition whose share of the nearest is larger than its list gives more)."""
    if getattr(conn, "_shirabe_ef_search", None) != ef_search:
        conn.execute(f"SET hnsw.ef_search = {int(ef_search)}")
        conn.execute("SET hnsw.iterative_scan = strict_order")
        conn._shirabe_ef_search = ef_search


def search(
    conn: Any,
    vector: Vector,
    k: int,
    filters: Filters | None,
    *,
    level: Level,
    within: Sequence[int] | None,
    dim: int,
    hnsw: HnswSearch,
) -> list[ScoredId]:
    """The top ``k`` chunks by cosine similarity (at sentence level, of their best sentence)."""
    q = text_vector(vector)
    # chunk vectors are partitioned by reader set (parts.py), sentences are read by chunk id
    where, params, readable = filter_sql(conn, filters, "x", partitioned=level == "chunk")
    allowed = None if readable is None else readable.chunks
    conditions = ["true"] + ([where] if where else [])
    exact = within is not None
    if within is not None:  # a hashed set, as filters are
        conditions.append("x.chunk_id IN (SELECT unnest(%s::bigint[]))")
        params.append(sorted({int(i) for i in within}))
    if not exact and allowed is not None:
        exact = allowed <= hnsw.exact_below
    if level == "sentence" and not exact:
        exact = True  # sentences have no HNSW index (they re-score candidates)
    if not exact:  # chunk level, through the index
        index_distance = f"x.embedding::halfvec({dim}) <=> %s::halfvec({dim})"
        if readable is not None:
            found = _filtered_after(conn, q, k, (where, params, readable), index_distance, hnsw)
            if found is not None:
                return found
        wanted = max(hnsw.ef_search, k * RESCORED)
        hnsw_settings(conn, spread(wanted, partitions_read(conn, readable)))
        # MATERIALIZED: the index's nearest, then scored exactly
        sql = (
            "WITH near AS MATERIALIZED (SELECT x.chunk_id, x.embedding FROM chunk_vectors x "
            f"WHERE {' AND '.join(conditions)} ORDER BY {index_distance} LIMIT %s) "
            + _RESCORE.format(candidates="near")
        )
        return _scored(conn.execute(sql, [*params, q, k * RESCORED, q, k]).fetchall())
    # every allowed row scored: no index, the true top k
    where_sql = " AND ".join(conditions)
    if level == "chunk":
        sql = (
            f"SELECT x.chunk_id, {EXACT_DISTANCE} AS distance FROM chunk_vectors x "
            f"WHERE {where_sql} ORDER BY distance, x.chunk_id LIMIT %s"
        )
    else:
        sql = (
            f"SELECT x.chunk_id, min({EXACT_DISTANCE}) AS distance FROM sentences x "
            f"WHERE {where_sql} GROUP BY x.chunk_id ORDER BY distance, x.chunk_id LIMIT %s"
        )
    return _scored(conn.execute(sql, [q, *params, k]).fetchall())


_RESCORE = (
    f"SELECT x.chunk_id, {EXACT_DISTANCE} AS distance FROM {{candidates}} x "
    "ORDER BY distance, x.chunk_id LIMIT %s"
)
"""The best ``k`` of the candidates (rows of chunk_id and embedding), scored exactly."""


def _scored(rows: Sequence[Any]) -> list[ScoredId]:
    return [ScoredId(int(r["chunk_id"]), 1.0 - float(r["distance"])) for r in rows]


def _filtered_after(
    conn: Any,
    q: str,
    k: int,
    allowed: tuple[str, Sequence[Any], Readable],
    distance: str,
    hnsw: HnswSearch,
) -> list[ScoredId] | None:
    """The ``k`` readable chunks nearest by the HNSW index, read from the nearest
    ``k / share × OVERSAMPLE`` of the partitions the filter reads (every one, or its reader
    sets'); None when those hold fewer than ``k`` readable ones (or the share is too small to
    read enough), so the caller filters inside the scan instead."""
    where, params, readable = allowed
    chunks = readable.chunks
    if readable.sets is None:
        total = conn.execute("SELECT rows FROM level_stats WHERE level = 'chunk'").fetchone()
        n = int(total["rows"]) if total else 0
    else:
        n = readable.set_chunks
    if n <= 0 or chunks <= 0:
        return None
    fetch = math.ceil(k * n / chunks * OVERSAMPLE) + 10
    if fetch > MAX_FETCH:
        return None
    hnsw_settings(conn, spread(max(hnsw.ef_search, fetch), partitions_read(conn, readable)))
    # MATERIALIZED: the index scan runs alone (the planner would otherwise push the filter in)
    within, sets = readable.partitions("x")
    sql = (
        "WITH x AS MATERIALIZED (SELECT x.chunk_id, x.source_id, x.reader_set, x.embedding, "
        f"{distance} AS near FROM chunk_vectors x WHERE {within} ORDER BY near LIMIT %s), "
        f"readable AS (SELECT x.chunk_id, x.embedding FROM x WHERE {where} ORDER BY x.near "
        "LIMIT %s) " + _RESCORE.format(candidates="readable")
    )
    rows = conn.execute(sql, [q, *sets, fetch, *params, k * RESCORED, q, k]).fetchall()
    if len(rows) < k and fetch < n:
        return None
    return _scored(rows)
