"""The query's vector is computed, and the rankers that need it run, while the rankers that do
not need it run."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import cast

import numpy as np
import pytest

from shirabe.embedders.protocol import Matrix, Vector
from shirabe.records import ScoredId
from shirabe.retrieval.hybrid import HybridRetriever
from shirabe.retrieval.query import Query
from shirabe.stores.protocol import Level, Store
from shirabe.tokenizers.protocol import Tokenizer

WAIT = 10.0


class GatedEmbedder:
    """Embeds a question only once ``lexical_ran`` is set: run before the lexical ranker on
    the same thread, it would wait in vain."""

    name = "gated"
    dim = 2

    def __init__(self) -> None:
        self.lexical_ran = threading.Event()
        self.calls: list[str] = []

    def embed_passages(self, texts: Sequence[str]) -> Matrix:
        return np.zeros((len(texts), self.dim), np.float32)

    def embed_query(self, text: str) -> Vector:
        self.calls.append(threading.current_thread().name)
        if not self.lexical_ran.wait(WAIT):
            raise TimeoutError("the vector was asked for before the lexical ranker ran")
        return np.ones(self.dim, np.float32)


class Ranker:
    def __init__(self, name: str, level: Level, uses_vector: bool, ran: threading.Event) -> None:
        self.name, self.level, self.uses_vector = name, level, uses_vector
        self._ran = ran
        self.seen: list[Vector] = []
        self.threads: list[str] = []

    def rank(self, query: Query, k: int, within: Sequence[int] | None = None) -> list[ScoredId]:
        self.threads.append(threading.current_thread().name)
        if self.uses_vector:
            self.seen.append(query.vector)
        else:
            self._ran.set()
        return [ScoredId(1, 1.0)]


def query(embedder: GatedEmbedder) -> Query:
    return Query("質問", tokenizer=cast(Tokenizer, None), embedder=embedder)


def test_the_vector_is_computed_beside_the_lexical_rankers_once() -> None:
    embedder = GatedEmbedder()
    ran = embedder.lexical_ran
    dense = Ranker("dense", "chunk", True, ran)
    sentence = Ranker("dense_sentence", "sentence", True, ran)
    lexical = Ranker("bm25", "chunk", False, ran)
    # the dense ranker is listed first; it waits for its vector while the lexical one runs
    retriever = HybridRetriever(cast(Store, None), [dense, sentence, lexical])

    rankings = retriever.rankings(query(embedder), 10)

    assert list(rankings) == ["dense", "dense_sentence", "bm25"]
    assert len(embedder.calls) == 1 and embedder.calls[0].startswith("shirabe-query")
    assert dense.threads[0].startswith("shirabe-query")
    assert sentence.threads == lexical.threads == [threading.current_thread().name]
    assert [v.tolist() for v in dense.seen + sentence.seen] == [[1.0, 1.0], [1.0, 1.0]]


def test_a_failed_embedding_reaches_the_caller() -> None:
    embedder = GatedEmbedder()
    embedder.lexical_ran.wait = lambda timeout=None: False  # type: ignore[method-assign]
    dense = Ranker("dense", "chunk", True, embedder.lexical_ran)
    retriever = HybridRetriever(cast(Store, None), [dense])
    with pytest.raises(TimeoutError):
        retriever.rankings(query(embedder), 10)


def test_a_given_vector_is_not_computed_again() -> None:
    embedder = GatedEmbedder()
    q = Query(
        "質問",
        tokenizer=cast(Tokenizer, None),
        embedder=embedder,
        vector=np.zeros(2, np.float32),
    )
    dense = Ranker("dense", "chunk", True, embedder.lexical_ran)
    HybridRetriever(cast(Store, None), [dense]).rankings(q, 10)
    assert embedder.calls == [] and [v.tolist() for v in dense.seen] == [[0.0, 0.0]]


class MeetingEmbedder(GatedEmbedder):
    """Embeds a question only when another search's question is being embedded at once."""

    def __init__(self) -> None:
        super().__init__()
        self.meet = threading.Barrier(2, timeout=WAIT)

    def embed_query(self, text: str) -> Vector:
        self.meet.wait()
        return np.ones(self.dim, np.float32)


def test_concurrent_searches_compute_their_vectors_at_once() -> None:
    """Two searches at once (a server's): with one thread for every search's vector, the
    second question would wait for the first to be embedded, which waits for the second."""
    embedder = MeetingEmbedder()
    dense = Ranker("dense", "chunk", True, threading.Event())
    retriever = HybridRetriever(cast(Store, None), [dense])
    errors: list[BaseException] = []

    def search() -> None:
        try:
            retriever.rankings(query(embedder), 10)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=search) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(3 * WAIT)
    assert errors == [] and len(dense.seen) == 2
