"""The semantic signal: cosine similarity of embeddings, per chunk or per sentence."""

from __future__ import annotations

from collections.abc import Sequence

from shirabe.records import Hit, ScoredId
from shirabe.retrieval.hits import hits_for
from shirabe.retrieval.query import Query
from shirabe.stores.protocol import Level, Store


class DenseRetriever:
    """``level="sentence"`` scores a chunk by its most similar sentence."""

    def __init__(self, store: Store, *, level: Level = "chunk") -> None:
        self._store = store
        self.level: Level = level
        self.name = "dense" if level == "chunk" else "dense_sentence"
        self.uses_vector = True

    def rank(self, query: Query, k: int, within: Sequence[int] | None = None) -> list[ScoredId]:
        return self._store.search_dense(
            query.vector, k, query.filters, level=self.level, within=within
        )

    def retrieve(self, query: Query, k: int) -> list[Hit]:
        ranked = self.rank(query, k)
        return hits_for(self._store, [(s.chunk_id, s.score) for s in ranked], {self.name: ranked})
