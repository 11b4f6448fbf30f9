"""An inverted file over a large segment's chunk vectors: the rows grouped around centroids
(spherical k-means of their codes), so that a search scans the rows of the groups nearest the
query instead of every row. A flat scan of a million int8 vectors takes about 140 ms here;
reading a few percent of them, a few milliseconds.

The groups are a segment's own, made when the segment is written (built or merged) and kept
beside its codes; small segments have none and are scanned whole. The probed rows' codes are
scored as any others, and the best of them rescored with their full vectors (``dense.py``), so
an inverted file changes which rows are read, never a score.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from shirabe.embedders.threads import single_threaded_blas
from shirabe.stores.embedded.quantize import dequantize

MIN_ROWS = 50_000
"""Segments with fewer chunk rows are scanned whole (the scan takes a few ms)."""
ROWS_PER_LIST = 1_000
"""About this many rows a group: a million rows make a thousand groups."""
PROBE_SHARE = 0.05
"""The share of the groups a search reads, those nearest the query."""
MIN_PROBE = 8
"""At least this many groups are read."""
SAMPLE_PER_LIST = 40
"""Rows sampled per group to find the centroids."""
ITERATIONS = 10
"""Rounds of k-means over the sample."""
ASSIGN_BLOCK = 16_384
"""Rows assigned to their nearest centroid at a time (bounds the score matrix's memory)."""


@dataclass(frozen=True, slots=True)
class Lists:
    """Groups of a segment's rows: ``centroids`` (one unit row each), and the rows of group
    ``g`` at ``rows[ptr[g]:ptr[g + 1]]``, ascending."""

    centroids: NDArray[np.float32]
    rows: NDArray[np.int64]
    ptr: NDArray[np.int64]

    @property
    def count(self) -> int:
        return len(self.centroids)

    def probe(self, query: NDArray[np.float32], n: int | None = None) -> NDArray[np.int64]:
        """The rows of the ``n`` groups nearest ``query`` (by default :func:`probes`), in
        ascending order."""
        n = probes(self.count) if n is None else min(n, self.count)
        with single_threaded_blas():
            near = np.asarray(self.centroids) @ np.asarray(query, dtype=np.float32)
        groups = np.argpartition(-near, n - 1)[:n] if n < self.count else np.arange(self.count)
        ptr = np.asarray(self.ptr)
        rows = np.asarray(self.rows)
        picked = np.concatenate([rows[ptr[g] : ptr[g + 1]] for g in groups])
        picked.sort()
        return picked.astype(np.int64)


def probes(count: int) -> int:
    """How many of ``count`` groups a search reads."""
    return min(count, max(MIN_PROBE, math.ceil(PROBE_SHARE * count)))


def list_count(rows: int) -> int:
    """How many groups ``rows`` rows are split into (none below :data:`MIN_ROWS`)."""
    return 0 if rows < MIN_ROWS else max(1, round(rows / ROWS_PER_LIST))


def build_lists(
    codes: NDArray[np.int8], scales: NDArray[np.float32], *, seed: int = 0
) -> Lists | None:
    """The groups of the rows the codes stand for, or None for fewer than :data:`MIN_ROWS`.
    Deterministic for the same rows and ``seed``."""
    n = len(codes)
    count = list_count(n)
    if count == 0:
        return None
    rng = np.random.default_rng(seed)
    sample_size = min(n, count * SAMPLE_PER_LIST)
    sample = np.sort(rng.choice(n, size=sample_size, replace=False))
    points = _unit(dequantize(np.asarray(codes)[sample], np.asarray(scales)[sample]))
    centroids = points[rng.choice(len(points), size=count, replace=False)].copy()
    with single_threaded_blas():
        for _ in range(ITERATIONS):
            nearest = np.argmax(points @ centroids.T, axis=1)
            sums = np.zeros_like(centroids)
            np.add.at(sums, nearest, points)
            empty = np.bincount(nearest, minlength=count) == 0
            sums[empty] = centroids[empty]  # a group nothing chose keeps its centroid
            centroids = _unit(sums)
        groups = np.empty(n, dtype=np.int64)
        for start in range(0, n, ASSIGN_BLOCK):
            block = dequantize(
                np.asarray(codes[start : start + ASSIGN_BLOCK]),
                np.asarray(scales[start : start + ASSIGN_BLOCK]),
            )
            groups[start : start + len(block)] = np.argmax(block @ centroids.T, axis=1)
    order = np.argsort(groups, kind="stable").astype(np.int64)
    ptr = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(np.bincount(groups, minlength=count), out=ptr[1:])
    return Lists(centroids.astype(np.float32), order, ptr)


def _unit(matrix: NDArray[np.float32]) -> NDArray[np.float32]:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    out: NDArray[np.float32] = (matrix / np.where(norms > 0, norms, 1.0)).astype(np.float32)
    return out
