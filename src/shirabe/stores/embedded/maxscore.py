"""BM25's best rows without scoring every posting of the query's common terms (MaxScore).

A term adds at most ``idf × (k1 + 1)`` to a row's score. Once the rows found by the rarer terms
include ``k`` the caller may return, the ``k``-th best of their partial scores is a floor under
the final ``k``-th best score; the commoner terms, whose bounds sum below that floor, cannot
lift a row none of the rarer terms holds into the top ``k``. Their postings are then read only
for the rows that could still reach the floor. The top ``k`` is the one every posting gives,
with each score summed in another order (rarer terms first).

At 1M chunks a long question's terms hold millions of postings (the commonest bigrams and
particles appear in most chunks), and reading every one was most of the search's time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from shirabe.stores.embedded.postings import Postings
from shirabe.stores.embedded.segments import Segment

PRUNE_FROM = 100_000
"""The query's terms' postings together from which a search prunes (below, it reads every
posting: one pass is then cheaper than the bookkeeping)."""

Eligible = Callable[[NDArray[np.int64]], NDArray[np.bool_]]
"""Which of the given rows the caller may return (alive, and readable)."""


@dataclass(frozen=True, slots=True)
class Bm25:
    """The collection's average row length and BM25's parameters."""

    avg_len: float
    k1: float
    b: float


def best_rows(
    postings: Postings,
    lo: NDArray[np.int64],
    hi: NDArray[np.int64],
    term_idf: NDArray[np.float64],
    k: int,
    eligible: Eligible,
    bm25: Bm25,
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Eligible rows with their exact BM25 scores, among them every row of the top ``k``
    (rows with a positive score only)."""
    avg_len, k1, b = bm25.avg_len, bm25.k1, bm25.b
    n = len(postings.lengths)
    present = np.flatnonzero(hi > lo)
    if len(present) == 0 or k <= 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
    terms = present[np.argsort((hi - lo)[present], kind="stable")]  # rarest first
    bound = term_idf[terms] * (k1 + 1.0)
    rest = np.concatenate([np.cumsum(bound[::-1])[::-1], [0.0]])  # bounds of terms[i:]
    partial = np.zeros(n, dtype=np.float64)
    used = 0
    step = 1
    while True:
        for j in terms[used : used + step]:
            rows, weights = postings.weighted(
                int(lo[j]), int(hi[j]), term_idf[j], avg_len=avg_len, k1=k1, b=b
            )
            np.add.at(partial, rows, weights)
        used = min(len(terms), used + step)
        step *= 2
        touched = np.flatnonzero(partial > 0)
        touched = touched[eligible(touched)]
        floor = _kth(partial[touched], k)
        if used == len(terms) or rest[used] < floor:
            break
    keep = touched[partial[touched] + rest[used] >= floor - 1e-9 * max(1.0, floor)]
    rest_terms = terms[used:]  # read for the rows kept only, in this order
    scores = partial[keep] + postings.score_rows(
        keep, lo[rest_terms], hi[rest_terms], term_idf[rest_terms], avg_len=avg_len, k1=k1, b=b
    )
    return keep.astype(np.int64), scores


def _kth(scores: NDArray[np.float64], k: int) -> float:
    """The ``k``-th largest of ``scores``; 0 when there are fewer."""
    if len(scores) < k:
        return 0.0
    return float(np.partition(scores, len(scores) - k)[len(scores) - k])


def best_chunks(
    segment: Segment,
    eligible: NDArray[np.bool_],
    lo: NDArray[np.int64],
    hi: NDArray[np.int64],
    term_idf: NDArray[np.float64],
    k: int,
    bm25: Bm25,
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """:func:`best_rows` of a segment's chunk postings, as chunk ids, among its ``eligible``
    rows (alive and allowed)."""
    rows, scores = best_rows(
        segment.chunk_postings, lo, hi, term_idf, k, eligible.__getitem__, bm25
    )
    return np.asarray(segment.chunk_ids)[rows].astype(np.int64), scores
