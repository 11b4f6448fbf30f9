"""Builds the retriever named in the settings."""

from __future__ import annotations

from shirabe.embedders.protocol import Embedder
from shirabe.retrievers.bm25 import BM25Retriever
from shirabe.retrievers.dense import DenseRetriever
from shirabe.retrievers.hybrid import HybridRetriever
from shirabe.retrievers.protocol import Retriever
from shirabe.settings import Settings
from shirabe.stores.protocol import Store


def make_retriever(settings: Settings, store: Store, embedder: Embedder) -> Retriever:
    if settings.retriever == "bm25":
        return BM25Retriever(store)
    if settings.retriever == "dense":
        return DenseRetriever(store)
    return HybridRetriever(
        store,
        [BM25Retriever(store), DenseRetriever(store)],
        fusion=settings.fusion,
        weights={"bm25": settings.bm25_weight, "dense": settings.dense_weight},
        rrf_k=settings.rrf_k,
        candidates=settings.candidates,
        mmr_lambda=settings.mmr_lambda,
        embedder=embedder,
    )
