"""The chunker interface: a document in, retrievable chunks out."""

from __future__ import annotations

from typing import Protocol

from shirabe.records import Chunk, Document


class Chunker(Protocol):
    signature: str
    """Names how this chunker cuts, beyond the settings (which the ingest already tracks): a
    file indexed under another signature is cut again on the next ingest. Empty for the
    built-in chunker; a custom one changes it whenever its cuts change (one without the
    attribute is read as empty)."""

    def chunk(self, document: Document) -> list[Chunk]: ...
