"""Rows of the ``sources`` and ``chunks`` tables and the records they hold, both ways."""

from __future__ import annotations

import json
import sqlite3
import zlib
from collections.abc import Sequence

from shirabe.records import Chunk, SourceInfo
from shirabe.stores.protocol import IndexedChunk

INSERT_CHUNK = """
    INSERT INTO chunks (source_id, position, text, heading_path, start_offset, end_offset,
        locator, is_summary, metadata, terms, vector_keys)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""


def source_from_row(row: sqlite3.Row) -> SourceInfo:
    """A ``sources`` row (with its chunk count as ``chunks``) as a record."""
    return SourceInfo(
        path=row["path"],
        sha256=row["sha256"],
        size=row["size"],
        mtime=row["mtime"],
        status=row["status"],
        error=row["error"],
        chunks=row["chunks"],
        ingested_at=row["ingested_at"],
        warnings=tuple(json.loads(row["warnings"])),
        metadata=json.loads(row["metadata"]),
        id=row["id"],
    )


def chunk_from_row(r: sqlite3.Row) -> Chunk:
    """A ``chunks`` row (with its file's ``path``) as a record."""
    return Chunk(
        text=r["text"],
        source=r["path"],
        heading_path=tuple(json.loads(r["heading_path"])),
        position=r["position"],
        start=r["start_offset"],
        end=r["end_offset"],
        locator=json.loads(r["locator"]),
        is_summary=bool(r["is_summary"]),
        metadata=json.loads(r["metadata"]),
        id=int(r["id"]),
    )


def pack_terms(tokens: Sequence[str], sentences: Sequence[Sequence[str]]) -> bytes:
    """The ``terms`` column: the chunk's terms on a first line and each sentence's on one of
    its own, space-separated, compressed (a quarter of their bytes: the sentences repeat the
    chunk's terms, which the compression finds)."""
    lines = [" ".join(" ".join(part).split()) for part in (tokens, *sentences)]
    return zlib.compress("\n".join(lines).encode("utf-8"))


def unpack_terms(blob: bytes) -> tuple[list[str], list[list[str]]]:
    """The chunk's terms and each sentence's, from the ``terms`` column."""
    first, *sentences = zlib.decompress(blob).decode("utf-8").split("\n")
    return first.split(), [line.split() for line in sentences]


def packed_columns(tokens: str, sentence_tokens: str) -> bytes:
    """The ``terms`` column from the ``tokens`` and ``sentence_tokens`` columns of an index
    of schema 4 or earlier (schema migration 5)."""
    return pack_terms(tokens.split(), [s.split() for s in json.loads(sentence_tokens)])


def chunk_row(source_id: int, ic: IndexedChunk) -> tuple[object, ...]:
    """The values of a new ``chunks`` row, for :data:`INSERT_CHUNK`."""
    return (
        source_id,
        ic.chunk.position,
        ic.chunk.text,
        json.dumps(list(ic.chunk.heading_path), ensure_ascii=False),
        ic.chunk.start,
        ic.chunk.end,
        json.dumps(ic.chunk.locator, ensure_ascii=False),
        int(ic.chunk.is_summary),
        json.dumps(ic.chunk.metadata, ensure_ascii=False),
        pack_terms(ic.tokens, ic.sentence_tokens),
        json.dumps(list(ic.vector_keys)),
    )
