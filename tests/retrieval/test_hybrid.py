"""The query's vector is computed while the rankers that do not need it run."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
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

    def rank(self, query: Query, k: int, within: Sequence[int] | None = None) -> list[ScoredId]:
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
    # the dense ranker is listed first; it still runs after the lexical one
    retriever = HybridRetriever(cast(Store, None), [dense, sentence, lexical])

    rankings = retriever.rankings(query(embedder), 10)

    assert list(rankings) == ["dense", "dense_sentence", "bm25"]
    assert len(embedder.calls) == 1 and embedder.calls[0].startswith("shirabe-query")
    assert [v.tolist() for v in dense.seen + sentence.seen] == [[1.0, 1.0], [1.0, 1.0]]


def test_a_failed_embedding_reaches_the_caller() -> None:
    embedder = GatedEmbedder()  # never released: no lexical ranker
    q = query(embedder)
    with ThreadPoolExecutor(max_workers=1) as pool:
        embedder.lexical_ran.wait = lambda timeout=None: False  # type: ignore[method-assign]
        q.embed_on(pool)
        with pytest.raises(TimeoutError):
            _ = q.vector


def test_a_given_vector_is_not_computed_again() -> None:
    embedder = GatedEmbedder()
    q = Query(
        "質問",
        tokenizer=cast(Tokenizer, None),
        embedder=embedder,
        vector=np.zeros(2, np.float32),
    )
    with ThreadPoolExecutor(max_workers=1) as pool:
        q.embed_on(pool)
    assert embedder.calls == [] and q.vector.tolist() == [0.0, 0.0]
