"""The segment index: BM25 and cosine over all segments, tombstones, merges, manifests."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Sequence
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest

from shirabe.stores.bm25 import bm25_weights, idf
from shirabe.stores.embedded.index import SegmentIndex
from shirabe.stores.embedded.quantize import dequantize, quantize
from shirabe.stores.embedded.segments import SegmentDoc, build_segment
from shirabe.stores.protocol import Level

DIM = 3


def unit(*xs: float) -> np.ndarray:
    v = np.asarray(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


DOCS = [
    SegmentDoc(1, ["有給", "休暇", "申請"], unit(1, 0, 0)),
    SegmentDoc(2, ["経費", "精算", "申請", "申請"], unit(0, 1, 0)),
    SegmentDoc(
        3,
        ["障害", "err-107", "復旧"],
        unit(0, 0, 1),
        sentence_tokens=[["障害"], ["err-107", "復旧"]],
        sentence_vectors=np.vstack([unit(0, 1, 1), unit(1, 0, 1)]),
    ),
]


def expected_bm25(term_tf: int, dl: int, df: int, n: int, avg: float) -> float:
    weight = bm25_weights(np.asarray([term_tf]), np.asarray([dl]), avg_len=avg, k1=1.2, b=0.75)
    return float(idf(df, n) * weight[0])


@pytest.fixture
def index(tmp_path: Path) -> SegmentIndex:
    idx = SegmentIndex(tmp_path / "segments")
    idx.apply(generation=1, dim=DIM, add=DOCS[:2], remove=np.zeros(0, np.int64))
    idx.apply(generation=2, dim=DIM, add=DOCS[2:], remove=np.zeros(0, np.int64))
    return idx


def test_bm25_uses_statistics_across_segments(index: SegmentIndex) -> None:
    hits = index.search_lexical(["申請"], k=10)
    avg = (3 + 4 + 3) / 3
    assert [h.chunk_id for h in hits] == [2, 1]
    assert hits[0].score == pytest.approx(expected_bm25(2, 4, 2, 3, avg))
    assert hits[1].score == pytest.approx(expected_bm25(1, 3, 2, 3, avg))


def test_ids_kept_whole_and_zero_scores_dropped(index: SegmentIndex) -> None:
    assert [h.chunk_id for h in index.search_lexical(["err-107"], k=10)] == [3]
    assert index.search_lexical(["存在しない"], k=10) == []
    assert index.search_lexical([], k=10) == []


def test_sentence_level_scores_best_sentence(index: SegmentIndex) -> None:
    hits = index.search_lexical(["err-107", "復旧"], k=10, level="sentence")
    assert [h.chunk_id for h in hits] == [3]
    dense = index.search_dense(unit(1, 0, 1), k=3, level="sentence")
    assert dense[0].chunk_id == 3
    assert dense[0].score == pytest.approx(1.0, abs=1e-6)
    # chunks without separate sentences are their own single sentence
    assert {h.chunk_id for h in dense} == {1, 2, 3}


def test_dense_chunk_level(index: SegmentIndex) -> None:
    hits = index.search_dense(unit(0, 1, 0), k=2)
    assert hits[0].chunk_id == 2
    assert hits[0].score == pytest.approx(1.0, abs=1e-6)


def test_allowed_filters_before_ranking(index: SegmentIndex) -> None:
    hits = index.search_lexical(["申請"], k=1, allowed=np.asarray([1], np.int64))
    assert [h.chunk_id for h in hits] == [1]


def test_tombstones_hide_chunks(index: SegmentIndex) -> None:
    index.apply(generation=3, dim=DIM, add=[], remove=np.asarray([2], np.int64))
    assert [h.chunk_id for h in index.search_lexical(["申請"], k=10)] == [1]
    assert 2 not in {h.chunk_id for h in index.search_dense(unit(0, 1, 0), k=10)}
    assert sorted(index.indexed_ids().tolist()) == [1, 3]
    assert index.generation == 3


def test_many_updates_merge_and_stay_correct(tmp_path: Path) -> None:
    idx = SegmentIndex(tmp_path / "segments")
    for i in range(1, 21):
        idx.apply(
            generation=i,
            dim=DIM,
            add=[SegmentDoc(i, ["共通", f"語{i}"], unit(1, i, 0))],
            remove=np.asarray([i - 1], np.int64) if i % 2 == 0 else np.zeros(0, np.int64),
        )
    view = idx.view()
    assert view is not None
    assert len(view.segments) <= 8
    live = sorted(idx.indexed_ids().tolist())
    assert live == [i for i in range(1, 21) if not (i % 2 == 1 and i + 1 <= 20)]
    assert sorted(h.chunk_id for h in idx.search_lexical(["共通"], k=100)) == live
    assert [h.chunk_id for h in idx.search_lexical(["語20"], k=5)] == [20]
    # nothing but the manifest, live segments and tombstones stays on disk
    names = {p.name for p in (tmp_path / "segments").iterdir()}
    assert names - {"manifest.json"} == set(view.manifest.segments) | (
        {view.manifest.tombstones} if view.manifest.tombstones else set()
    )


def test_reader_sees_new_manifest(tmp_path: Path) -> None:
    writer = SegmentIndex(tmp_path / "segments")
    reader = SegmentIndex(tmp_path / "segments")
    writer.apply(generation=1, dim=DIM, add=DOCS[:1], remove=np.zeros(0, np.int64))
    assert [h.chunk_id for h in reader.search_lexical(["休暇"], k=5)] == [1]
    writer.apply(generation=2, dim=DIM, add=DOCS[1:2], remove=np.asarray([1], np.int64))
    assert reader.search_lexical(["休暇"], k=5) == []
    assert [h.chunk_id for h in reader.search_lexical(["経費"], k=5)] == [2]


def test_reader_sees_a_manifest_that_kept_inode_size_and_time(tmp_path: Path) -> None:
    """A replaced manifest can look unchanged to stat (inode reused, same size, same
    modification tick); a view cached on that would make a writer index chunks twice."""
    directory = tmp_path / "segments"
    writer = SegmentIndex(directory)
    reader = SegmentIndex(directory)
    writer.apply(generation=1, dim=DIM, add=DOCS[:1], remove=np.zeros(0, np.int64))
    assert [h.chunk_id for h in reader.search_lexical(["休暇"], k=5)] == [1]
    manifest = directory / "manifest.json"
    before = manifest.stat()
    old = manifest.read_bytes()
    other = SegmentIndex(tmp_path / "other")
    other.apply(generation=1, dim=DIM, add=DOCS[1:2], remove=np.zeros(0, np.int64))
    published = other.view()
    assert published is not None
    (segment,) = published.manifest.segments
    shutil.copytree(tmp_path / "other" / segment, directory / "seg-999999")
    new = old.replace(b'"generation": 1', b'"generation": 2')
    current = writer.view()
    assert current is not None
    for name in current.manifest.segments:
        new = new.replace(name.encode(), b"seg-999999")
    assert len(new) == len(old)
    with manifest.open("r+b") as fh:  # same inode, same size
        fh.write(new)
    os.utime(manifest, ns=(before.st_atime_ns, before.st_mtime_ns))  # same tick
    assert (manifest.stat().st_ino, manifest.stat().st_mtime_ns, manifest.stat().st_size) == (
        before.st_ino,
        before.st_mtime_ns,
        before.st_size,
    )
    assert reader.search_lexical(["休暇"], k=5) == []
    assert [h.chunk_id for h in reader.search_lexical(["経費"], k=5)] == [2]


@pytest.mark.parametrize("level", ["chunk", "sentence"])
def test_rescoring_within_candidates_matches_full_scoring(
    index: SegmentIndex, level: Level
) -> None:
    within = np.asarray([1, 3], np.int64)
    terms = {"障害": 1.0, "申請": 2.0, "err-107": 3.0}
    full = {h.chunk_id: h.score for h in index.search_lexical(terms, 10, level=level)}
    part = {
        h.chunk_id: h.score for h in index.search_lexical(terms, 10, level=level, within=within)
    }
    assert part == pytest.approx({cid: s for cid, s in full.items() if cid in {1, 3}})
    q = unit(1, 1, 1)
    full_d = {h.chunk_id: h.score for h in index.search_dense(q, 10, level=level)}
    part_d = {h.chunk_id: h.score for h in index.search_dense(q, 10, level=level, within=within)}
    assert part_d == pytest.approx({cid: s for cid, s in full_d.items() if cid in {1, 3}})


def test_merges_keep_id_ranges_disjoint_when_the_largest_is_in_the_middle(
    tmp_path: Path,
) -> None:
    """Merging the segments on both sides of the largest made one spanning it, and the next
    full merge failed (seen as a failed ingest while queries ran)."""
    idx = SegmentIndex(tmp_path / "segments")
    generation = 0

    def add(ids: range) -> None:
        nonlocal generation
        generation += 1
        docs = [SegmentDoc(i, ["共通", f"語{i}"], unit(1, i, 0)) for i in ids]
        idx.apply(generation=generation, dim=DIM, add=docs, remove=np.zeros(0, np.int64))

    add(range(1, 2))  # a small segment first
    add(range(2, 40))  # the largest, in the middle once more come
    for start in range(40, 40 + 3 * 12, 3):
        add(range(start, start + 3))
    view = idx.view()
    assert view is not None
    ranges = sorted((int(s.chunk_ids[0]), int(s.chunk_ids[-1])) for s in view.segments)
    assert all(a[1] < b[0] for a, b in pairwise(ranges)), ranges
    idx.optimize()
    assert sorted(h.chunk_id for h in idx.search_lexical(["共通"], k=1000)) == list(range(1, 76))


def test_a_segment_left_by_a_killed_writer_is_replaced(tmp_path: Path) -> None:
    """A writer killed after saving a segment but before publishing the manifest leaves a
    directory under the next name; the next writer must overwrite it, not fail."""
    idx = SegmentIndex(tmp_path / "segments")
    idx.apply(generation=1, dim=DIM, add=DOCS[:1], remove=np.zeros(0, np.int64))
    view = idx.view()
    assert view is not None
    counter = view.manifest.counter
    orphan = tmp_path / "segments" / f"seg-{counter + 1:06d}"
    build_segment(DOCS[2:], DIM).save(orphan)  # saved, never published
    assert [h.chunk_id for h in idx.search_lexical(["障害"], k=5)] == []
    idx.apply(generation=2, dim=DIM, add=DOCS[1:2], remove=np.zeros(0, np.int64))
    assert [h.chunk_id for h in idx.search_lexical(["経費"], k=5)] == [2]
    assert idx.search_lexical(["障害"], k=5) == []  # the orphan's content never shows


class Recorded:
    """Full vectors by slot, recording which slots each search asked for."""

    def __init__(self, vectors: dict[int, np.ndarray]) -> None:
        self.vectors = vectors
        self.asked: list[list[int]] = []

    def __call__(self, slots: np.ndarray) -> np.ndarray:
        self.asked.append(sorted(slots.tolist()))
        return np.vstack([self.vectors[int(i)] for i in slots]).astype(np.float32)


# two vectors whose int8 codes rank them the other way round for the query (1, 1, 0)
AHEAD, BEHIND = unit(0.12, -0.11, -0.83), unit(-0.78, 0.79, -0.05)


def test_the_best_candidates_are_rescored_with_their_full_vectors(tmp_path: Path) -> None:
    full = Recorded({11: AHEAD, 12: BEHIND})
    idx = SegmentIndex(tmp_path / "segments", full_vectors=full)
    docs = [SegmentDoc(1, ["甲"], AHEAD, vector_id=11), SegmentDoc(2, ["乙"], BEHIND, vector_id=12)]
    idx.apply(generation=1, dim=DIM, add=docs, remove=np.zeros(0, np.int64))
    q = unit(1, 1, 0)
    hits = idx.search_dense(q, k=2)
    assert [h.chunk_id for h in hits] == [1, 2]
    assert [h.score for h in hits] == pytest.approx([AHEAD @ q, BEHIND @ q], abs=1e-7)
    assert full.asked == [[11, 12]]
    # without a source of full vectors, the codes score, and rank the other way round
    alone = SegmentIndex(tmp_path / "segments").search_dense(q, k=2)
    assert [h.chunk_id for h in alone] == [2, 1]
    assert abs(alone[0].score - float(BEHIND @ q)) > 1e-3


def test_the_scan_keeps_four_candidates_a_result_for_rescoring(tmp_path: Path) -> None:
    vectors = {100 + i: unit(1, i / 10, 0) for i in range(20)}
    full = Recorded(vectors)
    idx = SegmentIndex(tmp_path / "segments", full_vectors=full)
    docs = [SegmentDoc(i, ["共通"], vectors[100 + i], vector_id=100 + i) for i in range(1, 20)]
    idx.apply(generation=1, dim=DIM, add=docs, remove=np.zeros(0, np.int64))
    q = unit(0, 1, 0)
    hits = idx.search_dense(q, k=1)
    assert [h.chunk_id for h in hits] == [19]
    assert hits[0].score == pytest.approx(float(vectors[119] @ q), abs=1e-7)
    assert full.asked == [[116, 117, 118, 119]]  # the scan's best 4 of 19
    idx.search_dense(q, k=2)
    assert full.asked[-1] == list(range(112, 120))  # 8 for 2


def test_sentences_are_rescored_and_rows_without_a_full_vector_keep_their_codes(
    tmp_path: Path,
) -> None:
    full = Recorded({21: AHEAD, 22: BEHIND, 23: unit(-1, -1, 0)})  # −1: no cached vector
    idx = SegmentIndex(tmp_path / "segments", full_vectors=full)
    doc = SegmentDoc(
        1,
        ["甲", "乙", "丙"],
        unit(1, 1, 0),
        sentence_tokens=[["甲"], ["乙"], ["丙"]],
        sentence_vectors=np.vstack([AHEAD, BEHIND, unit(-1, -1, 0)]),
        sentence_vector_ids=[21, 22, 23],
    )
    other = SegmentDoc(
        2,
        ["丁", "戊"],
        unit(1, 0, 1),
        sentence_tokens=[["丁"], ["戊"]],
        sentence_vectors=np.vstack([BEHIND, unit(0, 0, 1)]),
        sentence_vector_ids=[-1, -1],
    )
    idx.apply(generation=1, dim=DIM, add=[doc, other], remove=np.zeros(0, np.int64))
    q = unit(1, 1, 0)
    hits = idx.search_dense(q, k=2, level="sentence")
    # chunk 1 by its first sentence, read in full (its codes rank the second higher); chunk 2
    # by what the codes of its first stand for, having no cached vector
    codes, scales = quantize(BEHIND.reshape(1, DIM))
    assert [h.chunk_id for h in hits] == [1, 2]
    assert hits[0].score == pytest.approx(float(AHEAD @ q), abs=1e-7)
    assert hits[1].score == pytest.approx(float(dequantize(codes, scales)[0] @ q), abs=1e-7)
    assert full.asked == [[21, 22, 23]]


def write_format_2(directory: Path, docs: Sequence[SegmentDoc], dim: int = DIM) -> None:
    """A segment index as releases before format 3 wrote it: float32 vectors."""
    segment = build_segment(docs, dim)
    folder = directory / "seg-000001"
    folder.mkdir(parents=True)
    ordered = sorted(docs, key=lambda d: d.chunk_id)
    sentences = [
        d.sentence_vectors if d.sentence_vectors is not None else d.vector.reshape(1, dim)
        for d in ordered
    ]
    arrays: dict[str, np.ndarray] = {
        "chunk_ids": segment.chunk_ids,
        "chunk_vectors": np.vstack([d.vector for d in ordered]).astype(np.float32),
        "sent_ptr": segment.sent_ptr,
        "sent_vectors": np.vstack(sentences).astype(np.float32),
    }
    levels: tuple[tuple[str, Level], ...] = (("chunk", "chunk"), ("sent", "sentence"))
    for prefix, level in levels:
        postings = segment.postings(level)
        for name in ("terms", "term_ptr", "rows", "lengths"):
            arrays[f"{prefix}_{name}"] = getattr(postings, name)
        arrays[f"{prefix}_tfs"] = np.asarray(postings.tfs, dtype=np.float32)
    for name, array in arrays.items():
        np.save(folder / f"{name}.npy", array)
    manifest = {"format": 2, "generation": 1, "dim": dim, "segments": [folder.name]}
    (directory / "manifest.json").write_text(
        json.dumps({**manifest, "tombstones": None, "counter": 1}), encoding="utf-8"
    )


def test_an_index_of_format_2_is_searched_until_it_is_rebuilt(tmp_path: Path) -> None:
    directory = tmp_path / "segments"
    write_format_2(directory, DOCS)
    idx = SegmentIndex(directory)
    assert idx.outdated and idx.generation == 1
    assert [h.chunk_id for h in idx.search_lexical(["申請"], k=10)] == [2, 1]
    dense = idx.search_dense(unit(1, 0, 1), k=3, level="sentence")
    assert dense[0].chunk_id == 3 and dense[0].score == pytest.approx(1.0, abs=1e-6)
    idx.optimize()  # not merged: rebuilt
    assert idx.outdated
    idx.apply(generation=2, dim=DIM, add=DOCS, remove=np.zeros(0, np.int64))  # starts over
    assert not idx.outdated
    assert json.loads((directory / "manifest.json").read_text())["format"] == 3
    assert sorted(idx.indexed_ids().tolist()) == [1, 2, 3]
    assert [h.chunk_id for h in idx.search_lexical(["申請"], k=10)] == [2, 1]
    assert not (directory / "seg-000001").exists()
