"""Rank fusion and diversification as pure functions over plain inputs."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from shirabe.embedders.threads import single_threaded_blas

Ranking = Sequence[tuple[int, float]]
"""One retriever's result: ``(chunk_id, score)`` pairs, best first."""


def reciprocal_rank_fusion(
    rankings: Mapping[str, Ranking],
    *,
    k: int = 60,
    weights: Mapping[str, float] | None = None,
) -> list[tuple[int, float]]:
    """Weighted RRF: ``score(d) = Σ_r w_r / (k + rank_r(d))`` with 1-based ranks.

    Ties keep the order in which ids were first seen, so the result is deterministic.
    """
    fused: dict[int, float] = {}
    for name, ranking in rankings.items():
        w = 1.0 if weights is None else weights.get(name, 1.0)
        if w == 0:
            continue
        for rank, (chunk_id, _score) in enumerate(ranking, start=1):
            fused[chunk_id] = fused.get(chunk_id, 0.0) + w / (k + rank)
    return sorted(fused.items(), key=lambda item: -item[1])


def min_max(scores: Sequence[float]) -> list[float]:
    """Scale scores to [0, 1]; a constant list maps to all ones."""
    if not scores:
        return []
    lo, hi = min(scores), max(scores)
    if hi - lo <= 1e-12:
        return [1.0 for _ in scores]
    return [(s - lo) / (hi - lo) for s in scores]


def convex_fusion(
    rankings: Mapping[str, Ranking],
    *,
    weights: Mapping[str, float] | None = None,
) -> list[tuple[int, float]]:
    """Weighted sum of min-max normalised scores; an id a retriever did not return scores 0.

    Normalising by each list's own range makes BM25 (unbounded) and cosine (bounded) comparable
    while keeping the score gaps that RRF throws away.
    """
    fused: dict[int, float] = {}
    total = 0.0
    for name, ranking in rankings.items():
        w = 1.0 if weights is None else weights.get(name, 1.0)
        if w == 0 or not ranking:
            continue
        total += w
        for (chunk_id, _), norm in zip(ranking, min_max([s for _, s in ranking]), strict=True):
            fused[chunk_id] = fused.get(chunk_id, 0.0) + w * norm
    if total > 0:
        fused = {cid: s / total for cid, s in fused.items()}
    return sorted(fused.items(), key=lambda item: -item[1])


def mmr(
    candidates: NDArray[np.float32],
    relevance: Sequence[float],
    *,
    lambda_: float,
    k: int,
) -> list[int]:
    """Maximal marginal relevance: indices into ``candidates`` trading relevance for novelty.

    ``relevance`` is the fused score of each candidate (any scale, min-max normalised here);
    novelty is one minus the highest cosine similarity to anything already chosen.
    """
    n = len(relevance)
    if n == 0 or k <= 0:
        return []
    rel = np.asarray(min_max(list(relevance)), dtype=np.float64)
    with single_threaded_blas():
        sims = candidates @ candidates.T
    chosen: list[int] = []
    remaining = list(range(n))
    while remaining and len(chosen) < k:
        if chosen:
            redundancy = sims[np.ix_(remaining, chosen)].max(axis=1)
        else:
            redundancy = np.zeros(len(remaining))
        marginal = lambda_ * rel[remaining] - (1.0 - lambda_) * redundancy
        best = remaining[int(np.argmax(marginal))]
        chosen.append(best)
        remaining.remove(best)
    return chosen


def zscore_fusion(
    rankings: Mapping[str, Ranking],
    *,
    weights: Mapping[str, float] | None = None,
    complete: Collection[str] = (),
) -> list[tuple[int, float]]:
    """Weighted mean of per-list z-scores; an id a retriever did not return gets its lowest z.

    Standardising each list by its own mean and spread puts BM25 and cosine scores on one
    scale without letting a single outlier (the list's maximum or minimum) set that scale.

    Lists named in ``complete`` hold every id their retriever matched (BM25 returned fewer
    than asked for): the other ids of the pool truly scored 0 there, and count as zeros in
    that list's mean and spread. A lone exact match of a rare code then stands far above
    the rest instead of having no spread to be measured by.
    """
    pool = {cid for ranking in rankings.values() for cid, _ in ranking}
    fused: dict[int, float] = {}
    total = 0.0
    floors: list[tuple[float, dict[int, float]]] = []
    for name, ranking in rankings.items():
        w = 1.0 if weights is None else weights.get(name, 1.0)
        if w == 0 or not ranking:
            continue
        scores = np.asarray([s for _, s in ranking], dtype=np.float64)
        absent = len(pool) - len(ranking) if name in complete else 0
        everything = np.concatenate([scores, np.zeros(absent)]) if absent else scores
        mean, spread = float(everything.mean()), float(everything.std())
        z = (scores - mean) / spread if spread > 1e-12 else np.zeros_like(scores)
        floor = (0.0 - mean) / spread if absent and spread > 1e-12 else float(z.min())
        total += w
        table = {cid: w * float(v) for (cid, _), v in zip(ranking, z, strict=True)}
        floors.append((w * floor, table))
        for cid in table:
            fused.setdefault(cid, 0.0)
    for floor, table in floors:
        for cid in fused:
            fused[cid] += table.get(cid, floor)
    if total > 0:
        fused = {cid: s / total for cid, s in fused.items()}
    return sorted(fused.items(), key=lambda item: (-item[1], item[0]))
