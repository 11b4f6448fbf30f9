"""The inverted file over a large segment's chunk vectors: how many groups and probes, groups
that hold every row once with their codes in group order, a probe of every group that is the
flat scan, and a segment index whose searches read the nearest groups and find what a flat scan
finds, before and after a save, and after a merge."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from shirabe.stores.embedded import lists
from shirabe.stores.embedded.index import SegmentIndex
from shirabe.stores.embedded.quantize import quantize, scan
from shirabe.stores.embedded.segments import CodedVectors, SegmentDoc

DIM = 16
TOPICS = 12


@pytest.mark.parametrize(
    ("rows", "groups"),
    [
        (0, 0),
        (49_999, 0),
        (50_000, 100),
        (50_249, 100),
        (50_250, 100),
        (50_251, 101),
        (1_000_000, 2_000),
    ],
)
def test_list_count(rows: int, groups: int) -> None:
    assert lists.list_count(rows) == groups


@pytest.mark.parametrize(
    ("groups", "read"),
    [(1, 1), (5, 5), (8, 8), (20, 8), (33, 9), (60, 15), (100, 25), (2_000, 500)],
)
def test_probes(groups: int, read: int) -> None:
    assert lists.probes(groups) == read


def clustered(n: int, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """``n`` unit vectors near one of :data:`TOPICS` directions, and each one's topic."""
    rng = np.random.default_rng(seed)
    topics = np.linalg.qr(rng.standard_normal((DIM, DIM)))[0][:TOPICS].astype(np.float32)
    topic = rng.integers(0, TOPICS, n)
    vectors = topics[topic] + 0.05 * rng.standard_normal((n, DIM)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True), topic


def grouped_rows(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, lists.Lists]:
    """:func:`clustered` rows, their codes and scales, and their groups."""
    vectors, topic = clustered(n)
    codes, scales = quantize(vectors)
    grouped = lists.build_lists(codes, scales)
    assert grouped is not None
    return vectors, topic, codes, scales, grouped


@pytest.fixture
def small_groups(monkeypatch: pytest.MonkeyPatch) -> None:
    """Groups for segments of 600 rows and more, of about 50 rows."""
    monkeypatch.setattr(lists, "MIN_ROWS", 600)
    monkeypatch.setattr(lists, "ROWS_PER_LIST", 50)


def test_groups_hold_every_row_once_with_its_codes(small_groups: None) -> None:
    _, topic, codes, scales, grouped = grouped_rows(1_000)
    assert grouped.count == 20
    assert sorted(grouped.rows.tolist()) == list(range(1_000))
    assert grouped.ptr[0] == 0 and grouped.ptr[-1] == 1_000
    assert np.all(np.diff(grouped.ptr) >= 0)
    assert np.array_equal(grouped.codes, codes[grouped.rows])
    assert np.array_equal(grouped.scales, scales[grouped.rows])
    for g in range(grouped.count):  # a group's rows ascend, and share a topic (well apart)
        members = grouped.rows[grouped.ptr[g] : grouped.ptr[g + 1]]
        assert np.all(np.diff(members) > 0)
        assert len(set(topic[members].tolist())) <= 1
    again = lists.build_lists(codes, scales)
    assert again is not None and np.array_equal(again.rows, grouped.rows)
    assert lists.build_lists(codes[:599], scales[:599]) is None


def test_reading_every_group_is_the_flat_scan(small_groups: None) -> None:
    vectors, _, codes, scales, grouped = grouped_rows(700)
    query = vectors[5]
    rows, scores = grouped.scan(query, grouped.count)
    flat = scan(codes, scales, query)
    assert sorted(rows.tolist()) == list(range(700))
    assert np.allclose(scores, flat[rows])


@pytest.mark.parametrize(
    ("groups", "runs"),
    [
        ([], []),
        ([0], [(0, 3)]),
        ([0, 1], [(0, 5)]),
        ([0, 2], [(0, 3), (5, 9)]),
        ([1, 2, 4], [(3, 12)]),  # group 3 holds no row: 2 and 4 are adjacent rows
        ([3], []),
    ],
)
def test_runs_join_adjacent_groups(groups: list[int], runs: list[tuple[int, int]]) -> None:
    """Groups of 3, 2, 4, 0 and 3 rows: rows 0-3, 3-5, 5-9, none, 9-12."""
    ptr = np.asarray([0, 3, 5, 9, 9, 12], dtype=np.int64)
    assert lists._runs(np.asarray(groups, dtype=np.int64), ptr) == runs


def test_the_nearest_groups_are_scored_as_the_flat_scan_scores_them(small_groups: None) -> None:
    vectors, _, codes, scales, grouped = grouped_rows(700)
    query = vectors[9]
    near, near_scores = grouped.scan(query)
    assert 0 < len(near) < 700
    assert len(set(near.tolist())) == len(near)
    assert np.allclose(near_scores, scan(codes, scales, query)[near])


def test_the_nearest_groups_hold_the_query_topics_rows(small_groups: None) -> None:
    vectors, topic, _, _, grouped = grouped_rows(1_000)
    for row in (0, 17, 999):
        rows, _ = grouped.scan(vectors[row])  # 8 of 20 groups
        assert len(rows) < 1_000
        assert set(np.flatnonzero(topic == topic[row]).tolist()) <= set(rows.tolist())


def docs(vectors: np.ndarray, first_id: int = 1) -> list[SegmentDoc]:
    return [SegmentDoc(first_id + i, [f"t{i % 7}"], vector) for i, vector in enumerate(vectors)]


def test_a_large_segment_is_searched_by_its_nearest_groups(
    small_groups: None, tmp_path: Path
) -> None:
    vectors, _ = clustered(1_400)
    grouped = SegmentIndex(tmp_path / "grouped")
    grouped.apply(generation=1, dim=DIM, add=docs(vectors), remove=np.zeros(0, np.int64))
    view = grouped.view()
    assert view is not None
    (segment,) = view.segments
    chunk_vectors = segment.vectors("chunk")
    assert isinstance(chunk_vectors, CodedVectors) and chunk_vectors.lists is not None
    assert segment.vectors("sentence").lists is None  # type: ignore[union-attr]
    codes, scales = quantize(vectors)  # no full vectors here: the codes' scores are returned
    exact = [
        np.argsort(-scan(codes, scales, vectors[row]), kind="stable")[:5] + 1
        for row in (3, 400, 1_399)
    ]
    for row, best in zip((3, 400, 1_399), exact, strict=True):
        found = grouped.search_dense(vectors[row], k=5)
        assert [h.chunk_id for h in found] == best.tolist()
    # the groups are saved with the segment, and a merge of segments groups the merged rows
    reopened = SegmentIndex(tmp_path / "grouped")
    assert [h.chunk_id for h in reopened.search_dense(vectors[3], k=5)] == exact[0].tolist()
    halves = SegmentIndex(tmp_path / "halves")
    halves.apply(generation=1, dim=DIM, add=docs(vectors[:500]), remove=np.zeros(0, np.int64))
    halves.apply(generation=2, dim=DIM, add=docs(vectors[500:], 501), remove=np.zeros(0, np.int64))
    halves.optimize()
    merged = halves.view()
    assert merged is not None and len(merged.segments) == 1
    assert merged.segments[0].vectors("chunk").lists is not None  # type: ignore[union-attr]
    assert [h.chunk_id for h in halves.search_dense(vectors[400], k=5)] == exact[1].tolist()


def test_optimize_groups_a_large_segment_written_without_groups(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    vectors, _ = clustered(700)
    index = SegmentIndex(tmp_path / "segments")
    index.apply(generation=1, dim=DIM, add=docs(vectors), remove=np.zeros(0, np.int64))
    before = index.view()
    assert before is not None and before.segments[0].vectors("chunk").lists is None  # type: ignore[union-attr]
    index.optimize()  # small: nothing to do
    assert index.view() is before
    monkeypatch.setattr(lists, "MIN_ROWS", 600)
    monkeypatch.setattr(lists, "ROWS_PER_LIST", 50)
    index.optimize()
    after = index.view()
    assert after is not None and after is not before and len(after.segments) == 1
    assert after.segments[0].vectors("chunk").lists is not None  # type: ignore[union-attr]
    assert np.array_equal(after.segments[0].chunk_ids, before.segments[0].chunk_ids)
