"""Turning fused ids into hits that carry every retriever's rank and score."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

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
