"""Turning fused ids into hits that carry every retriever's rank and score."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from shirabe.records import Hit, ScoredId
from shirabe.retrieval.fusion import reciprocal_rank_fusion
from shirabe.stores.protocol import Store


def hits_for(
    store: Store,
    fused: Sequence[tuple[int, float]],
    rankings: Mapping[str, Sequence[ScoredId]],
) -> list[Hit]:
    """Load the chunks of ``fused`` (in order); ids whose chunk vanished are skipped."""
    chunks = store.get_chunks([cid for cid, _ in fused])
    positions = {
        name: {s.chunk_id: (rank, s.score) for rank, s in enumerate(ranking, start=1)}
        for name, ranking in rankings.items()
    }
    hits: list[Hit] = []
    for cid, score in fused:
        chunk = chunks.get(cid)
        if chunk is None:
            continue
        hit = Hit(chunk=chunk, score=score)
        for name, table in positions.items():
            if cid in table:
                hit.ranks[name], hit.scores[name] = table[cid]
        hits.append(hit)
    return hits


def fuse_hits(
    lists: Sequence[Sequence[Hit]],
    k: int,
    *,
    rrf_k: int = 60,
    weights: Sequence[float] | None = None,
) -> list[Hit]:
    """Hit lists for several wordings of one question, the question's own first, fused by
    weighted reciprocal rank.

    A chunk the first list found keeps that list's evidence (ranks, scores against the
    question itself, which the refusal gate reads); others keep the evidence of the list that
    ranked them best. The fused score becomes the score; ties keep the order of first
    appearance.
    """
    names = [str(i) for i in range(len(lists))]
    pairs = {n: [(h.chunk_id, h.score) for h in hits] for n, hits in zip(names, lists, strict=True)}
    best: dict[int, tuple[int, Hit]] = {}
    for position, hits in enumerate(lists):
        for rank, hit in enumerate(hits):
            key = (0 if position == 0 else 1) * 10**6 + rank
            if hit.chunk_id not in best or key < best[hit.chunk_id][0]:
                best[hit.chunk_id] = (key, hit)
    table = dict(zip(names, weights, strict=True)) if weights is not None else None
    fused = reciprocal_rank_fusion(pairs, k=rrf_k, weights=table)
    return [replace(best[cid][1], score=score) for cid, score in fused[:k]]
