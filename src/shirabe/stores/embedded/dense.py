"""Dense search over the segments: a scan of the vectors' int8 codes finds the candidates, and
their full vectors (from the embedding cache) rescore them, so the scores returned are those of
the full vectors. Segments of format 2 hold float32 vectors, and score with them directly."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from shirabe.embedders.threads import single_threaded_blas
from shirabe.records import ScoredId
from shirabe.stores.embedded.filters import keep_allowed
from shirabe.stores.embedded.quantize import rescored
from shirabe.stores.embedded.segments import CodedVectors, IdArray, Segment, max_by_owner
from shirabe.stores.protocol import Level

FullVectors = Callable[[Sequence[int]], tuple[NDArray[np.int64], NDArray[np.float32]]]
"""The full vectors of the given embedding cache ids: the ids it holds, ascending, and their
vectors."""

SLACK = 1e-5
"""Added to every row's margin: the float32 rounding of the products."""


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
            else:
                docs = np.arange(seg.size, dtype=np.int64)
                scores = seg.to_chunks(level, vectors.scores(q))
        mask = np.asarray(live)[docs]
        if allowed is not None and within is not allowed:  # else only allowed ones were read
            keep_allowed(mask, np.asarray(seg.chunk_ids)[docs], allowed)
        top = top_indexes(scores, mask, wanted)
        found.append(_Candidates(seg, docs[top], scores[top]))
    return rescore(best(found, wanted), q, k, level, full)


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
    """The candidates scored with their full vectors (those of the codes where ``full`` has
    none), best first, ``k`` of them. A code's score is within its row's :meth:`margin
    <CodedVectors.margins>` of the full vector's, so the full vectors are read only for rows
    that can still be their chunk's best and belong to a chunk that can still be among the
    best ``k``."""
    l1 = float(np.abs(query).sum())
    plans = []
    for f in found:
        rows, owner = f.segment.rows_of_docs(level, f.docs)
        vectors = f.segment.vectors(level)
        with single_threaded_blas():
            approx = vectors.scores(query, rows)
        margin = vectors.margins(rows, l1) + SLACK
        lower = max_by_owner(approx - margin, owner, len(f.docs))
        plans.append((f, rows, owner, vectors, approx + margin, lower))
    lowers = np.concatenate([p[5] for p in plans]) if plans else np.zeros(0)
    floor = np.partition(lowers, len(lowers) - k)[len(lowers) - k] if len(lowers) > k else -np.inf
    kept = [upper >= np.maximum(lower[owner], floor) for _, _, owner, _, upper, lower in plans]
    wanted: list[NDArray[np.int64]] = []
    for (_f, rows, _owner, vectors, _upper, _lower), keep in zip(plans, kept, strict=True):
        if full is not None and isinstance(vectors, CodedVectors):
            ids = np.asarray(vectors.ids)[rows[keep]]
            wanted.append(ids[ids > 0])
    asked = np.unique(np.concatenate(wanted)) if wanted else np.zeros(0, np.int64)
    fetched = full(asked.tolist()) if len(asked) and full is not None else None
    chunk_ids, chunk_scores = [], []
    for (f, rows, owner, vectors, _upper, _lower), keep in zip(plans, kept, strict=True):
        matrix = vectors.approximate(rows[keep])
        if fetched is not None and isinstance(vectors, CodedVectors):
            _fill(matrix, np.asarray(vectors.ids)[rows[keep]], *fetched)
        row_scores = np.full(len(rows), -np.inf)
        with single_threaded_blas():
            row_scores[keep] = (matrix @ query).astype(np.float64)
        chunk_scores.append(max_by_owner(row_scores, owner, len(f.docs)))
        chunk_ids.append(np.asarray(f.segment.chunk_ids)[f.docs])
    if not chunk_ids:
        return []
    ids, scores = np.concatenate(chunk_ids), np.concatenate(chunk_scores)
    order = np.lexsort((ids, -scores))
    order = order[np.isfinite(scores[order])][:k]
    return [ScoredId(int(ids[i]), float(scores[i])) for i in order]


def _fill(
    matrix: NDArray[np.float32],
    row_ids: NDArray[np.int64],
    found: NDArray[np.int64],
    vectors: NDArray[np.float32],
) -> None:
    """Replace the rows of ``matrix`` whose cache id is among ``found`` (sorted) by their
    full vector."""
    if len(found) == 0:
        return
    at = np.minimum(np.searchsorted(found, row_ids), len(found) - 1)
    hit = found[at] == row_ids
    matrix[hit] = vectors[at[hit]]
