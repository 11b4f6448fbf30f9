"""Chooses the retriever named in the settings among the ``shirabe.retrievers`` entry points.

A retriever plugin is a callable taking the ``retrieval`` section, the store and the embedder,
and returning a :class:`~shirabe.retrieval.protocol.Retriever`, registered as, e.g.::

    [project.entry-points."shirabe.retrievers"]
    mine = "my_package:from_settings"
"""

from __future__ import annotations

from collections.abc import Callable

from shirabe.embedders.protocol import Embedder
from shirabe.plugins import Registry
from shirabe.retrieval.bm25 import BM25Retriever
from shirabe.retrieval.dense import DenseRetriever
from shirabe.retrieval.hybrid import Fusion, HybridRetriever
from shirabe.retrieval.protocol import Retriever
from shirabe.settings import RetrievalSettings
from shirabe.stores.protocol import Store

RetrieverFactory = Callable[[RetrievalSettings, Store, Embedder], Retriever]
RETRIEVERS: Registry[RetrieverFactory] = Registry("retrievers")


def make_retriever(settings: RetrievalSettings, store: Store, embedder: Embedder) -> Retriever:
    """The retriever ``settings.retriever`` names, over ``store``."""
    return RETRIEVERS.load(settings.retriever)(settings, store, embedder)


def bm25(_settings: RetrievalSettings, store: Store, _embedder: Embedder) -> Retriever:
    """Passages by BM25 over their Sudachi terms alone."""
    return BM25Retriever(store)


def dense(_settings: RetrievalSettings, store: Store, _embedder: Embedder) -> Retriever:
    """Passages by the cosine of their vectors alone."""
    return DenseRetriever(store)


def hybrid(settings: RetrievalSettings, store: Store, embedder: Embedder) -> Retriever:
    """BM25 and vectors, of whole passages and of their best sentences, fused."""
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
