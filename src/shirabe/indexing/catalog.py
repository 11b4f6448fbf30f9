"""What a reader may see of the index, decided in one place for every face.

The documents a reader may read, their categories, one document or passage by id, and the
filter a reader's search runs under. A document or passage the reader may not read is missing,
exactly like one that does not exist, so that no probe by id tells them apart.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from shirabe.access.map import restrict
from shirabe.records import Chunk, Filters, Reader, SourceInfo
from shirabe.stores.protocol import MAX_ID, Store
from shirabe.text.paths import canonical_name


class Catalog:
    """The index as each reader sees it."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def readable(self, reader: Reader) -> list[SourceInfo]:
        """The documents ``reader`` may read (failed ones too: their failures are theirs)."""
        return [s for s in self._store.list_sources() if reader.may_read(s.groups)]

    def document(self, document_id: int, reader: Reader) -> SourceInfo | None:
        """The document of ``document_id``, if ``reader`` may read it."""
        if not 0 < document_id <= MAX_ID:
            return None
        source = self._store.get_source_by_id(document_id)
        return source if source is not None and reader.may_read(source.groups) else None

    def source(self, key: str, reader: Reader) -> SourceInfo | None:
        """The document stored under ``key`` (a citation's source), if ``reader`` may read it."""
        source = self._store.get_source(key)
        return source if source is not None and reader.may_read(source.groups) else None

    def passage(self, chunk_id: int, reader: Reader) -> tuple[Chunk, SourceInfo] | None:
        """The passage of ``chunk_id`` and its document, if ``reader`` may read it."""
        if not 0 < chunk_id <= MAX_ID:
            return None
        chunk = self._store.get_chunks([chunk_id]).get(chunk_id)
        source = self._store.get_source(chunk.source) if chunk is not None else None
        if chunk is None or source is None or not reader.may_read(source.groups):
            return None
        return chunk, source

    def passages(self, source: SourceInfo) -> list[Chunk]:
        """A document's passages in order, its summary first (for a document already found
        readable by :meth:`document`, :meth:`passage` or :meth:`readable`)."""
        return self._store.source_chunks(source.path)

    @staticmethod
    def categories(readable: Iterable[SourceInfo]) -> dict[str, int]:
        """The categories of the documents read without failure, with their files, by name."""
        counts: dict[str, int] = {}
        for s in readable:
            if s.status == "ok" and s.category:
                counts[s.category] = counts.get(s.category, 0) + 1
        return dict(sorted(counts.items()))

    @staticmethod
    def scope(reader: Reader | None, filters: Filters | None = None) -> Filters | None:
        """``filters`` (their categories in canonical form: ``⼈事`` is ``人事``) narrowed to
        what ``reader`` may read; unchanged for admins, or without a reader."""
        if filters is not None and filters.categories:
            chosen = frozenset(canonical_name(c) for c in filters.categories)
            filters = replace(filters, categories=chosen)
        return restrict(filters, reader)
