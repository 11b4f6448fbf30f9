"""Rows of the ``sources`` and ``chunks`` tables and the records they hold, both ways."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from shirabe.embedders.protocol import Vector
from shirabe.records import Chunk, SourceInfo
from shirabe.stores.protocol import IndexedChunk

CHUNK_COLUMNS = (
    "id, source_id, position, text, heading_path, start_offset, end_offset, locator, "
    "is_summary, metadata, tokens, sentence_tokens, vector_keys, length, own_sentence"
)


def source_from_row(row: Mapping[str, Any]) -> SourceInfo:
    """A ``sources`` row (with its chunk count as ``chunks``) as a record."""
    return SourceInfo(
        path=row["path"],
        sha256=row["sha256"],
        size=int(row["size"]),
        mtime=float(row["mtime"]),
        status=row["status"],
        error=row["error"],
        chunks=int(row["chunks"]),
        ingested_at=row["ingested_at"],
        warnings=tuple(row["warnings"]),
        metadata=dict(row["metadata"]),
        id=int(row["id"]),
    )


def chunk_from_row(row: Mapping[str, Any]) -> Chunk:
    """A ``chunks`` row (with its file's ``path``) as a record."""
    return Chunk(
        text=row["text"],
        source=row["path"],
        heading_path=tuple(row["heading_path"]),
        position=int(row["position"]),
        start=int(row["start_offset"]),
        end=int(row["end_offset"]),
        locator=dict(row["locator"]),
        is_summary=bool(row["is_summary"]),
        metadata=dict(row["metadata"]),
        id=int(row["id"]),
    )


def chunk_row(
    chunk_id: int, source_id: int, ic: IndexedChunk, *, own_sentence: bool
) -> tuple[Any, ...]:
    """The values of a ``chunks`` row, in the order of :data:`CHUNK_COLUMNS`; ``own_sentence``
    when its sentence rows are the chunk itself (see :func:`sentence_rows`)."""
    c = ic.chunk
    return (
        chunk_id,
        source_id,
        c.position,
        c.text,
        json.dumps(list(c.heading_path), ensure_ascii=False),
        c.start,
        c.end,
        json.dumps(c.locator, ensure_ascii=False),
        c.is_summary,
        json.dumps(c.metadata, ensure_ascii=False),
        " ".join(ic.tokens),
        json.dumps([" ".join(s) for s in ic.sentence_tokens], ensure_ascii=False),
        json.dumps(list(ic.vector_keys)),
        len(ic.tokens),
        own_sentence,
    )


def sentence_rows(
    ic: IndexedChunk, found: Sequence[Vector | None]
) -> tuple[Sequence[Sequence[str]], Sequence[Vector | None], bool]:
    """A chunk's sentence rows (their terms) and vectors, given the vectors ``found`` for its
    keys: its sentences when each has a vector, else (like the embedded store) the chunk as its
    own single sentence; and whether it is that (``chunks.own_sentence``)."""
    own = found[0] if found else None
    vectors = found[1:]
    if (
        ic.sentence_tokens
        and len(vectors) == len(ic.sentence_tokens)
        and all(v is not None for v in vectors)
    ):
        return ic.sentence_tokens, vectors, False
    return [ic.tokens], [own], True
