"""Persistence and search of chunks."""

from shirabe.stores.factory import make_store
from shirabe.stores.protocol import Filters, IndexedChunk, SourceRecord, Store

__all__ = ["Filters", "IndexedChunk", "SourceRecord", "Store", "make_store"]
