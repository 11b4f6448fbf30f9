"""The semantic signal: cosine similarity of embeddings (a chunk scores its best vector)."""

from __future__ import annotations

from shirabe.query import Query
from shirabe.records import Hit, ScoredId
from shirabe.retrievers.hits import hits_for
from shirabe.stores.protocol import Store


class DenseRetriever:
    name = "dense"

    def __init__(self, store: Store) -> None:
        self._store = store

    def rank(self, query: Query, k: int) -> list[ScoredId]:
        return self._store.search_dense(query.vector, k, query.filters)

    def retrieve(self, query: Query, k: int) -> list[Hit]:
        ranked = self.rank(query, k)
        return hits_for(self._store, [(s.chunk_id, s.score) for s in ranked], {self.name: ranked})
