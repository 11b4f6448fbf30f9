"""Segments: immutable on-disk batches of chunks holding the BM25 postings and vectors derived
from them, at two levels: the chunk as a whole, and its sentences (a chunk then scores by its
best sentence). A chunk without separate sentences is its own single sentence. All arrays are
plain ``.npy`` files opened with ``mmap``.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from shirabe.stores.embedded.postings import Postings, merge_postings
from shirabe.stores.protocol import Level

_LOADING = threading.Lock()
"""np.load parses each file's header with ast.literal_eval, and CPython 3.11's parser is not safe
to run on two threads at once ("AST constructor recursion depth mismatch"): searches read
segments on several threads (the lexical and the vector rankers, an ingest beside them)."""


def load_array(path: Path, *, mapped: bool = True) -> Any:
    """An array file, memory-mapped by default; one header parsed at a time."""
    with _LOADING:
        return np.load(path, mmap_mode="r" if mapped else None, allow_pickle=False)


IdArray = NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class SegmentDoc:
    """What a segment needs of one chunk: its terms and vector, and those of its sentences."""

    chunk_id: int
    tokens: Sequence[str]
    vector: NDArray[np.float32]
    sentence_tokens: Sequence[Sequence[str]] = ()
    sentence_vectors: NDArray[np.float32] | None = None


@dataclass(slots=True)
class Segment:
    """One immutable batch of chunks, indexed at chunk and at sentence level."""

    chunk_ids: IdArray
    chunk_postings: Postings
    chunk_vectors: NDArray[np.float32]
    sent_ptr: NDArray[np.int64]
    sent_postings: Postings
    sent_vectors: NDArray[np.float32]

    @property
    def size(self) -> int:
        return len(self.chunk_ids)

    def postings(self, level: Level) -> Postings:
        return self.chunk_postings if level == "chunk" else self.sent_postings

    def vectors(self, level: Level) -> NDArray[np.float32]:
        return self.chunk_vectors if level == "chunk" else self.sent_vectors

    def to_chunks(self, level: Level, row_scores: NDArray[np.float64]) -> NDArray[np.float64]:
        """Row scores → chunk scores (a chunk scores by its best sentence)."""
        if level == "chunk":
            return row_scores
        return np.maximum.reduceat(row_scores, np.asarray(self.sent_ptr[:-1]))

    def rows_of(
        self, level: Level, chunk_ids: IdArray
    ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
        """For the given chunks present here: their local indexes, their rows at ``level``,
        and for each row the position (in the first array) of the chunk it belongs to."""
        ids = np.asarray(self.chunk_ids)
        wanted = np.asarray(chunk_ids, dtype=np.int64)
        pos = np.searchsorted(ids, wanted)
        inside = pos < len(ids)
        inside[inside] = ids[pos[inside]] == wanted[inside]
        docs = np.unique(pos[inside]).astype(np.int64)
        if level == "chunk":
            return docs, docs, np.arange(len(docs), dtype=np.int64)
        ptr = np.asarray(self.sent_ptr)
        starts, counts = ptr[docs], ptr[docs + 1] - ptr[docs]
        owner = np.repeat(np.arange(len(docs), dtype=np.int64), counts)
        offsets = np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(
            np.cumsum(counts) - counts, counts
        )
        return docs, np.repeat(starts, counts) + offsets, owner

    def save(self, directory: Path) -> None:
        tmp = directory.with_name(directory.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        arrays: dict[str, NDArray[np.generic]] = {
            "chunk_ids": self.chunk_ids,
            "chunk_vectors": self.chunk_vectors,
            "sent_ptr": self.sent_ptr,
            "sent_vectors": self.sent_vectors,
        }
        for prefix, postings in (("chunk", self.chunk_postings), ("sent", self.sent_postings)):
            for name in Postings.FIELDS:
                arrays[f"{prefix}_{name}"] = getattr(postings, name)
        for name, array in arrays.items():
            np.save(tmp / f"{name}.npy", array, allow_pickle=False)
        if directory.exists():
            # left by a writer killed before it published its manifest: new names come after
            # every name a manifest has used, so no reader can be using this one
            shutil.rmtree(directory)
        tmp.rename(directory)

    @classmethod
    def load(cls, directory: Path) -> Segment:
        def arr(name: str) -> Any:
            return load_array(directory / f"{name}.npy")

        def postings(prefix: str) -> Postings:
            return Postings(**{name: arr(f"{prefix}_{name}") for name in Postings.FIELDS})

        return cls(
            chunk_ids=arr("chunk_ids"),
            chunk_postings=postings("chunk"),
            chunk_vectors=arr("chunk_vectors"),
            sent_ptr=arr("sent_ptr"),
            sent_postings=postings("sent"),
            sent_vectors=arr("sent_vectors"),
        )


def build_segment(docs: Sequence[SegmentDoc], dim: int) -> Segment:
    """Index a batch of chunks, stored in ascending chunk id order."""
    ordered = sorted(docs, key=lambda d: d.chunk_id)
    sent_tokens: list[Sequence[str]] = []
    sent_vecs: list[NDArray[np.float32]] = []
    counts: list[int] = []
    for doc in ordered:
        own = doc.sentence_vectors
        if doc.sentence_tokens and own is not None and len(own) == len(doc.sentence_tokens):
            sent_tokens.extend(doc.sentence_tokens)
            sent_vecs.append(np.asarray(own, dtype=np.float32).reshape(-1, dim))
            counts.append(len(doc.sentence_tokens))
        else:
            sent_tokens.append(doc.tokens)
            sent_vecs.append(np.asarray(doc.vector, dtype=np.float32).reshape(1, dim))
            counts.append(1)
    sent_ptr = np.zeros(len(ordered) + 1, dtype=np.int64)
    np.cumsum(counts, out=sent_ptr[1:])

    def stack(blocks: list[NDArray[np.float32]]) -> NDArray[np.float32]:
        return np.vstack(blocks).astype(np.float32) if blocks else np.zeros((0, dim), np.float32)

    return Segment(
        chunk_ids=np.asarray([d.chunk_id for d in ordered], dtype=np.int64),
        chunk_postings=Postings.build([d.tokens for d in ordered]),
        chunk_vectors=stack([np.asarray(d.vector, np.float32).reshape(1, dim) for d in ordered]),
        sent_ptr=sent_ptr,
        sent_postings=Postings.build(sent_tokens),
        sent_vectors=stack(sent_vecs),
    )


def merge_segments(segments: Sequence[Segment], dead: IdArray, dim: int) -> Segment:
    """Concatenate segments (ascending, disjoint id ranges), dropping chunks in ``dead``."""
    alive = [~np.isin(seg.chunk_ids, dead) for seg in segments]
    sent_alive = [
        np.repeat(a, np.diff(seg.sent_ptr)) for seg, a in zip(segments, alive, strict=True)
    ]
    chunk_ids = (
        np.concatenate([np.asarray(s.chunk_ids)[a] for s, a in zip(segments, alive, strict=True)])
        if segments
        else np.zeros(0, np.int64)
    )
    if np.any(np.diff(chunk_ids) <= 0):
        raise ValueError("segments to merge must hold ascending, disjoint chunk id ranges")
    counts = [np.diff(s.sent_ptr)[a] for s, a in zip(segments, alive, strict=True)]
    sent_ptr = np.zeros(len(chunk_ids) + 1, dtype=np.int64)
    if counts:
        np.cumsum(np.concatenate(counts), out=sent_ptr[1:])

    def stack(blocks: list[NDArray[np.float32]]) -> NDArray[np.float32]:
        return np.vstack(blocks).astype(np.float32) if blocks else np.zeros((0, dim), np.float32)

    return Segment(
        chunk_ids=chunk_ids.astype(np.int64),
        chunk_postings=merge_postings(
            [(s.chunk_postings, a) for s, a in zip(segments, alive, strict=True)]
        ),
        chunk_vectors=stack(
            [np.asarray(s.chunk_vectors)[a] for s, a in zip(segments, alive, strict=True)]
        ),
        sent_ptr=sent_ptr,
        sent_postings=merge_postings(
            [(s.sent_postings, a) for s, a in zip(segments, sent_alive, strict=True)]
        ),
        sent_vectors=stack(
            [np.asarray(s.sent_vectors)[a] for s, a in zip(segments, sent_alive, strict=True)]
        ),
    )
