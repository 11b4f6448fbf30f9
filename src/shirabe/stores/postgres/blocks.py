"""A term's chunk postings packed into blocks: the server store's BM25 index.

A posting is (chunk id, file id, term frequency, chunk length). A row per posting, with its
tuple header and its B-tree entries, cost about 170 bytes; a block of postings costs about 11
bytes each. A block is one ``bytea``: a small header, then each column as offsets from the
block's smallest value, each column in the narrowest unsigned type its values fit.

Two kinds of blocks hold a term's postings (``term_blocks``):

- **fresh** blocks (rank -1): a file's postings of the term, written with the file and deleted
  with it;
- **merged** blocks (rank 0, 1, …): every posting of the term, best BM25 impact first, cut into
  blocks of :data:`BLOCK` postings: rank 0 holds the term's best, so a search that wants each
  term's best postings reads its first blocks only. :func:`merged` makes them; a compaction
  rewrites them from the chunks (``compaction.py``).

A merged block may hold postings of chunks deleted since (the file was changed or removed):
searches drop them when they check each candidate's chunk, and the next compaction leaves them
out.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

BLOCK = 128
"""Postings per merged block."""

_VERSION = 1
_HEADER = struct.Struct("<BIqq")  # version, postings, smallest chunk id, smallest file id
_WIDTHS: tuple[type[np.unsignedinteger], ...] = (np.uint8, np.uint16, np.uint32, np.uint64)

Ints = NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class Postings:
    """Postings as columns of equal length."""

    chunks: Ints
    sources: Ints
    tfs: Ints
    lengths: Ints

    def __len__(self) -> int:
        return len(self.chunks)

    def take(self, keep: NDArray[np.bool_] | NDArray[np.intp]) -> Postings:
        return Postings(self.chunks[keep], self.sources[keep], self.tfs[keep], self.lengths[keep])


def postings(
    chunks: Sequence[int] | Ints,
    sources: Sequence[int] | Ints,
    tfs: Sequence[int] | Ints,
    lengths: Sequence[int] | Ints,
) -> Postings:
    """Postings from sequences of numbers."""
    return Postings(*(np.asarray(x, dtype=np.int64) for x in (chunks, sources, tfs, lengths)))


def _narrowest(values: Ints) -> tuple[int, bytes]:
    top = int(values.max()) if len(values) else 0
    for code, kind in enumerate(_WIDTHS):
        if top <= np.iinfo(kind).max:
            return code, values.astype(kind).tobytes()
    raise ValueError(f"a posting value does not fit in 64 bits: {top}")  # pragma: no cover


def encode(p: Postings) -> bytes:
    """One block's bytes."""
    if len(p) == 0:
        raise ValueError("a block holds at least one posting")
    if int(p.tfs.min()) < 0 or int(p.lengths.min()) < 0:
        raise ValueError("term frequencies and lengths are not negative")
    chunk_base, source_base = int(p.chunks.min()), int(p.sources.min())
    columns = [p.chunks - chunk_base, p.sources - source_base, p.tfs, p.lengths]
    packed = [_narrowest(c) for c in columns]
    codes = bytes(code for code, _ in packed)
    return (
        _HEADER.pack(_VERSION, len(p), chunk_base, source_base)
        + codes
        + b"".join(data for _, data in packed)
    )


def decode(data: bytes | memoryview) -> Postings:
    """The postings of one block's bytes."""
    buffer = memoryview(data)
    version, n, chunk_base, source_base = _HEADER.unpack_from(buffer)
    if version != _VERSION:
        raise ValueError(f"a posting block of version {version}, not {_VERSION}")
    at = _HEADER.size
    codes = bytes(buffer[at : at + 4])
    at += 4
    columns: list[Ints] = []
    for code in codes:
        kind = _WIDTHS[code]
        width = np.dtype(kind).itemsize * n
        columns.append(np.frombuffer(buffer[at : at + width], dtype=kind).astype(np.int64))
        at += width
    return Postings(columns[0] + chunk_base, columns[1] + source_base, columns[2], columns[3])


def impact(tfs: Ints, lengths: Ints) -> NDArray[np.float32]:
    """The BM25 term-frequency part of postings with k1 1.2, b 0.75 and a fixed average length
    of 200: the order of a term's merged blocks (the true statistics score the candidates)."""
    tf = tfs.astype(np.float32)
    dl = lengths.astype(np.float32) / np.float32(200.0)
    return (tf / (tf + np.float32(1.2) * (np.float32(0.25) + np.float32(0.75) * dl))).astype(
        np.float32
    )


def merged(p: Postings, size: int | None = None) -> list[Postings]:
    """A term's postings as merged blocks: best impact first (ties by chunk id), ``size`` a
    block (:data:`BLOCK`), each block in chunk order (its offsets then stay small)."""
    size = size or BLOCK
    order = np.lexsort((p.chunks, -impact(p.tfs, p.lengths)))
    out = []
    for start in range(0, len(order), size):
        part = order[start : start + size]
        out.append(p.take(part[np.argsort(p.chunks[part], kind="stable")]))
    return out
