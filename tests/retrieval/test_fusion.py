"""Fusion and MMR against tables computed by hand."""

from __future__ import annotations

import numpy as np
import pytest

from shirabe.retrieval.fusion import (
    convex_fusion,
    min_max,
    mmr,
    reciprocal_rank_fusion,
    zscore_fusion,
)

A, B, C, D = 1, 2, 3, 4
RANKINGS = {"bm25": [(A, 10.0), (B, 6.0), (C, 2.0)], "dense": [(B, 0.9), (D, 0.7)]}


def ids(fused: list[tuple[int, float]]) -> list[int]:
    return [cid for cid, _ in fused]


def test_rrf_equal_weights() -> None:
    fused = dict(reciprocal_rank_fusion(RANKINGS, k=60))
    assert fused[A] == pytest.approx(1 / 61)
    assert fused[B] == pytest.approx(1 / 62 + 1 / 61)
    assert fused[C] == pytest.approx(1 / 63)
    assert fused[D] == pytest.approx(1 / 62)
    assert ids(reciprocal_rank_fusion(RANKINGS, k=60)) == [B, A, D, C]


def test_rrf_weighted() -> None:
    fused = reciprocal_rank_fusion(RANKINGS, k=60, weights={"bm25": 1.0, "dense": 0.5})
    assert dict(fused)[B] == pytest.approx(1 / 62 + 0.5 / 61)
    assert ids(fused) == [B, A, C, D]


def test_rrf_zero_weight_ignores_retriever() -> None:
    assert ids(reciprocal_rank_fusion(RANKINGS, weights={"dense": 0})) == [A, B, C]


def test_min_max() -> None:
    assert min_max([10.0, 6.0, 2.0]) == [1.0, 0.5, 0.0]
    assert min_max([3.0, 3.0]) == [1.0, 1.0]
    assert min_max([]) == []


def test_convex() -> None:
    fused = dict(convex_fusion(RANKINGS))
    assert fused[A] == pytest.approx(0.5)
    assert fused[B] == pytest.approx(0.75)
    assert fused[C] == pytest.approx(0.0)
    assert fused[D] == pytest.approx(0.0)


def test_zscore() -> None:
    fused = zscore_fusion(RANKINGS)
    table = dict(fused)
    z = 4 / np.sqrt(32 / 3)  # (10 - 6) / std([10, 6, 2])
    assert table[B] == pytest.approx((0 + 1) / 2)
    assert table[A] == pytest.approx((z - 1) / 2)
    assert table[C] == pytest.approx((-z - 1) / 2)
    assert table[D] == pytest.approx((-z - 1) / 2)
    assert ids(fused) == [B, A, C, D]


def test_zscore_weights_and_degenerate_lists() -> None:
    fused = zscore_fusion(
        {"bm25": [(A, 5.0)], "dense": [(B, 0.9), (A, 0.5)]}, weights={"bm25": 1, "dense": 3}
    )
    assert ids(fused) == [B, A]
    assert zscore_fusion({"bm25": []}) == []


def test_mmr_prefers_novelty() -> None:
    vectors = np.asarray([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    assert mmr(vectors, [1.0, 0.9, 0.5], lambda_=1.0, k=3) == [0, 1, 2]
    assert mmr(vectors, [1.0, 0.9, 0.5], lambda_=0.5, k=2) == [0, 2]
    assert mmr(vectors, [], lambda_=0.5, k=2) == []


def test_zscore_complete_lists_count_the_absent_as_zeros() -> None:
    rankings = {"bm25": [(A, 6.0)], "dense": [(B, 0.5), (C, 0.4), (A, 0.3)]}
    dense_z = 0.1 / np.sqrt(0.02 / 3)  # (0.5 - 0.4) / std([0.5, 0.4, 0.3])
    # bm25 over the pool is [6, 0, 0]: mean 2, std sqrt(8)
    lone, zero = 4 / np.sqrt(8), -2 / np.sqrt(8)
    table = dict(zscore_fusion(rankings, complete={"bm25"}))
    assert table[A] == pytest.approx((lone - dense_z) / 2)
    assert table[B] == pytest.approx((zero + dense_z) / 2)
    assert table[C] == pytest.approx((zero + 0) / 2)
    # without it, a lone hit has no spread: z = 0, like every id it did not return
    table = dict(zscore_fusion(rankings))
    assert table[A] == pytest.approx((0 - dense_z) / 2)
    assert table[B] == pytest.approx((0 + dense_z) / 2)
