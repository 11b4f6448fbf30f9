"""Immutable on-disk segments holding the BM25 postings and vectors derived from the chunks.

The SQLite database is the source of truth; this index is derived from it and can always be
rebuilt. A manifest names the live segments and a tombstone file of deleted chunk ids; it is
replaced atomically, so a reader sees either the old or the new index, never a mix. Updating one
file writes one small segment plus tombstones instead of rewriting everything; small segments
are merged as they accumulate, as in Lucene.

Each chunk is indexed at two levels: the chunk as a whole, and its sentences (a chunk then
scores by its best sentence). A chunk without separate sentences is its own single sentence.
Terms are stored as 64-bit hashes, sorted and searched with ``searchsorted``, so no vocabulary
has to be loaded. All arrays are plain ``.npy`` files opened with ``mmap``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from shirabe.embedders.threads import single_threaded_blas
from shirabe.records import ScoredId
from shirabe.stores.bm25 import bm25_weights, idf
from shirabe.text.terms import as_weights

log = logging.getLogger(__name__)

FORMAT = 2
MANIFEST = "manifest.json"
MAX_SEGMENTS = 8
COMPACT_TOMBSTONE_RATIO = 0.3

IdArray = NDArray[np.int64]
Level = Literal["chunk", "sentence"]


def term_hash(token: str) -> int:
    """A stable 64-bit hash of a term (Python's ``hash`` changes between processes)."""
    return int.from_bytes(hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest(), "little")


@dataclass(frozen=True, slots=True)
class SegmentDoc:
    """What a segment needs of one chunk: its terms and vector, and those of its sentences."""

    chunk_id: int
    tokens: Sequence[str]
    vector: NDArray[np.float32]
    sentence_tokens: Sequence[Sequence[str]] = ()
    sentence_vectors: NDArray[np.float32] | None = None


@dataclass(slots=True)
class Postings:
    """An inverted index over rows: for each term hash, the rows holding it and how often."""

    terms: NDArray[np.uint64]
    term_ptr: NDArray[np.int64]
    rows: NDArray[np.int32]
    tfs: NDArray[np.float32]
    lengths: NDArray[np.int32]

    FIELDS = ("terms", "term_ptr", "rows", "tfs", "lengths")

    @classmethod
    def build(cls, token_rows: Sequence[Sequence[str]]) -> Postings:
        cache: dict[str, int] = {}
        hashes: list[int] = []
        rows: list[int] = []
        tfs: list[int] = []
        for row, tokens in enumerate(token_rows):
            for token, tf in Counter(tokens).items():
                h = cache.get(token)
                if h is None:
                    h = cache[token] = term_hash(token)
                hashes.append(h)
                rows.append(row)
                tfs.append(tf)
        return cls.from_triples(
            np.asarray(hashes, dtype=np.uint64),
            np.asarray(rows, dtype=np.int64),
            np.asarray(tfs, dtype=np.float32),
            np.asarray([len(t) for t in token_rows], dtype=np.int32),
        )

    @classmethod
    def from_triples(
        cls,
        hashes: NDArray[np.uint64],
        rows: NDArray[np.int64],
        tfs: NDArray[np.float32],
        lengths: NDArray[np.int32],
    ) -> Postings:
        order = np.lexsort((rows, hashes)) if len(hashes) else np.zeros(0, dtype=np.int64)
        sorted_hashes = hashes[order]
        terms, starts = np.unique(sorted_hashes, return_index=True)
        return cls(
            terms=terms.astype(np.uint64),
            term_ptr=np.append(starts, len(sorted_hashes)).astype(np.int64),
            rows=rows[order].astype(np.int32),
            tfs=tfs[order].astype(np.float32),
            lengths=lengths.astype(np.int32),
        )

    def triples(self) -> tuple[NDArray[np.uint64], NDArray[np.int64], NDArray[np.float32]]:
        """(term hash, row, tf) for every posting."""
        per_term = np.diff(self.term_ptr)
        return (
            np.repeat(np.asarray(self.terms), per_term),
            np.asarray(self.rows, dtype=np.int64),
            np.asarray(self.tfs),
        )

    def lookup(self, hashes: NDArray[np.uint64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """Posting ranges ``[lo, hi)`` for each hash (empty where absent)."""
        n = len(self.terms)
        if n == 0:
            zero = np.zeros(len(hashes), dtype=np.int64)
            return zero, zero
        pos = np.searchsorted(self.terms, hashes)
        clipped = np.minimum(pos, n - 1)
        found = (pos < n) & (np.asarray(self.terms)[clipped] == hashes)
        ptr = np.asarray(self.term_ptr)
        lo = np.where(found, ptr[clipped], 0)
        hi = np.where(found, ptr[clipped + 1], 0)
        return lo, hi

    def score(
        self,
        lo: NDArray[np.int64],
        hi: NDArray[np.int64],
        term_idf: NDArray[np.float64],
        *,
        avg_len: float,
        k1: float,
        b: float,
    ) -> NDArray[np.float64]:
        """BM25 of every row for the looked-up terms."""
        n = len(self.lengths)
        scores = np.zeros(n, dtype=np.float64)
        lengths = np.asarray(self.lengths)
        for j in np.flatnonzero(hi > lo):
            rows = np.asarray(self.rows[lo[j] : hi[j]])
            w = term_idf[j] * bm25_weights(
                self.tfs[lo[j] : hi[j]], lengths[rows], avg_len=avg_len, k1=k1, b=b
            )
            scores += np.bincount(rows, weights=w, minlength=n)
        return scores

    def score_rows(
        self,
        rows: NDArray[np.int64],
        lo: NDArray[np.int64],
        hi: NDArray[np.int64],
        term_idf: NDArray[np.float64],
        *,
        avg_len: float,
        k1: float,
        b: float,
    ) -> NDArray[np.float64]:
        """BM25 of the given rows only: each term's postings are searched, not scanned."""
        scores = np.zeros(len(rows), dtype=np.float64)
        if len(rows) == 0:
            return scores
        lengths = np.asarray(self.lengths)[rows]
        for j in np.flatnonzero(hi > lo):
            posting_rows = np.asarray(self.rows[lo[j] : hi[j]])
            idx = np.searchsorted(posting_rows, rows)
            found = idx < len(posting_rows)
            found[found] = posting_rows[idx[found]] == rows[found]
            if not found.any():
                continue
            tf = np.asarray(self.tfs[lo[j] : hi[j]])[idx[found]]
            scores[found] += term_idf[j] * bm25_weights(
                tf, lengths[found], avg_len=avg_len, k1=k1, b=b
            )
        return scores


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
            return np.load(directory / f"{name}.npy", mmap_mode="r", allow_pickle=False)

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


def _merge_postings(parts: Sequence[tuple[Postings, NDArray[np.bool_]]]) -> Postings:
    """Concatenate postings of several row sets, keeping only the rows marked alive."""
    hashes: list[NDArray[np.uint64]] = []
    rows: list[NDArray[np.int64]] = []
    tfs: list[NDArray[np.float32]] = []
    lengths: list[NDArray[np.int32]] = []
    offset = 0
    for postings, alive in parts:
        new_row = np.cumsum(alive) - 1 + offset
        h, r, t = postings.triples()
        keep = alive[r]
        hashes.append(h[keep])
        rows.append(new_row[r[keep]])
        tfs.append(t[keep])
        lengths.append(np.asarray(postings.lengths)[alive])
        offset += int(alive.sum())
    return Postings.from_triples(
        np.concatenate(hashes) if hashes else np.zeros(0, np.uint64),
        np.concatenate(rows) if rows else np.zeros(0, np.int64),
        np.concatenate(tfs) if tfs else np.zeros(0, np.float32),
        np.concatenate(lengths) if lengths else np.zeros(0, np.int32),
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
        chunk_postings=_merge_postings(
            [(s.chunk_postings, a) for s, a in zip(segments, alive, strict=True)]
        ),
        chunk_vectors=stack(
            [np.asarray(s.chunk_vectors)[a] for s, a in zip(segments, alive, strict=True)]
        ),
        sent_ptr=sent_ptr,
        sent_postings=_merge_postings(
            [(s.sent_postings, a) for s, a in zip(segments, sent_alive, strict=True)]
        ),
        sent_vectors=stack(
            [np.asarray(s.sent_vectors)[a] for s, a in zip(segments, sent_alive, strict=True)]
        ),
    )


@dataclass(slots=True)
class _Manifest:
    generation: int
    dim: int
    segments: list[str]
    tombstones: str | None
    counter: int

    def to_json(self) -> str:
        return json.dumps(
            {
                "format": FORMAT,
                "generation": self.generation,
                "dim": self.dim,
                "segments": self.segments,
                "tombstones": self.tombstones,
                "counter": self.counter,
            }
        )


@dataclass(slots=True)
class _View:
    """A consistent snapshot: segments, their live masks, and global BM25 statistics."""

    manifest: _Manifest
    segments: list[Segment]
    alive: list[NDArray[np.bool_]]
    tombstones: IdArray
    live_docs: int
    rows: dict[Level, int]
    avg_len: dict[Level, float]
    stamp: bytes


class SegmentIndex:
    """Reads and writes the segment directory. Writers must hold the store's write lock."""

    def __init__(self, directory: Path, *, k1: float = 1.2, b: float = 0.75) -> None:
        self.directory = directory
        self.k1 = k1
        self.b = b
        self._view: _View | None = None

    # reading

    def _stamp(self) -> bytes | None:
        """The manifest's content: every publish changes it (generation, segment names or
        counter). File metadata is not enough: a replaced manifest can reuse the old inode,
        size and modification tick, and a writer trusting a stale view corrupts the index."""
        try:
            return (self.directory / MANIFEST).read_bytes()
        except FileNotFoundError:
            return None

    def _read_manifest(self, content: bytes | None = None) -> _Manifest | None:
        if content is None:
            content = self._stamp()
            if content is None:
                return None
        raw = json.loads(content.decode("utf-8"))
        if raw.get("format") != FORMAT:
            return None
        return _Manifest(
            generation=int(raw["generation"]),
            dim=int(raw["dim"]),
            segments=list(raw["segments"]),
            tombstones=raw["tombstones"],
            counter=int(raw["counter"]),
        )

    def view(self) -> _View | None:
        """The current snapshot, reloaded only when the manifest changed."""
        for _attempt in range(5):
            stamp = self._stamp()
            if stamp is None:
                self._view = None
                return None
            if self._view is not None and self._view.stamp == stamp:
                return self._view
            try:
                self._view = self._load_view(stamp)
                return self._view
            except FileNotFoundError:
                continue  # a writer replaced the manifest while we read; read the new one
        raise RuntimeError(f"index in {self.directory} keeps changing; try again")

    def _load_view(self, stamp: bytes) -> _View | None:
        manifest = self._read_manifest(stamp)
        if manifest is None:
            return None
        segments = [Segment.load(self.directory / name) for name in manifest.segments]
        tombstones = (
            np.load(self.directory / manifest.tombstones, allow_pickle=False)
            if manifest.tombstones
            else np.zeros(0, dtype=np.int64)
        )
        alive = [~np.isin(seg.chunk_ids, tombstones) for seg in segments]
        # Like Lucene, collection statistics count deleted rows until a merge drops them, so
        # document frequencies (which include them) never exceed the row count.
        rows: dict[Level, int] = {}
        avg_len: dict[Level, float] = {}
        for level in ("chunk", "sentence"):
            lengths = [np.asarray(seg.postings(level).lengths) for seg in segments]
            rows[level] = sum(len(x) for x in lengths)
            total = sum(float(x.sum()) for x in lengths)
            avg_len[level] = total / rows[level] if rows[level] else 0.0
        return _View(
            manifest=manifest,
            segments=segments,
            alive=alive,
            tombstones=np.asarray(tombstones, dtype=np.int64),
            live_docs=int(sum(int(a.sum()) for a in alive)),
            rows=rows,
            avg_len=avg_len,
            stamp=stamp,
        )

    @property
    def generation(self) -> int:
        view = self.view()
        return -1 if view is None else view.manifest.generation

    def indexed_ids(self) -> IdArray:
        """Chunk ids currently searchable."""
        view = self.view()
        if view is None:
            return np.zeros(0, dtype=np.int64)
        parts = [np.asarray(s.chunk_ids)[a] for s, a in zip(view.segments, view.alive, strict=True)]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)

    def search_lexical(
        self,
        terms: Mapping[str, float] | Sequence[str],
        k: int,
        allowed: IdArray | None = None,
        *,
        level: Level = "chunk",
        within: IdArray | None = None,
    ) -> list[ScoredId]:
        """BM25 with collection statistics over all live segments; zero scores are dropped.

        ``terms`` are query terms with weights (a plain list weighs each occurrence once).
        With ``within``, only those chunks are scored, at a cost that grows with their number
        rather than with the index (second-stage re-scoring of candidates).
        """
        view = self.view()
        if view is None or view.live_docs == 0 or k <= 0:
            return []
        by_hash: dict[int, float] = {}
        for term, weight in as_weights(terms).items():
            h = term_hash(term)
            by_hash[h] = by_hash.get(h, 0.0) + weight
        if not by_hash:
            return []
        hashes = np.asarray(sorted(by_hash), dtype=np.uint64)
        query_weight = np.asarray([by_hash[int(h)] for h in hashes], dtype=np.float64)
        ranges = [seg.postings(level).lookup(hashes) for seg in view.segments]
        df = sum((hi - lo for lo, hi in ranges), np.zeros(len(hashes), dtype=np.int64))
        term_idf = idf(df, view.rows[level]) * query_weight
        results: list[ScoredId] = []
        for seg, alive, (lo, hi) in zip(view.segments, view.alive, ranges, strict=True):
            if seg.size == 0 or not np.any(hi > lo):
                continue
            postings = seg.postings(level)
            if within is not None:
                docs, rows, owner = seg.rows_of(level, within)
                row_scores = postings.score_rows(
                    rows, lo, hi, term_idf, avg_len=view.avg_len[level], k1=self.k1, b=self.b
                )
                scores = _max_by_owner(row_scores, owner, len(docs))
                ids = np.asarray(seg.chunk_ids)[docs]
                mask = np.asarray(alive)[docs] & (scores > 0)
            else:
                all_rows = postings.score(
                    lo, hi, term_idf, avg_len=view.avg_len[level], k1=self.k1, b=self.b
                )
                scores = seg.to_chunks(level, all_rows)
                ids = np.asarray(seg.chunk_ids)
                mask = alive & (scores > 0)
            if allowed is not None:
                mask &= np.isin(ids, allowed)
            results.extend(_top(ids, scores, mask, k))
        results.sort(key=lambda h: (-h.score, h.chunk_id))
        return results[:k]

    def document_frequencies(self, terms: Sequence[str]) -> dict[str, int]:
        """Chunks containing each term, over all segments (deleted chunks count until merged)."""
        view = self.view()
        unique = list(dict.fromkeys(terms))
        if view is None or not unique:
            return dict.fromkeys(unique, 0)
        hashes = np.asarray([term_hash(t) for t in unique], dtype=np.uint64)
        df = np.zeros(len(unique), dtype=np.int64)
        for seg in view.segments:
            lo, hi = seg.chunk_postings.lookup(hashes)
            df += hi - lo
        return {t: int(n) for t, n in zip(unique, df, strict=True)}

    def search_dense(
        self,
        vector: NDArray[np.float32],
        k: int,
        allowed: IdArray | None = None,
        *,
        level: Level = "chunk",
        within: IdArray | None = None,
    ) -> list[ScoredId]:
        """Cosine similarity (vectors are normalised); at sentence level, the best sentence.

        With ``within``, only those chunks are scored (second-stage re-scoring).
        """
        view = self.view()
        if view is None or view.live_docs == 0 or k <= 0:
            return []
        q = np.asarray(vector, dtype=np.float32)
        results: list[ScoredId] = []
        for seg, alive in zip(view.segments, view.alive, strict=True):
            if seg.size == 0:
                continue
            if within is not None:
                docs, rows, owner = seg.rows_of(level, within)
                vectors = np.asarray(seg.vectors(level))[rows]
                with single_threaded_blas():
                    scores = _max_by_owner((vectors @ q).astype(np.float64), owner, len(docs))
                ids = np.asarray(seg.chunk_ids)[docs]
                mask = np.asarray(alive)[docs]
            else:
                with single_threaded_blas():
                    all_rows = (np.asarray(seg.vectors(level)) @ q).astype(np.float64)
                scores = seg.to_chunks(level, all_rows)
                ids = np.asarray(seg.chunk_ids)
                mask = alive.copy()
            if allowed is not None:
                mask &= np.isin(ids, allowed)
            results.extend(_top(ids, scores, mask, k))
        results.sort(key=lambda h: (-h.score, h.chunk_id))
        return results[:k]

    # writing

    def apply(
        self,
        *,
        generation: int,
        dim: int,
        add: Sequence[SegmentDoc],
        remove: IdArray,
    ) -> None:
        """Publish a new snapshot: ``add`` becomes a segment, ``remove`` becomes tombstones."""
        self.directory.mkdir(parents=True, exist_ok=True)
        view = self.view()
        if view is not None and view.manifest.dim != dim:
            view = None  # a different model: start over
        segments = list(view.manifest.segments) if view else []
        loaded = list(view.segments) if view else []
        counter = view.manifest.counter if view else 0
        tombstones = view.tombstones if view else np.zeros(0, dtype=np.int64)
        if len(remove):
            tombstones = np.union1d(tombstones, np.asarray(remove, dtype=np.int64))
        if add:
            counter += 1
            name = f"seg-{counter:06d}"
            seg = build_segment(add, dim)
            seg.save(self.directory / name)
            segments.append(name)
            loaded.append(seg)
        total = sum(s.size for s in loaded)
        if len(segments) > MAX_SEGMENTS or (
            total and len(tombstones) > COMPACT_TOMBSTONE_RATIO * total
        ):
            segments, loaded, tombstones, counter = self._merge(
                segments, loaded, tombstones, counter, dim
            )
        self._publish(_Manifest(generation, dim, segments, None, counter), tombstones)

    def _publish(self, manifest: _Manifest, tombstones: IdArray) -> None:
        """Write the tombstones, then atomically replace the manifest, then drop old files."""
        if len(tombstones):
            manifest.counter += 1
            manifest.tombstones = f"tomb-{manifest.counter:06d}.npy"
            tmp = self.directory / (manifest.tombstones + ".tmp.npy")
            np.save(tmp, tombstones.astype(np.int64), allow_pickle=False)
            tmp.rename(self.directory / manifest.tombstones)
        tmp_manifest = self.directory / (MANIFEST + ".tmp")
        with tmp_manifest.open("w", encoding="utf-8") as fh:
            fh.write(manifest.to_json())
            fh.flush()
            os.fsync(fh.fileno())
        tmp_manifest.replace(self.directory / MANIFEST)
        self._collect_garbage(manifest)

    def optimize(self) -> None:
        """Merge every segment into one and drop deleted chunks (after large ingests)."""
        view = self.view()
        if view is None or (len(view.segments) <= 1 and not len(view.tombstones)):
            return
        names, _merged, tombstones, counter = self._merge(
            list(view.manifest.segments),
            list(view.segments),
            view.tombstones,
            view.manifest.counter,
            view.manifest.dim,
            everything=True,
        )
        self._publish(
            _Manifest(view.manifest.generation, view.manifest.dim, names, None, counter),
            tombstones,
        )

    def _merge(
        self,
        names: list[str],
        segments: list[Segment],
        tombstones: IdArray,
        counter: int,
        dim: int,
        *,
        everything: bool = False,
    ) -> tuple[list[str], list[Segment], IdArray, int]:
        """Merge the segments on one side of the largest, or everything when deletions pile up
        or the largest sits between others.

        Segments hold disjoint, ascending id ranges, and a merge must keep it so: merging the
        segments on both sides of the largest would make one whose range spans it.
        """
        total = sum(s.size for s in segments)
        order = sorted(
            range(len(segments)),
            key=lambda i: int(segments[i].chunk_ids[0]) if segments[i].size else 0,
        )
        pick = order
        if not everything and not (total and len(tombstones) > COMPACT_TOMBSTONE_RATIO * total):
            largest = max(range(len(segments)), key=lambda i: segments[i].size)
            at = order.index(largest)
            if at == 0:
                pick = order[1:]
            elif at == len(order) - 1:
                pick = order[:-1]
        merged = merge_segments([segments[i] for i in pick], tombstones, dim)
        counter += 1
        name = f"seg-{counter:06d}"
        merged.save(self.directory / name)
        keep = [i for i in range(len(segments)) if i not in pick]
        merged_ids = np.concatenate([np.asarray(segments[i].chunk_ids) for i in pick])
        tombstones = np.setdiff1d(tombstones, merged_ids)
        log.info("merged %d segments into %s", len(pick), name)
        return (
            [names[i] for i in keep] + [name],
            [segments[i] for i in keep] + [merged],
            tombstones,
            counter,
        )

    def _collect_garbage(self, manifest: _Manifest) -> None:
        live = {*manifest.segments, MANIFEST}
        if manifest.tombstones:
            live.add(manifest.tombstones)
        for entry in self.directory.iterdir():
            if entry.name in live:
                continue
            if entry.is_dir():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                with contextlib.suppress(FileNotFoundError):
                    entry.unlink()

    def clear(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)
        self._view = None


def _max_by_owner(
    row_scores: NDArray[np.float64], owner: NDArray[np.int64], n: int
) -> NDArray[np.float64]:
    out = np.full(n, -np.inf, dtype=np.float64)
    np.maximum.at(out, owner, row_scores)
    return out


def _top(
    ids: IdArray, scores: NDArray[np.float64], mask: NDArray[np.bool_], k: int
) -> list[ScoredId]:
    idx = np.flatnonzero(mask)
    if len(idx) == 0:
        return []
    if len(idx) > k:
        idx = idx[np.argpartition(-scores[idx], k - 1)[:k]]
    return [ScoredId(int(ids[i]), float(scores[i])) for i in idx]
