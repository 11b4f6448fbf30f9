"""How an :class:`~shirabe.indexing.ingest.Ingestor` reads and indexes files, from the settings."""

from __future__ import annotations

from shirabe.indexing.parts import IngestOptions
from shirabe.indexing.tags import cut_signature
from shirabe.loaders.protocol import LoadOptions
from shirabe.settings import Settings


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
