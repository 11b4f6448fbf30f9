"""Builds the chunker described by the settings."""

from __future__ import annotations

from shirabe.chunking.markdown import MarkdownChunker
from shirabe.chunking.protocol import Chunker
from shirabe.settings import IngestSettings


def make_chunker(options: IngestSettings) -> Chunker:
    return MarkdownChunker(
        size=options.chunk_size,
        overlap=options.chunk_overlap,
        summaries=options.section_summaries,
    )
