"""An :class:`~shirabe.indexing.ingest.Ingestor` made from the settings and the index's parts."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from shirabe.access.map import AccessMap
from shirabe.chunking.protocol import Chunker
from shirabe.embedders.protocol import Embedder
from shirabe.indexing.ingest import Change, Ingestor
from shirabe.indexing.parts import IngestOptions, IngestParts
from shirabe.indexing.tags import cut_signature
from shirabe.indexing.writers import IngestWriters
from shirabe.loaders.protocol import LoadOptions
from shirabe.settings import Settings
from shirabe.stores.protocol import Store
from shirabe.text.synonyms import Synonyms
from shirabe.tokenizers.protocol import Tokenizer


def make_ingestor(
    settings: Settings,
    *,
    store: Store,
    chunker: Chunker,
    tokenizer: Tokenizer,
    embedder: Embedder,
    synonyms: Synonyms,
    access: AccessMap,
    writers: IngestWriters,
    root: Path,
    skip: Sequence[Path] = (),
    on_change: Change | None = None,
) -> Ingestor:
    """An ingest of files below ``root`` (never below ``skip``), reporting uploads,
    replacements, deletions and changed readers to ``on_change``."""
    parts = IngestParts(
        store=store,
        chunker=chunker,
        tokenizer=tokenizer,
        embedder=embedder,
        synonyms=synonyms,
        access=access,
        enricher=writers.enricher,
        cleaner=writers.cleaner,
    )
    return Ingestor(parts, ingest_options(settings), root=root, skip=skip, on_change=on_change)


def ingest_options(settings: Settings) -> IngestOptions:
    """How files are read and indexed, from the settings' ``ingest`` and ``limits``."""
    ingest, limits = settings.ingest, settings.limits
    return IngestOptions(
        max_file_bytes=limits.max_file_bytes,
        sentence_vectors=ingest.sentence_vectors,
        pooled_chunk_vectors=ingest.pooled_chunk_vectors,
        refresh_every_files=ingest.refresh_every_files,
        load_options=LoadOptions(
            passwords=ingest.passwords,
            max_unzipped_bytes=limits.max_unzipped_bytes,
            max_loader_memory=limits.max_loader_memory,
            ocr=ingest.ocr,
            ocr_languages=ingest.ocr_languages,
        ),
        load_timeout=limits.load_timeout,
        load_total=limits.max_load_seconds,
        cut=cut_signature(settings.ingest),
    )
