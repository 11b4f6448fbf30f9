"""Builds the retriever named in the settings."""

from __future__ import annotations

from shirabe.embedders.protocol import Embedder
from shirabe.retrieval.bm25 import BM25Retriever
from shirabe.retrieval.dense import DenseRetriever
from shirabe.retrieval.hybrid import Fusion, HybridRetriever
from shirabe.retrieval.protocol import Retriever
from shirabe.settings import RetrievalSettings
from shirabe.stores.protocol import Store


def make_retriever(settings: RetrievalSettings, store: Store, embedder: Embedder) -> Retriever:
    if settings.retriever == "bm25":
        return BM25Retriever(store)
    if settings.retriever == "dense":
        return DenseRetriever(store)
    rankers: list[BM25Retriever | DenseRetriever] = [
        BM25Retriever(store),
        BM25Retriever(store, level="sentence"),
        DenseRetriever(store),
        DenseRetriever(store, level="sentence"),
    ]
    weights = {
        "bm25": settings.bm25_weight,
        "bm25_sentence": settings.bm25_sentence_weight,
        "dense": settings.dense_weight,
        "dense_sentence": settings.dense_sentence_weight,
    }
    return HybridRetriever(
        store,
        [r for r in rankers if weights[r.name] > 0],
        fusion=Fusion(
            settings.fusion, weights, rrf_k=settings.rrf_k, candidates=settings.candidates
        ),
        mmr_lambda=settings.mmr_lambda,
        embedder=embedder,
        # a store plugin written before the attribute ranks elsewhere, as PostgreSQL does
        vector_first=store.ranks_in_process,
    )
