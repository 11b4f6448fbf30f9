"""Turning fused ids into hits that carry every retriever's rank and score."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from shirabe.fusion import reciprocal_rank_fusion
from shirabe.records import Hit, ScoredId
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


def fuse_hits(lists: Sequence[Sequence[Hit]], k: int, *, rrf_k: int = 60) -> list[Hit]:
    """Hit lists for several wordings of one question, fused by reciprocal rank.

    Each chunk keeps the evidence (ranks, scores) from the list that ranked it best, with the
    fused score as its score; ties keep the order of first appearance.
    """
    pairs = {str(i): [(h.chunk_id, h.score) for h in hits] for i, hits in enumerate(lists)}
    best: dict[int, tuple[int, Hit]] = {}
    for hits in lists:
        for rank, hit in enumerate(hits):
            if hit.chunk_id not in best or rank < best[hit.chunk_id][0]:
                best[hit.chunk_id] = (rank, hit)
    fused = reciprocal_rank_fusion(pairs, k=rrf_k)
    return [replace(best[cid][1], score=score) for cid, score in fused[:k]]
