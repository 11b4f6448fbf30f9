"""The generator interface: a question and its hits in, a cited answer out."""

from __future__ import annotations

from typing import Protocol

from shirabe.query import Query
from shirabe.records import Answer, Hit


class Generator(Protocol):
    @property
    def name(self) -> str: ...

    def generate(self, query: Query, hits: list[Hit]) -> Answer: ...
