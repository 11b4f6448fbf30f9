"""The segment index: the segments of an embedded store, published through a manifest.

The SQLite database is the source of truth; this index is derived from it and can always be
rebuilt. A manifest names the live segments and a tombstone file of deleted chunk ids; it is
replaced atomically, so a reader sees either the old or the new index, never a mix. Updating one
file writes one small segment plus tombstones instead of rewriting everything; small segments
are merged as they accumulate, as in Lucene. An index of an earlier format that can still be
read is searched until it is rebuilt (:attr:`SegmentIndex.outdated`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from shirabe.records import ScoredId
from shirabe.stores.bm25 import idf, term_hash
from shirabe.stores.embedded import maxscore
from shirabe.stores.embedded.dense import FullVectors, search_dense
from shirabe.stores.embedded.filters import eligible_rows, keep_allowed
from shirabe.stores.embedded.readers import ReaderCollections
from shirabe.stores.embedded.segments import (
    IdArray,
    Segment,
    SegmentDoc,
    build_segment,
    load_array,
    max_by_owner,
    merge_segments,
    ungrouped,
)
from shirabe.stores.protocol import Level
from shirabe.text.terms import as_weights

log = logging.getLogger(__name__)

FORMAT = 3
"""Segments of format 3 hold int8 codes of the vectors and their slots in the embedding cache;
format 2 held the float32 vectors, and is still read (READABLE) until the index is rebuilt."""
READABLE = (2, 3)
MANIFEST = "manifest.json"
MAX_SEGMENTS = 8
COMPACT_TOMBSTONE_RATIO = 0.3
NARROW = 4
"""A filter allowing fewer than 1/NARROW of the chunks is searched densely by reading the
allowed chunks' vectors only, not every vector (the int8 codes of all of them are scanned in
about 6 ms at 100k chunks of 384 dimensions here)."""


@dataclass(slots=True)
class _Manifest:
    generation: int
    dim: int
    segments: list[str]
    tombstones: str | None
    counter: int
    format: int = FORMAT

    def to_json(self) -> str:
        return json.dumps(
            {
                "format": self.format,
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

    def __init__(
        self,
        directory: Path,
        *,
        k1: float = 1.2,
        b: float = 0.75,
        full_vectors: FullVectors | None = None,
    ) -> None:
        """``full_vectors`` gives the vectors a dense search rescores its best candidates
        with (None: their int8 codes score them)."""
        self.directory = directory
        self.k1 = k1
        self.b = b
        self.full_vectors = full_vectors
        self._view: _View | None = None
        self._readers = ReaderCollections()

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
        if raw.get("format") not in READABLE:
            return None
        return _Manifest(
            generation=int(raw["generation"]),
            dim=int(raw["dim"]),
            segments=list(raw["segments"]),
            tombstones=raw["tombstones"],
            counter=int(raw["counter"]),
            format=int(raw["format"]),
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
        coded = manifest.format >= 3
        segments = [Segment.load(self.directory / name, coded=coded) for name in manifest.segments]
        tombstones = (
            load_array(self.directory / manifest.tombstones, mapped=False)
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

    @property
    def outdated(self) -> bool:
        """Whether the index is of an earlier format: searched as it is, but to be rebuilt
        (a writer's :meth:`apply` then starts over)."""
        view = self.view()
        return view is not None and view.manifest.format < FORMAT

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
        readable: IdArray | None = None,
    ) -> list[ScoredId]:
        """BM25; zero scores are dropped.

        ``terms`` are query terms with weights (a plain list weighs each occurrence once).
        ``allowed``: the sorted ids of the chunks that may be returned (None: every chunk).
        With ``within``, only those chunks are scored, at a cost that grows with their number
        rather than with the index (second-stage re-scoring of candidates).
        ``readable``: the sorted ids of every chunk the reader may read; the collection
        statistics are theirs (see ``readers.py``). None: the statistics of all segments.
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
        stats = self._statistics(view, level, ranges, readable, allowed)
        if stats is None:
            return []
        df, collection_rows, avg_len, readable_rows = stats
        term_idf = idf(df, collection_rows) * query_weight
        results: list[ScoredId] = []
        for seg, alive, (lo, hi), kept in zip(
            view.segments, view.alive, ranges, readable_rows, strict=True
        ):
            if seg.size == 0 or not np.any(hi > lo):
                continue
            postings = seg.postings(level)
            if within is not None:
                docs, rows, owner = seg.rows_of(level, within)
                row_scores = postings.score_rows(
                    rows, lo, hi, term_idf, avg_len=avg_len, k1=self.k1, b=self.b
                )
                scores = max_by_owner(row_scores, owner, len(docs))
                ids = np.asarray(seg.chunk_ids)[docs]
                mask = np.asarray(alive)[docs] & (scores > 0)
            elif level == "chunk" and int((hi - lo).sum()) >= maxscore.PRUNE_FROM:
                bm25 = maxscore.Bm25(avg_len, self.k1, self.b)
                eligible = eligible_rows(seg.chunk_ids, alive, allowed) if kept is None else kept
                ids, scores = maxscore.best_chunks(seg, eligible, lo, hi, term_idf, k, bm25)
                results.extend(_top(ids, scores, scores > 0, k))
                continue
            else:
                all_rows = postings.score(lo, hi, term_idf, avg_len=avg_len, k1=self.k1, b=self.b)
                scores = seg.to_chunks(level, all_rows)
                ids = np.asarray(seg.chunk_ids)
                mask = alive & (scores > 0)
            if allowed is not None:
                keep_allowed(mask, ids, allowed)
            results.extend(_top(ids, scores, mask, k))
        results.sort(key=lambda h: (-h.score, h.chunk_id))
        return results[:k]

    def _statistics(
        self,
        view: _View,
        level: Level,
        ranges: Sequence[tuple[NDArray[np.int64], NDArray[np.int64]]],
        readable: IdArray | None,
        allowed: IdArray | None,
    ) -> tuple[NDArray[np.int64], int, float, Sequence[NDArray[np.bool_] | None]] | None:
        """BM25's statistics for a search: the query terms' document frequencies, the row
        count and average length, over the whole index or what ``readable`` holds (None when
        the reader may read nothing); and each segment's alive rows that ``allowed`` allows
        when the reader's statistics hold them already (the filter is the reader's)."""
        if readable is None:
            df = sum((hi - lo for lo, hi in ranges), np.zeros(len(ranges[0][0]), dtype=np.int64))
            return df, view.rows[level], view.avg_len[level], [None] * len(view.segments)
        reader = self._readers.get(view.stamp, view.segments, view.alive, level, readable)
        if reader.rows == 0:
            return None
        df = reader.frequencies(view.segments, level, ranges)
        kept = allowed is readable and level == "chunk"
        rows = reader.readable_rows if kept else [None] * len(view.segments)
        return df, reader.rows, reader.avg_len, rows

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

        ``allowed`` as in :meth:`search_lexical`. With ``within``, only those chunks are
        scored (second-stage re-scoring). The best candidates of a scan of the int8 codes are
        rescored with :attr:`full_vectors` (see ``dense.py``).
        """
        view = self.view()
        if view is None or view.live_docs == 0 or k <= 0:
            return []
        if within is None and allowed is not None and NARROW * len(allowed) < view.live_docs:
            within = allowed  # a narrow filter: read the readable chunks' vectors only
        return search_dense(
            view.segments,
            view.alive,
            np.asarray(vector, dtype=np.float32),
            k,
            level=level,
            allowed=allowed,
            within=within,
            full=self.full_vectors,
        )

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
        # names go on after every name a manifest has used, even when starting over: a
        # reader may still be loading the segments of the manifest being replaced
        counter = view.manifest.counter if view else 0
        if view is not None and (view.manifest.dim != dim or view.manifest.format < FORMAT):
            view = None  # a different model, or an index of an earlier format: start over
        segments = list(view.manifest.segments) if view else []
        loaded = list(view.segments) if view else []
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
        """Merge every segment into one and drop deleted chunks (after large ingests); a large
        segment written without its groups (``lists.py``) is written again with them."""
        view = self.view()
        if view is None:
            return
        whole = len(view.segments) <= 1 and not len(view.tombstones)
        if whole and not any(ungrouped(s) for s in view.segments):
            return
        if view.manifest.format < FORMAT:
            return  # rebuilt, not merged, when the index is next refreshed
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


def _top(
    ids: IdArray, scores: NDArray[np.float64], mask: NDArray[np.bool_], k: int
) -> list[ScoredId]:
    idx = np.flatnonzero(mask)
    if len(idx) == 0:
        return []
    if len(idx) > k:
        idx = idx[np.argpartition(-scores[idx], k - 1)[:k]]
    return [ScoredId(int(ids[i]), float(scores[i])) for i in idx]
