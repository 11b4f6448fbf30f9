"""Vector search in pgvector: HNSW cosine graphs over chunk vectors (``graphs.py``: one of every
chunk, one per reader set), and exact scans instead when a filter leaves few enough chunks (so a
filtered search ranks among the readable chunks only), when candidates are re-scored, and at
sentence level (which has no index).

An unfiltered search walks the graph of every chunk. A filtered one walks the graphs of the
reader sets it may read when those hold at most :data:`PARTIAL_SHARE` of the chunks, else the
graph of every chunk; either way it reads the graphs' nearest ``k / share`` chunks (and some to
spare) unfiltered and keeps the readable ones, which are then exactly the readable chunks
nearest by the graphs. Only when that leaves fewer than ``k`` does the filter go inside the
index scan (iterative scans), which at 100k chunks costs 75-95 ms a search against 9-13 ms
(bench/postgres.py, 90% of the files readable).

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
"""A scan of several reader sets' graphs walks each one with ``SPREAD / graphs`` of the
candidate list one graph would get (at least :data:`LEAST_EF`): their nearest are merged, and
each holds its share of them. At 100k chunks in 10 sets, a list of 32 a graph found 98.7% of
the exact nearest 100 in 5.6 ms, against 97.7% in 2.8 ms for one graph of them all with 128,
and 99.8% in 19.0 ms for 128 a graph (``bench/postgres.py``)."""
LEAST_EF = 20
"""The shortest candidate list a reader set's graph is walked with."""

PARTIAL_SHARE = 0.5
"""A filtered search walks the graphs of the reader sets it may read when those hold at most
this share of the chunks, else the graph of every chunk. At 1M chunks in ten sets of 100k, the
200 nearest took 8.3 ms at p50 from one set's graph (``ef_search`` 200), 21 ms from the graph
of every chunk, and 59 ms from all ten sets' graphs (50 each): walking sets' graphs pays when
they are few."""

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


def spread(ef_search: int, graphs: int) -> int:
    """The candidate list each of ``graphs`` HNSW graphs is walked with, for a scan that one
    graph would walk with ``ef_search``."""
    if graphs <= 1:
        return ef_search
    return max(math.ceil(ef_search * SPREAD / graphs), LEAST_EF)


@dataclass(frozen=True, slots=True)
class Walk:
    """The HNSW graphs a chunk-level search walks: reader sets' (``sets``) or, with ``sets``
    None, the graph of every chunk; and how many chunks they hold."""

    sets: tuple[int, ...] | None
    chunks: int

    @property
    def graphs(self) -> int:
        return 1 if self.sets is None else len(self.sets)

    def nearest(
        self, q: str, dim: int, limit: int, where: str = "", params: Sequence[Any] = ()
    ) -> tuple[str, list[Any]]:
        """A statement giving the ``limit`` chunks nearest to ``q`` by the graphs (rows of
        ``chunk_id``, ``source_id``, ``embedding`` and the graphs' distance ``near``) among
        those meeting ``where`` (on ``chunk_vectors c``), and its parameters. Several sets'
        walks are merged lazily (each in order, limited: a merge the planner reads from each as
        far as needed); a reader set's id is written into its walk, as a partial index serves
        only a statement naming its set as a constant."""
        near = f"c.embedding::halfvec({int(dim)}) <=> %s::halfvec({int(dim)})"
        one = (
            f"SELECT c.chunk_id, c.source_id, c.embedding, {near} AS near FROM chunk_vectors c "
            f"WHERE {{graph}}{f' AND {where}' if where else ''} ORDER BY near LIMIT %s"
        )
        walk = [q, *params, limit]
        if self.sets is None:
            return one.format(graph="true"), walk
        branches = " UNION ALL ".join(
            f"({one.format(graph=f'c.reader_set = {int(s)}')})" for s in self.sets
        )
        return f"SELECT * FROM ({branches}) x ORDER BY x.near LIMIT %s", [
            *(walk * len(self.sets)),
            limit,
        ]


def walk(conn: Any, readable: Readable | None) -> Walk:
    """The graph of every chunk, or, under a filter whose reader sets hold at most
    :data:`PARTIAL_SHARE` of the chunks, those sets' graphs."""
    if readable is None:  # how many chunks the graphs hold matters only under a filter
        return Walk(None, 0)
    row = conn.execute("SELECT rows FROM level_stats WHERE level = 'chunk'").fetchone()
    total = int(row["rows"]) if row else 0
    if readable.sets is None or readable.set_chunks > PARTIAL_SHARE * total:
        return Walk(None, total)
    # none holding a chunk: reader set 0, which has none either
    return Walk(readable.filled or (0,), readable.set_chunks)


def hnsw_settings(conn: Any, ef_search: int) -> None:
    """Session settings for HNSW scans, sent only when they change on this connection: the
    candidate list size, and iterative scans so that a filter still fills the top k (and a
    reader set's graph whose share of the nearest is larger than its list gives more)."""
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
    # reader sets choose the graphs walked (walk), not a partition
    where, params, readable = filter_sql(conn, filters, "x")
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
    if not exact:  # chunk level, through the graphs
        graphs = walk(conn, readable)
        if readable is not None:
            found = _filtered_after(conn, q, k, (where, params, readable), graphs, dim, hnsw)
            if found is not None:
                return found
        wanted = max(hnsw.ef_search, k * RESCORED)
        hnsw_settings(conn, spread(wanted, graphs.graphs))
        inside, inside_params, _ = filter_sql(conn, filters, "c", readable=readable)
        nearest, walked = graphs.nearest(q, dim, k * RESCORED, inside, inside_params)
        # MATERIALIZED: the graphs' nearest, then scored exactly
        sql = f"WITH near AS MATERIALIZED ({nearest}) " + _RESCORE.format(candidates="near")
        return _scored(conn.execute(sql, [*walked, q, k]).fetchall())
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
    graphs: Walk,
    dim: int,
    hnsw: HnswSearch,
) -> list[ScoredId] | None:
    """The ``k`` readable chunks nearest by the HNSW graphs, read from the nearest
    ``k / share × OVERSAMPLE`` of the chunks the graphs hold; None when those hold fewer than
    ``k`` readable ones (or the share is too small to read enough), so the caller filters
    inside the scan instead."""
    where, params, readable = allowed
    n, chunks = graphs.chunks, readable.chunks
    if n <= 0 or chunks <= 0:
        return None
    fetch = math.ceil(k * n / chunks * OVERSAMPLE) + 10
    if fetch > MAX_FETCH:
        return None
    hnsw_settings(conn, spread(max(hnsw.ef_search, fetch), graphs.graphs))
    nearest, walked = graphs.nearest(q, dim, fetch)
    # MATERIALIZED: the index scan runs alone (the planner would otherwise push the filter in)
    sql = (
        f"WITH x AS MATERIALIZED ({nearest}), "
        f"readable AS (SELECT x.chunk_id, x.embedding FROM x WHERE {where} ORDER BY x.near "
        "LIMIT %s) " + _RESCORE.format(candidates="readable")
    )
    rows = conn.execute(sql, [*walked, *params, k * RESCORED, q, k]).fetchall()
    if len(rows) < k and fetch < n:
        return None
    return _scored(rows)
