"""Builds the chunker described by the settings."""

from __future__ import annotations

from shirabe.chunking.markdown import MarkdownChunker
from shirabe.chunking.protocol import Chunker
from shirabe.settings import Settings


def make_chunker(settings: Settings) -> Chunker:
    return MarkdownChunker(
        size=settings.chunk_size,
        overlap=settings.chunk_overlap,
        summaries=settings.section_summaries,
    )
