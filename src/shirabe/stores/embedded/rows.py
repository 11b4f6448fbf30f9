"""Rows of the ``sources`` and ``chunks`` tables and the records they hold, both ways."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from shirabe.records import Chunk, SourceInfo
from shirabe.stores.protocol import IndexedChunk

INSERT_CHUNK = """
    INSERT INTO chunks (source_id, position, text, heading_path, start_offset, end_offset,
        locator, is_summary, metadata, tokens, vector_keys, sentence_tokens)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
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


def sentence_json(sentences: Sequence[Sequence[str]]) -> str:
    """The ``sentence_tokens`` column: each sentence's terms, space-separated."""
    return json.dumps([" ".join(s) for s in sentences], ensure_ascii=False)


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
        " ".join(ic.tokens),
        json.dumps(list(ic.vector_keys)),
        sentence_json(ic.sentence_tokens),
    )
