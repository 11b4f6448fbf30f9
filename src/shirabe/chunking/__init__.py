"""Turning loaded documents into retrievable chunks."""

from shirabe.chunking.factory import make_chunker
from shirabe.chunking.markdown import MarkdownChunker
from shirabe.chunking.protocol import Chunker

__all__ = ["Chunker", "MarkdownChunker", "make_chunker"]
