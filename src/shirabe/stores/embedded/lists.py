"""An inverted file over a large segment's chunk vectors: the rows grouped around centroids
(spherical k-means of their codes), so that a search scans the rows of the groups nearest the
query instead of every row. A flat scan of a million int8 vectors takes about 140 ms here;
reading a few percent of them, a few milliseconds.

The groups are a segment's own, made when the segment is written (built or merged) and kept
beside its codes, with a copy of the codes in group order (a quarter of the segment's chunk
vector bytes again); small segments have none and are scanned whole. The probed rows' codes are
scored as any others, and the best of them rescored with their full vectors (``dense.py``), so
an inverted file changes which rows are read, never a score.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from shirabe.embedders.threads import single_threaded_blas
from shirabe.stores.embedded.quantize import dequantize, scan

MIN_ROWS = 50_000
"""Segments with fewer chunk rows are scanned whole (the scan takes a few ms)."""
ROWS_PER_LIST = 500
"""About this many rows a group: a million rows make two thousand groups."""
PROBE_SHARE = 0.25
"""The share of the groups a search reads, those nearest the query. Chosen at 1M chunks of the
scale benchmark's corpus (JSQuAD valid sentences and questions, the development data): the
dense search's recall@10 against the exact top 10 was 0.975 / 0.981 / 0.986 / 0.988 at 0.15 /
0.20 / 0.25 / 0.30 of the groups (26 / 34 / 42 / 49 ms at the median), 0.998 reading all."""
MIN_PROBE = 8
"""At least this many groups are read."""
SAMPLE_PER_LIST = 40
"""Rows sampled per group to find the centroids."""
ITERATIONS = 10
"""Rounds of k-means over the sample."""
BLOCK = 16_384
"""Rows assigned to their nearest centroid at a time (bounds the score matrix's memory)."""


@dataclass(frozen=True, slots=True)
class Lists:
    """Groups of a segment's chunk rows. ``centroids`` are unit rows in the space of the rows'
    unit vectors less their ``mean`` (centred, the groups split the rows' directions instead of
    all lying near the mean). The rows of group ``g`` are ``rows[ptr[g]:ptr[g + 1]]``, their
    codes and scales kept again in that order (``codes``, ``scales``), so that a group is read
    as one run of bytes."""

    centroids: NDArray[np.float32]
    mean: NDArray[np.float32]
    rows: NDArray[np.int64]
    ptr: NDArray[np.int64]
    codes: NDArray[np.int8]
    scales: NDArray[np.float32]

    FIELDS = ("centroids", "mean", "rows", "ptr", "codes", "scales")

    @property
    def count(self) -> int:
        return len(self.centroids)

    def nearest(self, query: NDArray[np.float32], n: int | None = None) -> NDArray[np.int64]:
        """The ``n`` groups nearest ``query`` (by default :func:`probes`), in ascending order."""
        n = probes(self.count) if n is None else min(n, self.count)
        with single_threaded_blas():
            near = np.asarray(self.centroids) @ np.asarray(query, dtype=np.float32)
        if n >= self.count:
            return np.arange(self.count, dtype=np.int64)
        return np.sort(np.argpartition(-near, n - 1)[:n]).astype(np.int64)

    def scan(
        self, query: NDArray[np.float32], n: int | None = None
    ) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """The rows of the ``n`` groups nearest ``query`` and their codes' scores."""
        runs = _runs(self.nearest(query, n), np.asarray(self.ptr))
        places, scores = self._scan_runs(runs, query)
        return np.asarray(self.rows)[places].astype(np.int64), scores

    def _scan_runs(
        self, runs: list[tuple[int, int]], query: NDArray[np.float32]
    ) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """The positions (in group order) of the rows of ``runs`` and their codes' scores."""
        if not runs:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        found = [scan(self.codes[lo:hi], self.scales[lo:hi], query) for lo, hi in runs]
        places = np.concatenate([np.arange(lo, hi, dtype=np.int64) for lo, hi in runs])
        return places, np.concatenate(found)


def _runs(groups: NDArray[np.int64], ptr: NDArray[np.int64]) -> list[tuple[int, int]]:
    """The row ranges of ``groups`` (ascending), adjacent groups joined into one range."""
    runs: list[tuple[int, int]] = []
    for g in groups:
        lo, hi = int(ptr[g]), int(ptr[g + 1])
        if hi <= lo:
            continue
        if runs and runs[-1][1] == lo:
            runs[-1] = (runs[-1][0], hi)
        else:
            runs.append((lo, hi))
    return runs


def probes(count: int) -> int:
    """How many of ``count`` groups a search reads."""
    return min(count, max(MIN_PROBE, math.ceil(PROBE_SHARE * count)))


def list_count(rows: int) -> int:
    """How many groups ``rows`` rows are split into (none below :data:`MIN_ROWS`)."""
    return 0 if rows < MIN_ROWS else max(1, round(rows / ROWS_PER_LIST))


def build_lists(
    codes: NDArray[np.int8], scales: NDArray[np.float32], *, seed: int = 0
) -> Lists | None:
    """The groups of the rows the codes stand for (spherical k-means of a sample of them,
    centred), or None for fewer than :data:`MIN_ROWS` rows. Deterministic for the same rows
    and ``seed``."""
    n = len(codes)
    count = list_count(n)
    if count == 0:
        return None
    rng = np.random.default_rng(seed)
    sample = np.sort(rng.choice(n, size=min(n, count * SAMPLE_PER_LIST), replace=False))
    points = _unit(dequantize(np.asarray(codes)[sample], np.asarray(scales)[sample]))
    mean = points.mean(axis=0).astype(np.float32)
    points = _unit(points - mean)
    centroids = points[rng.choice(len(points), size=count, replace=False)].copy()
    with single_threaded_blas():
        for _ in range(ITERATIONS):
            centroids = _means(points, np.argmax(points @ centroids.T, axis=1), centroids)
        groups = np.empty(n, dtype=np.int64)
        for start in range(0, n, BLOCK):
            block = _unit(
                dequantize(
                    np.asarray(codes[start : start + BLOCK]),
                    np.asarray(scales[start : start + BLOCK]),
                )
            )
            groups[start : start + len(block)] = np.argmax((block - mean) @ centroids.T, axis=1)
    order = np.argsort(groups, kind="stable").astype(np.int64)
    ptr = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(np.bincount(groups, minlength=count), out=ptr[1:])
    return Lists(
        centroids.astype(np.float32),
        mean,
        order,
        ptr,
        np.asarray(codes)[order],
        np.asarray(scales)[order].astype(np.float32),
    )


def _means(
    points: NDArray[np.float32], nearest: NDArray[np.int64], centroids: NDArray[np.float32]
) -> NDArray[np.float32]:
    """Each group's unit mean direction; a group no point chose keeps its centroid."""
    count = len(centroids)
    sizes = np.bincount(nearest, minlength=count)
    order = np.argsort(nearest, kind="stable")
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    filled = sizes > 0
    sums = centroids.copy()
    sums[filled] = np.add.reduceat(points[order], starts[filled], axis=0)
    return _unit(sums)


def _unit(matrix: NDArray[np.float32]) -> NDArray[np.float32]:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    out: NDArray[np.float32] = (matrix / np.where(norms > 0, norms, 1.0)).astype(np.float32)
    return out
