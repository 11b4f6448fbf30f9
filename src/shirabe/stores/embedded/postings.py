"""Postings: an inverted index over rows (chunks or sentences) for BM25.

Terms are stored as 64-bit hashes, sorted and searched with ``searchsorted``, so no vocabulary
has to be loaded; the arrays are plain ``.npy`` files a segment opens with ``mmap``. Term
frequencies are whole numbers, kept in the smallest unsigned type that holds them (one byte
each in practice; float32 in segments written before).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from shirabe.stores.bm25 import bm25_weights, term_hash

Counts = NDArray[Any]
"""Term frequencies: unsigned integers (float32 in segments written before)."""


def narrow_counts(counts: Counts) -> Counts:
    """Whole, non-negative counts in the smallest unsigned type that holds the largest; other
    values (none a segment makes) as float32."""
    values = np.asarray(counts)
    if len(values) == 0:
        return np.zeros(0, dtype=np.uint8)
    whole = bool(np.all(values >= 0) and np.all(values == np.floor(values)))
    if whole:
        peak = int(values.max())
        for kind in (np.uint8, np.uint16, np.uint32):
            if peak <= np.iinfo(kind).max:
                return values.astype(kind)
    return values.astype(np.float32)


@dataclass(slots=True)
class Postings:
    """An inverted index over rows: for each term hash, the rows holding it and how often."""

    terms: NDArray[np.uint64]
    term_ptr: NDArray[np.int64]
    rows: NDArray[np.int32]
    tfs: Counts
    lengths: NDArray[np.int32]

    FIELDS = ("terms", "term_ptr", "rows", "tfs", "lengths")

    @classmethod
    def build(cls, token_rows: Sequence[Sequence[str]]) -> Postings:
        cache: dict[str, int] = {}
        hashes: list[int] = []
        rows: list[int] = []
        tfs: list[int] = []
        for row, tokens in enumerate(token_rows):
            for token, tf in Counter(tokens).items():
                h = cache.get(token)
                if h is None:
                    h = cache[token] = term_hash(token)
                hashes.append(h)
                rows.append(row)
                tfs.append(tf)
        return cls.from_triples(
            np.asarray(hashes, dtype=np.uint64),
            np.asarray(rows, dtype=np.int64),
            np.asarray(tfs, dtype=np.int64),
            np.asarray([len(t) for t in token_rows], dtype=np.int32),
        )

    @classmethod
    def from_triples(
        cls,
        hashes: NDArray[np.uint64],
        rows: NDArray[np.int64],
        tfs: Counts,
        lengths: NDArray[np.int32],
    ) -> Postings:
        order = np.lexsort((rows, hashes)) if len(hashes) else np.zeros(0, dtype=np.int64)
        sorted_hashes = hashes[order]
        terms, starts = np.unique(sorted_hashes, return_index=True)
        return cls(
            terms=terms.astype(np.uint64),
            term_ptr=np.append(starts, len(sorted_hashes)).astype(np.int64),
            rows=rows[order].astype(np.int32),
            tfs=narrow_counts(tfs[order]),
            lengths=lengths.astype(np.int32),
        )

    def triples(self) -> tuple[NDArray[np.uint64], NDArray[np.int64], Counts]:
        """(term hash, row, tf) for every posting."""
        per_term = np.diff(self.term_ptr)
        return (
            np.repeat(np.asarray(self.terms), per_term),
            np.asarray(self.rows, dtype=np.int64),
            np.asarray(self.tfs),
        )

    def lookup(self, hashes: NDArray[np.uint64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """Posting ranges ``[lo, hi)`` for each hash (empty where absent)."""
        n = len(self.terms)
        if n == 0:
            zero = np.zeros(len(hashes), dtype=np.int64)
            return zero, zero
        pos = np.searchsorted(self.terms, hashes)
        clipped = np.minimum(pos, n - 1)
        found = (pos < n) & (np.asarray(self.terms)[clipped] == hashes)
        ptr = np.asarray(self.term_ptr)
        lo = np.where(found, ptr[clipped], 0)
        hi = np.where(found, ptr[clipped + 1], 0)
        return lo, hi

    def score(
        self,
        lo: NDArray[np.int64],
        hi: NDArray[np.int64],
        term_idf: NDArray[np.float64],
        *,
        avg_len: float,
        k1: float,
        b: float,
    ) -> NDArray[np.float64]:
        """BM25 of every row for the looked-up terms. The terms' weighted postings are summed
        per row in one pass (a pass over every row per term took most of a search at 1M
        chunks); each row's terms are added in the terms' order, as one pass per term would."""
        n = len(self.lengths)
        all_rows: list[NDArray[np.integer[Any]]] = []
        weights: list[NDArray[np.float64]] = []
        for j in np.flatnonzero(hi > lo):
            rows, w = self.weighted(
                int(lo[j]), int(hi[j]), term_idf[j], avg_len=avg_len, k1=k1, b=b
            )
            all_rows.append(rows)
            weights.append(w)
        if not all_rows:
            return np.zeros(n, dtype=np.float64)
        summed = np.bincount(np.concatenate(all_rows), weights=np.concatenate(weights), minlength=n)
        return summed.astype(np.float64, copy=False)

    def weighted(
        self, lo: int, hi: int, term_idf: float, *, avg_len: float, k1: float, b: float
    ) -> tuple[NDArray[np.integer[Any]], NDArray[np.float64]]:
        """The rows of one term's postings ``[lo, hi)`` and what the term adds to each one's
        BM25."""
        rows = np.asarray(self.rows[lo:hi])
        lengths = np.asarray(self.lengths)[rows]
        weights = term_idf * bm25_weights(self.tfs[lo:hi], lengths, avg_len=avg_len, k1=k1, b=b)
        return rows, weights

    def score_rows(
        self,
        rows: NDArray[np.int64],
        lo: NDArray[np.int64],
        hi: NDArray[np.int64],
        term_idf: NDArray[np.float64],
        *,
        avg_len: float,
        k1: float,
        b: float,
    ) -> NDArray[np.float64]:
        """BM25 of the given rows only: each term's postings are searched, not scanned."""
        scores = np.zeros(len(rows), dtype=np.float64)
        if len(rows) == 0:
            return scores
        lengths = np.asarray(self.lengths)[rows]
        for j in np.flatnonzero(hi > lo):
            posting_rows = np.asarray(self.rows[lo[j] : hi[j]])
            idx = np.searchsorted(posting_rows, rows)
            found = idx < len(posting_rows)
            found[found] = posting_rows[idx[found]] == rows[found]
            if not found.any():
                continue
            tf = np.asarray(self.tfs[lo[j] : hi[j]])[idx[found]]
            scores[found] += term_idf[j] * bm25_weights(
                tf, lengths[found], avg_len=avg_len, k1=k1, b=b
            )
        return scores


def merge_postings(parts: Sequence[tuple[Postings, NDArray[np.bool_]]]) -> Postings:
    """Concatenate postings of several row sets, keeping only the rows marked alive."""
    hashes: list[NDArray[np.uint64]] = []
    rows: list[NDArray[np.int64]] = []
    tfs: list[Counts] = []
    lengths: list[NDArray[np.int32]] = []
    offset = 0
    for postings, alive in parts:
        new_row = np.cumsum(alive) - 1 + offset
        h, r, t = postings.triples()
        keep = alive[r]
        hashes.append(h[keep])
        rows.append(new_row[r[keep]])
        tfs.append(t[keep])
        lengths.append(np.asarray(postings.lengths)[alive])
        offset += int(alive.sum())
    return Postings.from_triples(
        np.concatenate(hashes) if hashes else np.zeros(0, np.uint64),
        np.concatenate(rows) if rows else np.zeros(0, np.int64),
        np.concatenate(tfs) if tfs else np.zeros(0, np.float32),
        np.concatenate(lengths) if lengths else np.zeros(0, np.int32),
    )
