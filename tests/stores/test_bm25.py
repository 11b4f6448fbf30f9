"""BM25 formulas against values computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from shirabe.stores.bm25 import bm25_weights, idf


@pytest.mark.parametrize(
    ("df", "n", "expected"),
    [
        (1, 3, math.log(1 + 2.5 / 1.5)),
        (3, 3, math.log(1 + 0.5 / 3.5)),
        (0, 10, math.log(1 + 10.5 / 0.5)),
    ],
)
def test_idf(df: int, n: int, expected: float) -> None:
    assert float(idf(df, n)) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("tf", "dl", "avg", "expected"),
    [
        (2, 4, 4.0, 2 * 2.2 / (2 + 1.2)),  # average length: norm = k1
        (1, 2, 4.0, 1 * 2.2 / (1 + 1.2 * (0.25 + 0.75 * 0.5))),
        (1, 8, 4.0, 1 * 2.2 / (1 + 1.2 * (0.25 + 0.75 * 2))),
    ],
)
def test_bm25_weights(tf: int, dl: int, avg: float, expected: float) -> None:
    got = bm25_weights(np.asarray([tf]), np.asarray([dl]), avg_len=avg, k1=1.2, b=0.75)
    assert float(got[0]) == pytest.approx(expected)


def test_longer_documents_score_lower() -> None:
    w = bm25_weights(np.asarray([1, 1]), np.asarray([2, 20]), avg_len=5.0, k1=1.2, b=0.75)
    assert w[0] > w[1]
