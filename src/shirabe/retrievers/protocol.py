"""Retriever interfaces: rankers produce scored ids, retrievers produce hits."""

from __future__ import annotations

from typing import Protocol

from shirabe.query import Query
from shirabe.records import Hit, ScoredId


class Ranker(Protocol):
    """One retrieval signal: scored chunk ids, best first, filters applied before ranking."""

    @property
    def name(self) -> str: ...

    def rank(self, query: Query, k: int) -> list[ScoredId]: ...


class Retriever(Protocol):
    """Turns a query into hits with chunks and the evidence behind each rank."""

    def retrieve(self, query: Query, k: int) -> list[Hit]: ...
