"""The store interface: the source of truth for files, chunks and vectors, and their search."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from shirabe.access.accounts import Database
from shirabe.embedders.protocol import Vector
from shirabe.records import Chunk, Filters, IndexStatus, IngestReport, ScoredId, SourceInfo

Level = Literal["chunk", "sentence"]

MAX_ID = 2**63 - 1
"""Ids are 64-bit signed integers in every store."""


@dataclass(frozen=True, slots=True)
class SourceRecord:
    """What the store keeps about a file, besides its chunks."""

    path: str
    sha256: str
    size: int
    mtime: float
    metadata: Mapping[str, str] = field(default_factory=dict)
    warnings: Sequence[str] = ()


@dataclass(frozen=True, slots=True)
class IndexedChunk:
    """A chunk ready for storage: its BM25 terms and the keys of its vectors.

    ``vector_keys`` name rows of the embedding cache; the first is the chunk's own vector, the
    rest (if any) are its sentences, in the order of ``sentence_tokens``.
    """

    chunk: Chunk
    tokens: Sequence[str]
    vector_keys: Sequence[str]
    sentence_tokens: Sequence[Sequence[str]] = ()


class Store(Protocol):
    """Everything the engine persists and searches.

    Writes are atomic per file: after ``replace_source`` returns, the file's old chunks are gone
    and the new ones are in, or (on a crash) nothing changed. Searches see whole files only.
    """

    ranks_in_process: bool
    """True when searches rank in this process (on its cores) rather than in a database
    server: the hybrid retriever then embeds the query before its rankers run, not beside them
    (a store without the attribute is read as False)."""

    def bind(self, *, embedding_model: str, embedding_dim: int, tokenizer: str) -> bool:
        """Record (or check) the model and tokenizer; refuses to mix embedding models.

        Returns True when the stored terms were made by another tokenizer, in which case the
        caller must ``retokenize``.
        """
        ...

    def retokenize(
        self, terms: Callable[[Chunk], tuple[Sequence[str], Sequence[Sequence[str]]]]
    ) -> None:
        """Recompute every chunk's terms and rebuild the lexical index."""
        ...

    def get_source(self, path: str) -> SourceInfo | None: ...

    def get_source_by_id(self, source_id: int) -> SourceInfo | None:
        """The file with this id (the id the API shows), looked up by key."""
        ...

    def list_sources(self, under: str | None = None) -> list[SourceInfo]: ...

    def replace_source(self, source: SourceRecord, chunks: Sequence[IndexedChunk]) -> None: ...

    def record_failure(self, source: SourceRecord, reason: str) -> None:
        """Note that a file failed; chunks indexed from an earlier version stay searchable."""
        ...

    def touch_source(self, source: SourceRecord) -> None:
        """Update size/mtime of a file whose content is unchanged."""
        ...

    def remove_source(self, path: str) -> bool: ...

    def get_embeddings(self, model: str, keys: Sequence[str]) -> dict[str, Vector]: ...

    def put_embeddings(self, model: str, vectors: Mapping[str, Vector]) -> None: ...

    def updating(self) -> AbstractContextManager[None]:
        """The index's writer lock, held for a whole ingest run so that ingests take turns.

        When another process (or thread) holds it, this waits for it (the store's update
        timeout, :data:`~shirabe.stores.common.UPDATE_TIMEOUT` unless configured), logging a
        warning that it waits, and then raises IndexBusyError: a cron run and a manual run
        thus follow each other instead of one failing, and neither waits forever. Searches and
        single reads never take this lock.
        """
        ...

    def loading(self) -> AbstractContextManager[None]:
        """A bulk load (an ingest's files, inside :meth:`updating`): the store may defer the
        upkeep of its search indexes to the end of the block, where it rebuilds them at once.
        Searches during the block stay correct but may be slower."""
        ...

    def refresh(self, *, wait: bool = True) -> None:
        """Bring the search indexes up to date with the stored chunks.

        With ``wait=False`` a reader that finds another process updating the index searches the
        previous snapshot instead of blocking.
        """
        ...

    def optimize(self) -> None:
        """Compact the search indexes into as few pieces as possible (after large ingests)."""
        ...

    def search_lexical(
        self,
        terms: Mapping[str, float] | Sequence[str],
        k: int,
        filters: Filters | None = None,
        *,
        level: Level = "chunk",
        within: Sequence[int] | None = None,
    ) -> list[ScoredId]:
        """BM25 over chunks, or over sentences with each chunk scored by its best sentence.

        ``terms`` maps query terms to weights; a plain list weighs each occurrence once.
        ``within`` limits scoring to those chunks (re-scoring candidates cheaply).
        """
        ...

    def document_frequencies(self, terms: Sequence[str]) -> dict[str, int]:
        """How many chunks contain each term (0 for terms the documents never use)."""
        ...

    def search_dense(
        self,
        vector: Vector,
        k: int,
        filters: Filters | None = None,
        *,
        level: Level = "chunk",
        within: Sequence[int] | None = None,
    ) -> list[ScoredId]:
        """Cosine over chunk vectors, or over sentence vectors (best sentence per chunk)."""
        ...

    def get_chunks(self, ids: Sequence[int]) -> dict[int, Chunk]: ...

    def source_chunks(self, path: str) -> list[Chunk]:
        """A file's chunks: its summary first, then the rest in document order."""
        ...

    def record_ingest(self, report: IngestReport) -> None: ...

    def ingest_runs(self, limit: int = 20) -> list[dict[str, object]]:
        """The newest ingest runs first: when each finished, its seconds and its counts."""
        ...

    def status(self) -> IndexStatus: ...

    def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Migration:
    """What bringing a store's schema up to date did."""

    applied: list[int]
    """The numbered migrations that ran, in order."""
    version: int
    """The schema version now."""
    embeddings: int = 0
    """Cached embeddings copied in from another index."""


class Backend(Protocol):
    """A kind of store as the engine sees it: the index, the accounts database, migrations.

    Registered under the ``shirabe.stores`` entry points as a callable taking the settings;
    :func:`shirabe.stores.registry.make_backend` chooses one.
    """

    def open_store(self) -> Store:
        """The index, migrated to the newest schema."""
        ...

    def open_accounts(self) -> Database:
        """Where users and API tokens are kept."""
        ...

    def migrate(self, *, embeddings_from: Path | None = None) -> Migration:
        """Apply the schema migrations not yet applied; with ``embeddings_from``, also copy the
        embedding cache of the embedded index in that folder (nothing is embedded twice)."""
        ...
