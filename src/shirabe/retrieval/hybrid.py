"""Hybrid retrieval: several rankers fused into one list, optionally diversified with MMR."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from shirabe.embedders.protocol import Embedder
from shirabe.indexing.passages import own_vectors
from shirabe.records import Hit, ScoredId
from shirabe.retrieval.fusion import convex_fusion, mmr, reciprocal_rank_fusion, zscore_fusion
from shirabe.retrieval.hits import hits_for
from shirabe.retrieval.protocol import Ranker
from shirabe.retrieval.query import Query
from shirabe.stores.protocol import Store

BESIDE = 16
"""Searches at once whose vector rankers run beside their lexical ones; more wait for a
thread."""


@dataclass(frozen=True, slots=True)
class Fusion:
    """How the rankers' lists become one: the method, each ranker's weight (1 when not
    named), RRF's ``k``, and how many ids each ranker hands over."""

    method: Literal["rrf", "convex", "zscore"] = "zscore"
    weights: Mapping[str, float] = field(default_factory=dict)
    rrf_k: int = 60
    candidates: int = 100


class HybridRetriever:
    """Each ranker hands ``fusion.candidates`` ids to the fusion; the fused top ``k`` become
    hits."""

    def __init__(
        self,
        store: Store,
        rankers: Sequence[Ranker],
        *,
        fusion: Fusion | None = None,
        mmr_lambda: float | None = None,
        embedder: Embedder | None = None,
        vector_first: bool = False,
    ) -> None:
        self._store = store
        self._rankers = list(rankers)
        self._fusion = fusion or Fusion()
        self._weights = dict(self._fusion.weights)
        self._candidates = self._fusion.candidates
        self._mmr_lambda = mmr_lambda
        self._embedder = embedder
        self._vector_first = vector_first
        """Compute the query's vector before any ranker runs: for a store that ranks in this
        process, where the model's threads and the lexical rankers would share the cores (at
        100k chunks p95 65.7 → 54.5 ms, bench/scale.py); a database ranks elsewhere, and its
        lexical search overlaps the model."""
        self._beside = ThreadPoolExecutor(max_workers=BESIDE, thread_name_prefix="shirabe-query")
        """Where the query's vector is computed and the rankers that need it run, while the
        lexical rankers run on the caller's thread (one thread a search, for concurrent
        searches in a server)."""

    def rankings(self, query: Query, k: int) -> dict[str, list[ScoredId]]:
        """Chunk-level rankers find candidates; sentence-level rankers re-score their union.
        The chunk-level rankers that need the query's vector run on a thread of their own,
        beside those that do not (computing the vector there too, unless ``vector_first``):
        the model, numpy and a database search run outside the interpreter's lock."""
        n = max(k, self._candidates)
        chunk_level = [r for r in self._rankers if r.level == "chunk"]
        by_vector = [r for r in chunk_level if r.uses_vector]
        if self._vector_first and by_vector:
            query.vector  # noqa: B018 (computed once, here, before the rankers run)
        beside = (
            self._beside.submit(lambda: {r.name: r.rank(query, n) for r in by_vector})
            if by_vector
            else None
        )
        first = {r.name: r.rank(query, n) for r in chunk_level if not r.uses_vector}
        if beside is not None:
            first |= beside.result()
        pool = sorted({s.chunk_id for ranking in first.values() for s in ranking}) or None
        second = {
            r.name: r.rank(query, n if pool is None else len(pool), within=pool)
            for r in self._rankers
            if r.level != "chunk"
        }
        merged = first | second
        return {r.name: merged[r.name] for r in self._rankers}

    def complete_lists(self, rankings: Mapping[str, Sequence[ScoredId]], k: int) -> frozenset[str]:
        """Rankers that returned fewer ids than asked for, so listed every match they had."""
        n = max(k, self._candidates)
        pool = {s.chunk_id for r in self._rankers if r.level == "chunk" for s in rankings[r.name]}
        asked = {r.name: n if r.level == "chunk" or not pool else len(pool) for r in self._rankers}
        return frozenset(name for name, ranking in rankings.items() if len(ranking) < asked[name])

    def fuse(
        self, rankings: Mapping[str, Sequence[ScoredId]], k: int | None = None
    ) -> list[tuple[int, float]]:
        """One fused list; with ``k`` (as passed to :meth:`rankings`), short lists count as
        complete (see :func:`shirabe.retrieval.fusion.zscore_fusion`)."""
        pairs = {
            name: [(s.chunk_id, s.score) for s in ranking] for name, ranking in rankings.items()
        }
        if self._fusion.method == "rrf":
            return reciprocal_rank_fusion(pairs, k=self._fusion.rrf_k, weights=self._weights)
        if self._fusion.method == "convex":
            return convex_fusion(pairs, weights=self._weights)
        complete = self.complete_lists(rankings, k) if k is not None else frozenset()
        return zscore_fusion(pairs, weights=self._weights, complete=complete)

    def retrieve(self, query: Query, k: int) -> list[Hit]:
        rankings = self.rankings(query, k)
        fused = self.fuse(rankings, k)
        if self._mmr_lambda is None or self._embedder is None:
            return hits_for(self._store, fused[:k], rankings)
        pool = hits_for(self._store, fused[: max(3 * k, k)], rankings)
        return self._diversify(pool, k)

    def _diversify(self, pool: list[Hit], k: int) -> list[Hit]:
        assert self._embedder is not None and self._mmr_lambda is not None
        name = self._embedder.name
        found = own_vectors(
            [h.chunk for h in pool], lambda keys: self._store.get_embeddings(name, keys)
        )
        present = [v for v in found if v is not None]
        if len(present) < len(found):
            return pool[:k]
        vectors = np.vstack(present).astype(np.float32)
        order = mmr(vectors, [h.score for h in pool], lambda_=self._mmr_lambda, k=k)
        return [pool[i] for i in order]
