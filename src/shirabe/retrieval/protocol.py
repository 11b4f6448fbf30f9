"""Retriever interfaces: rankers produce scored ids, retrievers produce hits."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from shirabe.records import Hit, ScoredId
from shirabe.retrieval.query import Query
from shirabe.stores.protocol import Level


class Ranker(Protocol):
    """One retrieval signal: scored chunk ids, best first, filters applied before ranking.

    Chunk-level rankers search the whole index; sentence-level ones re-score the candidates
    the chunk-level ones found (``within``), which keeps large indexes fast.
    """

    @property
    def name(self) -> str: ...

    @property
    def level(self) -> Level: ...

    @property
    def uses_vector(self) -> bool:
        """Whether :meth:`rank` reads the query's vector (such rankers run on a thread of their
        own, where the vector is computed, beside those that do not)."""
        ...

    def rank(self, query: Query, k: int, within: Sequence[int] | None = None) -> list[ScoredId]: ...


class Retriever(Protocol):
    """Turns a query into hits with chunks and the evidence behind each rank."""

    def retrieve(self, query: Query, k: int) -> list[Hit]: ...
