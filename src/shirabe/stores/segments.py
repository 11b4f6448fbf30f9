"""Immutable on-disk segments holding the BM25 postings and vectors derived from the chunks.

The SQLite database is the source of truth; this index is derived from it and can always be
rebuilt. A manifest names the live segments and a tombstone file of deleted chunk ids; it is
replaced atomically, so a reader sees either the old or the new index, never a mix. Updating one
file writes one small segment plus tombstones instead of rewriting everything; small segments
are merged as they accumulate, as in Lucene.

Terms are stored as 64-bit hashes (sorted, searched with ``searchsorted``), so no vocabulary has
to be loaded. All arrays are plain ``.npy`` files opened with ``mmap``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from shirabe.records import ScoredId
from shirabe.scoring import bm25_weights, idf

log = logging.getLogger(__name__)

FORMAT = 1
MANIFEST = "manifest.json"
MAX_SEGMENTS = 8
COMPACT_TOMBSTONE_RATIO = 0.3

IdArray = NDArray[np.int64]


def term_hash(token: str) -> int:
    """A stable 64-bit hash of a term (Python's ``hash`` changes between processes)."""
    return int.from_bytes(hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest(), "little")


@dataclass(frozen=True, slots=True)
class SegmentDoc:
    """What a segment needs of one chunk."""

    chunk_id: int
    tokens: Sequence[str]
    vectors: NDArray[np.float32]


@dataclass(slots=True)
class Segment:
    """One immutable batch of chunks: postings grouped by term, vectors grouped by chunk."""

    chunk_ids: IdArray
    doc_len: NDArray[np.int32]
    terms: NDArray[np.uint64]
    term_ptr: NDArray[np.int64]
    post_doc: NDArray[np.int32]
    post_tf: NDArray[np.float32]
    vec_ptr: NDArray[np.int64]
    vectors: NDArray[np.float32]

    ARRAYS = (
        "chunk_ids",
        "doc_len",
        "terms",
        "term_ptr",
        "post_doc",
        "post_tf",
        "vec_ptr",
        "vectors",
    )

    @property
    def size(self) -> int:
        return len(self.chunk_ids)

    def save(self, directory: Path) -> None:
        tmp = directory.with_name(directory.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        for name in self.ARRAYS:
            np.save(tmp / f"{name}.npy", getattr(self, name), allow_pickle=False)
        tmp.rename(directory)

    @classmethod
    def load(cls, directory: Path) -> Segment:
        arrays = {
            name: np.load(directory / f"{name}.npy", mmap_mode="r", allow_pickle=False)
            for name in cls.ARRAYS
        }
        return cls(**arrays)


def build_segment(docs: Iterable[SegmentDoc], dim: int) -> Segment:
    """Index a batch of chunks. Documents are stored in ascending chunk id order."""
    ordered = sorted(docs, key=lambda d: d.chunk_id)
    hashes: dict[str, int] = {}
    post_terms: list[int] = []
    post_docs: list[int] = []
    post_tfs: list[int] = []
    lengths: list[int] = []
    vec_counts: list[int] = []
    vec_blocks: list[NDArray[np.float32]] = []
    for local, doc in enumerate(ordered):
        counts = Counter(doc.tokens)
        lengths.append(len(doc.tokens))
        for token, tf in counts.items():
            h = hashes.get(token)
            if h is None:
                h = hashes[token] = term_hash(token)
            post_terms.append(h)
            post_docs.append(local)
            post_tfs.append(tf)
        vecs = np.asarray(doc.vectors, dtype=np.float32).reshape(-1, dim)
        vec_counts.append(len(vecs))
        vec_blocks.append(vecs)
    term_arr = np.asarray(post_terms, dtype=np.uint64)
    order = np.argsort(term_arr, kind="stable")
    sorted_terms = term_arr[order]
    terms, starts = np.unique(sorted_terms, return_index=True)
    term_ptr = np.append(starts, len(sorted_terms)).astype(np.int64)
    vec_ptr = np.zeros(len(ordered) + 1, dtype=np.int64)
    np.cumsum(vec_counts, out=vec_ptr[1:])
    return Segment(
        chunk_ids=np.asarray([d.chunk_id for d in ordered], dtype=np.int64),
        doc_len=np.asarray(lengths, dtype=np.int32),
        terms=terms.astype(np.uint64),
        term_ptr=term_ptr,
        post_doc=np.asarray(post_docs, dtype=np.int32)[order],
        post_tf=np.asarray(post_tfs, dtype=np.float32)[order],
        vec_ptr=vec_ptr,
        vectors=(
            np.vstack(vec_blocks).astype(np.float32)
            if vec_blocks
            else np.zeros((0, dim), dtype=np.float32)
        ),
    )


def merge_segments(segments: Sequence[Segment], dead: IdArray, dim: int) -> Segment:
    """Concatenate segments, dropping the chunks listed in ``dead``; no re-tokenising."""
    keep_ids: list[IdArray] = []
    lens: list[NDArray[np.int32]] = []
    trip_terms: list[NDArray[np.uint64]] = []
    trip_docs: list[NDArray[np.int64]] = []
    trip_tfs: list[NDArray[np.float32]] = []
    vec_counts: list[NDArray[np.int64]] = []
    vec_blocks: list[NDArray[np.float32]] = []
    offset = 0
    for seg in segments:
        alive = ~np.isin(seg.chunk_ids, dead)
        new_local = np.cumsum(alive) - 1 + offset
        keep_ids.append(np.asarray(seg.chunk_ids)[alive])
        lens.append(np.asarray(seg.doc_len)[alive])
        per_term = np.diff(seg.term_ptr)
        term_of_post = np.repeat(np.asarray(seg.terms), per_term)
        post_alive = alive[seg.post_doc]
        trip_terms.append(term_of_post[post_alive])
        trip_docs.append(new_local[np.asarray(seg.post_doc)[post_alive]])
        trip_tfs.append(np.asarray(seg.post_tf)[post_alive])
        counts = np.diff(seg.vec_ptr)
        vec_counts.append(counts[alive])
        row_alive = np.repeat(alive, counts)
        vec_blocks.append(np.asarray(seg.vectors)[row_alive])
        offset += int(alive.sum())
    chunk_ids = np.concatenate(keep_ids) if keep_ids else np.zeros(0, dtype=np.int64)
    order_docs = np.argsort(chunk_ids, kind="stable")
    if not np.all(order_docs == np.arange(len(chunk_ids))):
        raise ValueError("segments to merge must hold ascending, disjoint chunk id ranges")
    all_terms = np.concatenate(trip_terms) if trip_terms else np.zeros(0, dtype=np.uint64)
    order = np.lexsort((np.concatenate(trip_docs), all_terms)) if len(all_terms) else all_terms
    sorted_terms = all_terms[order]
    terms, starts = np.unique(sorted_terms, return_index=True)
    vec_ptr = np.zeros(len(chunk_ids) + 1, dtype=np.int64)
    if vec_counts:
        np.cumsum(np.concatenate(vec_counts), out=vec_ptr[1:])
    return Segment(
        chunk_ids=chunk_ids.astype(np.int64),
        doc_len=(np.concatenate(lens) if lens else np.zeros(0, dtype=np.int32)).astype(np.int32),
        terms=terms.astype(np.uint64),
        term_ptr=np.append(starts, len(sorted_terms)).astype(np.int64),
        post_doc=np.concatenate(trip_docs)[order].astype(np.int32)
        if trip_docs
        else np.zeros(0, dtype=np.int32),
        post_tf=np.concatenate(trip_tfs)[order].astype(np.float32)
        if trip_tfs
        else np.zeros(0, dtype=np.float32),
        vec_ptr=vec_ptr,
        vectors=np.vstack(vec_blocks).astype(np.float32)
        if vec_blocks
        else np.zeros((0, dim), dtype=np.float32),
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
    """A consistent snapshot of the index: segments, their live masks and global BM25 stats."""

    manifest: _Manifest
    segments: list[Segment]
    alive: list[NDArray[np.bool_]]
    tombstones: IdArray
    live_docs: int
    avg_len: float
    stamp: tuple[int, int, int]


class SegmentIndex:
    """Reads and writes the segment directory. Writers must hold the store's write lock."""

    def __init__(self, directory: Path, *, k1: float = 1.2, b: float = 0.75) -> None:
        self.directory = directory
        self.k1 = k1
        self.b = b
        self._view: _View | None = None

    # reading

    def _stamp(self) -> tuple[int, int, int] | None:
        try:
            st = (self.directory / MANIFEST).stat()
        except FileNotFoundError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def _read_manifest(self) -> _Manifest | None:
        try:
            raw = json.loads((self.directory / MANIFEST).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
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

    def _load_view(self, stamp: tuple[int, int, int]) -> _View | None:
        manifest = self._read_manifest()
        if manifest is None:
            return None
        segments = [Segment.load(self.directory / name) for name in manifest.segments]
        tombstones = (
            np.load(self.directory / manifest.tombstones, allow_pickle=False)
            if manifest.tombstones
            else np.zeros(0, dtype=np.int64)
        )
        alive = [~np.isin(seg.chunk_ids, tombstones) for seg in segments]
        live_docs = int(sum(int(a.sum()) for a in alive))
        total_len = sum(
            float(np.asarray(seg.doc_len)[a].sum()) for seg, a in zip(segments, alive, strict=True)
        )
        return _View(
            manifest=manifest,
            segments=segments,
            alive=alive,
            tombstones=np.asarray(tombstones, dtype=np.int64),
            live_docs=live_docs,
            avg_len=total_len / live_docs if live_docs else 0.0,
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
        self, tokens: Sequence[str], k: int, allowed: IdArray | None = None
    ) -> list[ScoredId]:
        view = self.view()
        if view is None or view.live_docs == 0 or k <= 0:
            return []
        hashes = np.asarray(sorted({term_hash(t) for t in tokens}), dtype=np.uint64)
        if len(hashes) == 0:
            return []
        slices: list[tuple[NDArray[np.int64], NDArray[np.int64]]] = []
        df = np.zeros(len(hashes), dtype=np.int64)
        for seg in view.segments:
            pos = np.searchsorted(seg.terms, hashes)
            pos_c = np.minimum(pos, max(len(seg.terms) - 1, 0))
            found = (pos < len(seg.terms)) & (
                np.asarray(seg.terms)[pos_c] == hashes if len(seg.terms) else False
            )
            lo = np.where(found, np.asarray(seg.term_ptr)[pos_c], 0)
            hi = np.where(
                found, np.asarray(seg.term_ptr)[np.minimum(pos_c + 1, len(seg.term_ptr) - 1)], 0
            )
            slices.append((lo, hi))
            df += hi - lo
        weights_idf = idf(df, view.live_docs)
        results: list[ScoredId] = []
        for seg, alive, (lo, hi) in zip(view.segments, view.alive, slices, strict=True):
            n = seg.size
            if n == 0 or not np.any(hi > lo):
                continue
            scores = np.zeros(n, dtype=np.float64)
            doc_len = np.asarray(seg.doc_len)
            for j in np.flatnonzero(hi > lo):
                docs = np.asarray(seg.post_doc[lo[j] : hi[j]])
                tf = np.asarray(seg.post_tf[lo[j] : hi[j]])
                w = weights_idf[j] * bm25_weights(
                    tf, doc_len[docs], avg_len=view.avg_len, k1=self.k1, b=self.b
                )
                scores += np.bincount(docs, weights=w, minlength=n)
            mask = alive & (scores > 0)
            if allowed is not None:
                mask &= np.isin(seg.chunk_ids, allowed)
            results.extend(_top(np.asarray(seg.chunk_ids), scores, mask, k))
        results.sort(key=lambda h: (-h.score, h.chunk_id))
        return results[:k]

    def search_dense(
        self, vector: NDArray[np.float32], k: int, allowed: IdArray | None = None
    ) -> list[ScoredId]:
        view = self.view()
        if view is None or view.live_docs == 0 or k <= 0:
            return []
        q = np.asarray(vector, dtype=np.float32)
        results: list[ScoredId] = []
        for seg, alive in zip(view.segments, view.alive, strict=True):
            if seg.size == 0 or len(seg.vectors) == 0:
                continue
            sims = np.asarray(seg.vectors) @ q
            ptr = np.asarray(seg.vec_ptr)
            has_rows = ptr[1:] > ptr[:-1]
            scores = np.full(seg.size, -np.inf, dtype=np.float64)
            starts = ptr[:-1][has_rows]
            scores[has_rows] = np.maximum.reduceat(sims, starts)
            mask = alive & has_rows
            if allowed is not None:
                mask &= np.isin(seg.chunk_ids, allowed)
            results.extend(_top(np.asarray(seg.chunk_ids), scores, mask, k))
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
        tomb_name: str | None = None
        if len(tombstones):
            counter += 1
            tomb_name = f"tomb-{counter:06d}.npy"
            tmp = self.directory / (tomb_name + ".tmp.npy")
            np.save(tmp, tombstones.astype(np.int64), allow_pickle=False)
            tmp.rename(self.directory / tomb_name)
        manifest = _Manifest(generation, dim, segments, tomb_name, counter)
        tmp_manifest = self.directory / (MANIFEST + ".tmp")
        with tmp_manifest.open("w", encoding="utf-8") as fh:
            fh.write(manifest.to_json())
            fh.flush()
            os.fsync(fh.fileno())
        tmp_manifest.replace(self.directory / MANIFEST)
        self._collect_garbage(manifest)

    def _merge(
        self,
        names: list[str],
        segments: list[Segment],
        tombstones: IdArray,
        counter: int,
        dim: int,
    ) -> tuple[list[str], list[Segment], IdArray, int]:
        """Merge everything but the largest segment, or everything when deletions pile up."""
        total = sum(s.size for s in segments)
        if total and len(tombstones) > COMPACT_TOMBSTONE_RATIO * total:
            pick = list(range(len(segments)))
        else:
            largest = max(range(len(segments)), key=lambda i: segments[i].size)
            pick = [i for i in range(len(segments)) if i != largest]
        order = sorted(pick, key=lambda i: int(segments[i].chunk_ids[0]) if segments[i].size else 0)
        merged = merge_segments([segments[i] for i in order], tombstones, dim)
        counter += 1
        name = f"seg-{counter:06d}"
        merged.save(self.directory / name)
        keep = [i for i in range(len(segments)) if i not in pick]
        merged_ids = np.concatenate([np.asarray(segments[i].chunk_ids) for i in pick])
        tombstones = np.setdiff1d(tombstones, merged_ids)
        new_names = [names[i] for i in keep] + [name]
        new_segments = [segments[i] for i in keep] + [merged]
        log.info("merged %d segments into %s", len(pick), name)
        return new_names, new_segments, tombstones, counter

    def _collect_garbage(self, manifest: _Manifest) -> None:
        live = set(manifest.segments) | {MANIFEST}
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


def _top(
    ids: IdArray, scores: NDArray[np.float64], mask: NDArray[np.bool_], k: int
) -> list[ScoredId]:
    idx = np.flatnonzero(mask)
    if len(idx) == 0:
        return []
    if len(idx) > k:
        part = np.argpartition(-scores[idx], k - 1)[:k]
        idx = idx[part]
    return [ScoredId(int(ids[i]), float(scores[i])) for i in idx]
