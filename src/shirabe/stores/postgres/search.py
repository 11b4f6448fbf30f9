"""BM25 search in the server store: chunks ranked from their terms' posting blocks, and chunks
given (a pool, or the best candidates of long posting lists) scored from their terms by row.

- Chunk level, short posting lists: every block of the query's terms is read and scored here;
  the best chunks are then checked against the chunks table (a chunk deleted since its block
  was merged is skipped) and the filter.
- Chunk level, long posting lists (more than :data:`EXACT_POSTINGS` together): each term's best
  postings (its first merged blocks in each partition read, as many as the partition's share of
  the term's postings, and its fresh ones) give the candidates, whose exact scores come from
  their terms by row.
- Sentence level, and any search within given chunks: the chunks' sentence rows (or the chunks)
  are scored from their terms by row (``forward.py``).

An access filter reads only the partitions of the reader sets its groups may read
(``parts.py``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from shirabe.records import Filters, ScoredId
from shirabe.stores.bm25 import idf, term_hash
from shirabe.stores.postgres import blocks, forward, readers
from shirabe.stores.postgres.filters import Readable, filter_sql, readable_files
from shirabe.stores.postgres.lexical import index_statistics
from shirabe.stores.protocol import Level

PER_TERM = 1000
"""Postings read per term (at least), best impact first, when a search reads only each term's
best."""
RESCORED = 300
"""Candidates (at least; three times the k asked for) scored with exact BM25 after that."""
EXACT_POSTINGS = 20_000
"""Up to this many postings for the query's terms together, every posting is read (exact)."""
CHECKED = 50
"""Chunks checked against the chunks table and the filter beyond the k asked for, each round."""

Bm25 = tuple[float, float, float]
"""k1 + 1, k1·(1 − b) and k1·b / average length: a posting scores
w·tf·(k1+1) / (tf + k1·(1 − b) + k1·b/avgdl · dl)."""


class _Query:
    """A query's terms with their weights × idf, its BM25 constants and its filter."""

    def __init__(
        self,
        terms: list[str],
        weights: NDArray[np.float64],
        bm25: Bm25,
        filters: Filters | None,
        readable: Readable | None,
        n: int,
    ) -> None:
        self.terms, self.weights, self.bm25, self.filters = terms, weights, bm25, filters
        self.position = {t: i for i, t in enumerate(terms)}
        self.readable = readable
        self.files = None if readable is None else np.asarray(sorted(readable.files), np.int64)
        self.share = 1.0 if readable is None else max(readable.chunks, 1) / n

    def scores(self, term: str, p: blocks.Postings) -> NDArray[np.float64]:
        a, b, c = self.bm25
        w = self.weights[self.position[term]]
        tf = p.tfs.astype(np.float64)
        return np.asarray(w * tf * a / (tf + b + c * p.lengths), dtype=np.float64)

    def readable_postings(self, p: blocks.Postings) -> blocks.Postings:
        return p if self.files is None else p.take(np.isin(p.sources, self.files))

    def condition(self, conn: Any, alias: str) -> tuple[str, list[Any]]:
        where, params, _n = filter_sql(conn, self.filters, alias, readable=self.readable)
        return (f" AND {where}" if where else ""), params

    def partitions(self, alias: str, column: str = "reader_set") -> tuple[str, list[Any]]:
        """The condition naming the partitions to read (``true``: all), with its parameters."""
        if self.readable is None:
            return "true", []
        return self.readable.partitions(alias, column)


def search(
    conn: Any,
    weights: Mapping[str, float],
    k: int,
    filters: Filters | None,
    *,
    level: Level,
    within: Sequence[int] | None,
    k1: float,
    b: float,
) -> list[ScoredId]:
    """The top ``k`` chunks by BM25 for weighted query terms; zero scores are dropped."""
    if filters is not None and filters.groups is not None:  # a reader's, not the index's
        n, total, frequencies = readers.statistics(conn, level, list(weights), filters.groups)
    else:
        n, total, frequencies = index_statistics(conn, level, list(weights))
    if n == 0 or not frequencies:
        return []
    terms = list(frequencies)
    # the query side of BM25, once per term: weight × Lucene's idf
    term_idf = idf(np.asarray([frequencies[t] for t in terms]), n) * np.asarray(
        [weights[t] for t in terms]
    )
    bm25 = (k1 + 1, k1 * (1 - b), k1 * b / max(total / n, 1e-9))
    readable = readable_files(conn, filters) if filters else None
    query = _Query(terms, term_idf, bm25, filters, readable, n)
    m = max(RESCORED, 3 * k)
    if level == "sentence" or within is not None:
        if within is None:  # the chunks holding a query term give the sentences to score
            within = _pool(conn, query, m, exact=sum(frequencies.values()) <= EXACT_POSTINGS)
        return _stored(conn, query, within, level, k)
    if sum(frequencies.values()) > EXACT_POSTINGS:
        # long posting lists: each term's best postings give the candidates (under a filter,
        # the best it allows), and the candidates get their exact score from their terms
        return _stored(conn, query, _candidates(conn, query, m), level, k)
    return _exact(conn, query, k)


def _read(conn: Any, query: _Query, *, best: int | None) -> list[tuple[str, blocks.Postings]]:
    """The query's terms' postings that the filter allows: every block, or with ``best`` each
    term's fresh blocks and its first merged blocks, ``best`` in all, shared among the
    partitions read by their share of the term's postings (at least one block each)."""
    within, sets = query.partitions("b")
    named, _sets = query.partitions("r", "id")
    with conn.cursor(binary=True) as cursor:  # bytes as they are, not as hexadecimal text
        if best is None:
            rows = cursor.execute(
                f"SELECT b.term, b.data FROM term_blocks b WHERE b.term = ANY(%s) AND {within}",
                [query.terms, *sets],
            ).fetchall()
        else:
            rows = cursor.execute(
                "WITH d AS (SELECT t.term, r.id AS part, "
                "t.df::float8 / sum(t.df) OVER (PARTITION BY t.term) AS share "
                "FROM reader_term_stats t JOIN reader_sets r ON r.readers = t.readers "
                "WHERE t.level = 'chunk' AND t.term = ANY(%s) AND t.df > 0 "
                f"AND {named}) "
                "SELECT d.term, b.data FROM d CROSS JOIN LATERAL (SELECT data FROM term_blocks b "
                "WHERE b.term = d.term AND b.reader_set = d.part AND b.rank >= 0 "
                "ORDER BY b.rank LIMIT ceil(%s * d.share)) b "
                "UNION ALL SELECT b.term, b.data FROM term_blocks b WHERE b.term = ANY(%s) "
                f"AND b.rank < 0 AND {within}",
                [query.terms, *sets, best, query.terms, *sets],
            ).fetchall()
    return [(r["term"], query.readable_postings(blocks.decode(r["data"]))) for r in rows]


def _ranked(query: _Query, found: list[tuple[str, blocks.Postings]]) -> tuple[Any, Any]:
    """Chunk ids and their summed scores, best first (ties by id)."""
    if not found:
        return np.zeros(0, np.int64), np.zeros(0, np.float64)
    ids = np.concatenate([p.chunks for _t, p in found])
    scores = np.concatenate([query.scores(t, p) for t, p in found])
    unique, inverse = np.unique(ids, return_inverse=True)
    summed = np.bincount(inverse, weights=scores, minlength=len(unique))
    order = np.lexsort((unique, -summed))
    return unique[order], summed[order]


def _exact(conn: Any, query: _Query, k: int) -> list[ScoredId]:
    """Every posting of the query's terms scored; the best chunks that still exist and that the
    filter allows."""
    ids, scores = _ranked(query, _read(conn, query, best=None))
    keep = scores > 0
    ids, scores = ids[keep], scores[keep]
    out: list[ScoredId] = []
    start = 0
    where, params = query.condition(conn, "p")
    while len(out) < k and start < len(ids):
        batch = [int(i) for i in ids[start : start + k - len(out) + CHECKED]]
        present = {
            int(r["chunk_id"])
            for r in conn.execute(
                "SELECT p.chunk_id FROM (SELECT id AS chunk_id, source_id FROM chunks "
                f"WHERE id = ANY(%s)) p WHERE true{where}",
                [batch, *params],
            )
        }
        for i, chunk_id in enumerate(batch, start):
            if chunk_id in present and len(out) < k:
                out.append(ScoredId(chunk_id, float(scores[i])))
        start += len(batch)
    return out


def _candidates(conn: Any, query: _Query, m: int) -> list[int]:
    """The ``m`` chunks scoring best over each term's best postings that the filter allows (read
    as many more as the filter leaves fewer: ``PER_TERM`` / share): a chunk found for a rare
    term, or near the top of a common one, is there; its exact score comes after."""
    per_term = math.ceil(PER_TERM / min(max(query.share, 1e-9), 1.0))
    ids, _scores = _ranked(query, _read(conn, query, best=math.ceil(per_term / blocks.BLOCK)))
    return [int(i) for i in ids[:m]]


def _pool(conn: Any, query: _Query, m: int, *, exact: bool) -> list[int]:
    """Chunks holding a query term, to score by their sentences: all of them (``exact``), else
    the ``m`` best candidates."""
    if not exact:
        return _candidates(conn, query, m)
    ids, _scores = _ranked(query, _read(conn, query, best=None))
    return [int(i) for i in ids]


def _stored(conn: Any, query: _Query, ids: Sequence[int], level: Level, k: int) -> list[ScoredId]:
    """Chunks ``ids`` (those that exist and the filter allows) scored from their terms by row
    (``forward.py``): as wholes, or by their best sentence row."""
    if not ids:
        return []
    where, params = query.condition(conn, "p")
    column = "chunk_entries" if level == "chunk" else "sentence_entries"
    with conn.cursor(binary=True) as cursor:  # bytes as they are, not as hexadecimal text
        found = cursor.execute(
            f"SELECT p.chunk_id, p.{column} AS entries, p.lengths FROM chunk_terms p "
            f"WHERE p.chunk_id = ANY(%s){where}",
            [sorted({int(i) for i in ids}), *params],
        ).fetchall()
    if not found:
        return []
    stored = forward.read([(r["chunk_id"], r["entries"], r["lengths"]) for r in found])
    weights = {term_hash(t): float(w) for t, w in zip(query.terms, query.weights, strict=True)}
    chunk_ids, scores = forward.score(stored, weights, query.bm25, sentences=level != "chunk")
    keep = scores > 0
    return [
        ScoredId(int(i), float(s))
        for i, s in zip(chunk_ids[keep][:k], scores[keep][:k], strict=True)
    ]
