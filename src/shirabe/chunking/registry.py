"""Chooses the chunker named in the settings among the ``shirabe.chunkers`` entry points.

A chunker plugin is a callable taking the ``ingest`` section and returning a
:class:`~shirabe.chunking.protocol.Chunker`, registered as, e.g.::

    [project.entry-points."shirabe.chunkers"]
    mine = "my_package:from_settings"
"""

from __future__ import annotations

from collections.abc import Callable

from shirabe.chunking.markdown import MarkdownChunker
from shirabe.chunking.protocol import Chunker
from shirabe.plugins import Registry
from shirabe.settings import IngestSettings

CHUNKERS: Registry[Callable[[IngestSettings], Chunker]] = Registry("chunkers")


def make_chunker(options: IngestSettings) -> Chunker:
    """The chunker ``options.chunker`` names, given ``options`` (the ``ingest`` section)."""
    return CHUNKERS.load(options.chunker)(options)


def markdown(options: IngestSettings) -> Chunker:
    """Heading-aware chunks of the Markdown every loader gives, with section summaries."""
    return MarkdownChunker(
        size=options.chunk_size,
        overlap=options.chunk_overlap,
        summaries=options.section_summaries,
    )
