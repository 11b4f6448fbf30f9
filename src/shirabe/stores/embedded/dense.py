"""Dense search over the segments: a scan of the vectors' int8 codes finds the candidates, and
their full vectors (read from the embedding cache's files by slot) rescore them, so the scores
returned are those of the full vectors. A large segment's chunk rows are grouped around
centroids (``lists.py``): an unfiltered or broadly filtered search scans the groups nearest the
query only. Segments of format 2 hold float32 vectors, and score
with them directly."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from shirabe.embedders.threads import single_threaded_blas
from shirabe.records import ScoredId
from shirabe.stores.embedded.filters import keep_allowed
from shirabe.stores.embedded.quantize import rescored
from shirabe.stores.embedded.segments import (
    CodedVectors,
    IdArray,
    RowVectors,
    Segment,
    max_by_owner,
)
from shirabe.stores.protocol import Level

FullVectors = Callable[[NDArray[np.int64]], NDArray[np.float32]]
"""The full vectors at the given slots of the embedding cache, as rows in that order."""


@dataclass(frozen=True, slots=True)
class _Candidates:
    """Chunks of one segment (local indexes) with their approximate scores."""

    segment: Segment
    docs: NDArray[np.int64]
    scores: NDArray[np.float64]


def top_indexes(scores: NDArray[np.float64], mask: NDArray[np.bool_], n: int) -> IdArray:
    """The indexes of the ``n`` best scores where ``mask`` is set (in no order)."""
    idx = np.flatnonzero(mask)
    if len(idx) > n:
        idx = idx[np.argpartition(-scores[idx], n - 1)[:n]]
    return idx.astype(np.int64)


def search_dense(
    segments: Sequence[Segment],
    alive: Sequence[NDArray[np.bool_]],
    query: NDArray[np.float32],
    k: int,
    *,
    level: Level,
    allowed: IdArray | None,
    within: IdArray | None,
    full: FullVectors | None,
) -> list[ScoredId]:
    """The ``k`` best chunks by cosine (at sentence level, by their best sentence) among the
    live ones, those in ``allowed`` and, with ``within``, only those. The scan keeps the
    :func:`~shirabe.stores.embedded.quantize.rescored` best of each segment; without ``full``,
    the scores are those of the codes."""
    q = np.asarray(query, dtype=np.float32)
    wanted = rescored(k)
    found: list[_Candidates] = []
    for seg, live in zip(segments, alive, strict=True):
        if seg.size == 0:
            continue
        vectors = seg.vectors(level)
        with single_threaded_blas():
            if within is not None:
                docs, rows, owner = seg.rows_of(level, within)
                if len(within) <= wanted:  # every one is rescored: no need to rank them
                    scores = np.zeros(len(docs), dtype=np.float64)
                else:
                    scores = max_by_owner(vectors.scores(q, rows), owner, len(docs))
            elif (probed := _probed(vectors, q, wanted)) is not None:
                docs, scores = probed  # the chunk rows of the groups nearest the query
            else:
                docs = np.arange(seg.size, dtype=np.int64)
                scores = seg.to_chunks(level, vectors.scores(q))
        mask = np.asarray(live)[docs]
        if allowed is not None and within is not allowed:  # else only allowed ones were read
            keep_allowed(mask, np.asarray(seg.chunk_ids)[docs], allowed)
        top = top_indexes(scores, mask, wanted)
        found.append(_Candidates(seg, docs[top], scores[top]))
    return rescore(best(found, wanted), q, k, level, full)


def _probed(
    vectors: RowVectors, query: NDArray[np.float32], wanted: int
) -> tuple[IdArray, NDArray[np.float64]] | None:
    """The rows of the groups nearest ``query`` with their codes' scores, when ``vectors`` are
    grouped (chunk level of a large segment) and those rows are at least ``wanted``; else None
    (every row is scanned)."""
    if not isinstance(vectors, CodedVectors) or vectors.lists is None:
        return None
    rows, scores = vectors.lists.scan(query)
    return (rows, scores) if len(rows) >= wanted else None


def best(found: Sequence[_Candidates], n: int) -> list[_Candidates]:
    """The ``n`` best candidates over all segments."""
    total = sum(len(f.docs) for f in found)
    if total <= n:
        return list(found)
    scores = np.concatenate([f.scores for f in found])
    threshold = np.partition(-scores, n - 1)[n - 1]
    out, left = [], n
    for f in found:  # those above the threshold, then ties at it until n are kept
        above = np.flatnonzero(-f.scores < threshold)
        tied = np.flatnonzero(-f.scores == threshold)
        keep = np.concatenate([above, tied[: max(0, left - len(above))]])
        left -= len(keep)
        out.append(_Candidates(f.segment, f.docs[keep], f.scores[keep]))
    return out


def rescore(
    found: Sequence[_Candidates],
    query: NDArray[np.float32],
    k: int,
    level: Level,
    full: FullVectors | None,
) -> list[ScoredId]:
    """The candidates scored with their full vectors (with what their codes stand for where
    there is none: no source of them, or a row without a cached vector), best first, ``k`` of
    them. The full vectors of every segment's candidates are read at once."""
    if not found:
        return []
    rows_of = [f.segment.rows_of_docs(level, f.docs) for f in found]
    row_starts = np.cumsum([0, *(len(rows) for rows, _ in rows_of)])
    doc_starts = np.cumsum([0, *(len(f.docs) for f in found)])
    matrix = np.empty((int(row_starts[-1]), len(query)), dtype=np.float32)
    places: list[NDArray[np.int64]] = []
    slots: list[NDArray[np.int64]] = []
    for f, (rows, _owner), start in zip(found, rows_of, row_starts, strict=False):
        vectors = f.segment.vectors(level)
        cached = np.zeros(len(rows), dtype=np.bool_)
        if full is not None and isinstance(vectors, CodedVectors):
            slot = np.asarray(vectors.ids)[rows]
            cached = slot >= 0
            places.append(start + np.flatnonzero(cached))
            slots.append(slot[cached])
        if not cached.all():
            matrix[start + np.flatnonzero(~cached)] = vectors.approximate(rows[~cached])
    if full is not None and slots:
        matrix[np.concatenate(places)] = full(np.concatenate(slots))
    with single_threaded_blas():
        row_scores = (matrix @ query).astype(np.float64)
    owner = np.concatenate([o + d for (_, o), d in zip(rows_of, doc_starts, strict=False)])
    scores = max_by_owner(row_scores, owner, int(doc_starts[-1]))
    ids = np.concatenate([np.asarray(f.segment.chunk_ids)[f.docs] for f in found])
    order = np.lexsort((ids, -scores))[:k]
    return [ScoredId(int(ids[i]), float(scores[i])) for i in order]
