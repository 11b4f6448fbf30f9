"""The chunker interface: a document in, retrievable chunks out."""

from __future__ import annotations

from typing import Protocol

from shirabe.records import Chunk, Document


class Chunker(Protocol):
    def chunk(self, document: Document) -> list[Chunk]: ...
