"""The lexical signal: BM25 over Japanese morphological tokens, per chunk or per sentence."""

from __future__ import annotations

from collections.abc import Sequence

from shirabe.records import Hit, ScoredId
from shirabe.retrieval.hits import hits_for
from shirabe.retrieval.query import Query
from shirabe.stores.protocol import Level, Store


class BM25Retriever:
    """``level="sentence"`` scores a chunk by its best-matching sentence."""

    def __init__(self, store: Store, *, level: Level = "chunk") -> None:
        self._store = store
        self.level: Level = level
        self.name = "bm25" if level == "chunk" else "bm25_sentence"
        self.uses_vector = False

    def rank(self, query: Query, k: int, within: Sequence[int] | None = None) -> list[ScoredId]:
        return self._store.search_lexical(
            query.term_weights, k, query.filters, level=self.level, within=within
        )

    def retrieve(self, query: Query, k: int) -> list[Hit]:
        ranked = self.rank(query, k)
        return hits_for(self._store, [(s.chunk_id, s.score) for s in ranked], {self.name: ranked})
