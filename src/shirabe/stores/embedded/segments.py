"""Segments: immutable on-disk batches of chunks holding the BM25 postings and vectors derived
from them, at two levels: the chunk as a whole, and its sentences (a chunk then scores by its
best sentence). A chunk without separate sentences is its own single sentence. All arrays are
plain ``.npy`` files opened with ``mmap``.

A row's vector is kept as int8 codes with a scale (see ``quantize.py``) and the slot, in the
embedding cache, of the full vector it was made from (−1: none), by which the best rows of a
scan are rescored. Segments written before (format 2) hold float32 vectors and are read as
they are until the index is rebuilt. A segment of many chunks also keeps its chunk vectors'
groups (``lists.py``), by which a search reads the rows near the query only; one written
without them is scanned whole until it is merged.
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

from shirabe.stores.embedded.lists import Lists, build_lists, list_count
from shirabe.stores.embedded.postings import Postings, merge_postings
from shirabe.stores.embedded.quantize import dequantize, quantize, scan
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


def max_by_owner(
    row_scores: NDArray[np.float64], owner: NDArray[np.int64], n: int
) -> NDArray[np.float64]:
    """The best row score of each of ``n`` owners (−inf for an owner without rows)."""
    out = np.full(n, -np.inf, dtype=np.float64)
    np.maximum.at(out, owner, row_scores)
    return out


@dataclass(frozen=True, slots=True)
class SegmentDoc:
    """What a segment needs of one chunk: its terms and vector, and those of its sentences,
    with the slots of the vectors in the embedding cache (−1: not from the cache)."""

    chunk_id: int
    tokens: Sequence[str]
    vector: NDArray[np.float32]
    sentence_tokens: Sequence[Sequence[str]] = ()
    sentence_vectors: NDArray[np.float32] | None = None
    vector_id: int = -1
    sentence_vector_ids: Sequence[int] = ()


@dataclass(frozen=True, slots=True)
class CodedVectors:
    """The vectors of one level's rows: int8 codes, a scale per row, and the slot in the
    embedding cache of the full vector each row was made from (−1: none); with ``lists``, the
    rows' groups around centroids."""

    codes: NDArray[np.int8]
    scales: NDArray[np.float32]
    ids: NDArray[np.int64]
    lists: Lists | None = None

    exact = False

    def scores(
        self, query: NDArray[np.float32], rows: NDArray[np.int64] | None = None
    ) -> NDArray[np.float64]:
        """Approximate dot products with ``query`` of every row, or of ``rows``."""
        if rows is None:
            return scan(self.codes, self.scales, query)
        return scan(np.asarray(self.codes)[rows], np.asarray(self.scales)[rows], query)

    def approximate(self, rows: NDArray[np.int64]) -> NDArray[np.float32]:
        """The vectors of ``rows`` as their codes stand for them."""
        return dequantize(np.asarray(self.codes)[rows], np.asarray(self.scales)[rows])

    def take(self, keep: NDArray[np.bool_]) -> CodedVectors:
        return CodedVectors(
            np.asarray(self.codes)[keep], np.asarray(self.scales)[keep], np.asarray(self.ids)[keep]
        )

    @classmethod
    def of(cls, vectors: NDArray[np.float32], ids: NDArray[np.int64]) -> CodedVectors:
        codes, scales = quantize(vectors)
        return cls(codes, scales, np.asarray(ids, dtype=np.int64))

    def grouped(self) -> CodedVectors:
        """These vectors with their groups (none for few rows: see ``lists.py``)."""
        return CodedVectors(self.codes, self.scales, self.ids, build_lists(self.codes, self.scales))

    @classmethod
    def concatenate(cls, parts: Sequence[CodedVectors], dim: int) -> CodedVectors:
        if not parts:
            return cls(np.zeros((0, dim), np.int8), np.zeros(0, np.float32), np.zeros(0, np.int64))
        return cls(
            np.concatenate([np.asarray(p.codes) for p in parts]).reshape(-1, dim),
            np.concatenate([np.asarray(p.scales) for p in parts]).astype(np.float32),
            np.concatenate([np.asarray(p.ids) for p in parts]).astype(np.int64),
        )


@dataclass(frozen=True, slots=True)
class FullVectors:
    """The float32 vectors of one level's rows, as segments of format 2 hold them."""

    matrix: NDArray[np.float32]

    exact = True

    def scores(
        self, query: NDArray[np.float32], rows: NDArray[np.int64] | None = None
    ) -> NDArray[np.float64]:
        matrix = np.asarray(self.matrix) if rows is None else np.asarray(self.matrix)[rows]
        out: NDArray[np.float64] = (matrix @ np.asarray(query, dtype=np.float32)).astype(np.float64)
        return out

    def approximate(self, rows: NDArray[np.int64]) -> NDArray[np.float32]:
        out: NDArray[np.float32] = np.asarray(self.matrix)[rows]
        return out


RowVectors = CodedVectors | FullVectors


@dataclass(slots=True)
class Segment:
    """One immutable batch of chunks, indexed at chunk and at sentence level."""

    chunk_ids: IdArray
    chunk_postings: Postings
    chunk_vectors: RowVectors
    sent_ptr: NDArray[np.int64]
    sent_postings: Postings
    sent_vectors: RowVectors

    @property
    def size(self) -> int:
        return len(self.chunk_ids)

    def postings(self, level: Level) -> Postings:
        return self.chunk_postings if level == "chunk" else self.sent_postings

    def vectors(self, level: Level) -> RowVectors:
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
        rows, owner = self.rows_of_docs(level, docs)
        return docs, rows, owner

    def rows_of_docs(
        self, level: Level, docs: NDArray[np.int64]
    ) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """The rows at ``level`` of the chunks at local indexes ``docs``, and for each row
        the position (in ``docs``) of the chunk it belongs to."""
        if level == "chunk":
            return docs, np.arange(len(docs), dtype=np.int64)
        ptr = np.asarray(self.sent_ptr)
        starts, counts = ptr[docs], ptr[docs + 1] - ptr[docs]
        owner = np.repeat(np.arange(len(docs), dtype=np.int64), counts)
        offsets = np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(
            np.cumsum(counts) - counts, counts
        )
        return np.repeat(starts, counts) + offsets, owner

    def save(self, directory: Path) -> None:
        tmp = directory.with_name(directory.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        arrays: dict[str, NDArray[np.generic]] = {
            "chunk_ids": self.chunk_ids,
            "sent_ptr": self.sent_ptr,
        }
        levels: tuple[tuple[str, Level], ...] = (("chunk", "chunk"), ("sent", "sentence"))
        for prefix, level in levels:
            vectors = self.vectors(level)
            if not isinstance(vectors, CodedVectors):
                raise TypeError("segments are written with coded vectors only")
            arrays[f"{prefix}_codes"] = vectors.codes
            arrays[f"{prefix}_scales"] = vectors.scales
            arrays[f"{prefix}_vector_ids"] = vectors.ids
            if vectors.lists is not None:
                for name in Lists.FIELDS:
                    arrays[f"{prefix}_list_{name}"] = getattr(vectors.lists, name)
            postings = self.postings(level)
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
    def load(cls, directory: Path, *, coded: bool = True) -> Segment:
        """The segment in ``directory``; ``coded=False`` reads one of format 2, whose
        vectors are float32."""

        def arr(name: str) -> Any:
            return load_array(directory / f"{name}.npy")

        def postings(prefix: str) -> Postings:
            return Postings(**{name: arr(f"{prefix}_{name}") for name in Postings.FIELDS})

        def vectors(prefix: str) -> RowVectors:
            if not coded:
                return FullVectors(arr(f"{prefix}_vectors"))
            lists = None
            if (directory / f"{prefix}_list_centroids.npy").is_file():
                lists = Lists(*(arr(f"{prefix}_list_{name}") for name in Lists.FIELDS))
            return CodedVectors(
                arr(f"{prefix}_codes"), arr(f"{prefix}_scales"), arr(f"{prefix}_vector_ids"), lists
            )

        return cls(
            chunk_ids=arr("chunk_ids"),
            chunk_postings=postings("chunk"),
            chunk_vectors=vectors("chunk"),
            sent_ptr=arr("sent_ptr"),
            sent_postings=postings("sent"),
            sent_vectors=vectors("sent"),
        )


def build_segment(docs: Sequence[SegmentDoc], dim: int) -> Segment:
    """Index a batch of chunks, stored in ascending chunk id order."""
    ordered = sorted(docs, key=lambda d: d.chunk_id)
    sent_tokens: list[Sequence[str]] = []
    sent_vecs: list[NDArray[np.float32]] = []
    sent_ids: list[NDArray[np.int64]] = []
    counts: list[int] = []
    for doc in ordered:
        own = doc.sentence_vectors
        if doc.sentence_tokens and own is not None and len(own) == len(doc.sentence_tokens):
            n = len(doc.sentence_tokens)
            sent_tokens.extend(doc.sentence_tokens)
            sent_vecs.append(np.asarray(own, dtype=np.float32).reshape(-1, dim))
            ids = doc.sentence_vector_ids if len(doc.sentence_vector_ids) == n else [-1] * n
            sent_ids.append(np.asarray(ids, dtype=np.int64))
            counts.append(n)
        else:
            sent_tokens.append(doc.tokens)
            sent_vecs.append(np.asarray(doc.vector, dtype=np.float32).reshape(1, dim))
            sent_ids.append(np.asarray([doc.vector_id], dtype=np.int64))
            counts.append(1)
    sent_ptr = np.zeros(len(ordered) + 1, dtype=np.int64)
    np.cumsum(counts, out=sent_ptr[1:])

    def coded(blocks: list[NDArray[np.float32]], ids: list[NDArray[np.int64]]) -> CodedVectors:
        if not blocks:
            return CodedVectors.concatenate([], dim)
        return CodedVectors.of(np.vstack(blocks).astype(np.float32), np.concatenate(ids))

    return Segment(
        chunk_ids=np.asarray([d.chunk_id for d in ordered], dtype=np.int64),
        chunk_postings=Postings.build([d.tokens for d in ordered]),
        chunk_vectors=coded(
            [np.asarray(d.vector, np.float32).reshape(1, dim) for d in ordered],
            [np.asarray([d.vector_id], np.int64) for d in ordered],
        ).grouped(),
        sent_ptr=sent_ptr,
        sent_postings=Postings.build(sent_tokens),
        sent_vectors=coded(sent_vecs, sent_ids),
    )


def merge_segments(segments: Sequence[Segment], dead: IdArray, dim: int) -> Segment:
    """Concatenate segments (ascending, disjoint id ranges), dropping chunks in ``dead``;
    the vectors' codes are copied as they are."""
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

    def kept(level: Level, masks: list[NDArray[np.bool_]]) -> CodedVectors:
        parts = []
        for seg, keep in zip(segments, masks, strict=True):
            vectors = seg.vectors(level)
            if not isinstance(vectors, CodedVectors):
                raise TypeError("segments of format 2 are rebuilt, not merged")
            parts.append(vectors.take(keep))
        return CodedVectors.concatenate(parts, dim)

    return Segment(
        chunk_ids=chunk_ids.astype(np.int64),
        chunk_postings=merge_postings(
            [(s.chunk_postings, a) for s, a in zip(segments, alive, strict=True)]
        ),
        chunk_vectors=kept("chunk", alive).grouped(),
        sent_ptr=sent_ptr,
        sent_postings=merge_postings(
            [(s.sent_postings, a) for s, a in zip(segments, sent_alive, strict=True)]
        ),
        sent_vectors=kept("sentence", sent_alive),
    )


def ungrouped(segment: Segment) -> bool:
    """Whether ``segment`` is large enough for groups of its chunk vectors and has none."""
    vectors = segment.vectors("chunk")
    return (
        isinstance(vectors, CodedVectors) and vectors.lists is None and list_count(segment.size) > 0
    )
