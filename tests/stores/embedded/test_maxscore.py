"""BM25's best rows by MaxScore: the top k every posting gives, with the commoner terms read
only for the rows that could still reach it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from shirabe.stores.bm25 import bm25_weights, idf, term_hash
from shirabe.stores.embedded import maxscore
from shirabe.stores.embedded.index import SegmentIndex
from shirabe.stores.embedded.maxscore import Bm25, best_rows
from shirabe.stores.embedded.postings import Postings
from shirabe.stores.embedded.segments import SegmentDoc

K1, B = 1.2, 0.75


def looked_up(postings: Postings, terms: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    hashes = np.asarray(sorted({term_hash(t) for t in terms}), dtype=np.uint64)
    lo, hi = postings.lookup(hashes)
    return lo, hi, idf(hi - lo, len(postings.lengths))


def top(rows: np.ndarray, scores: np.ndarray, k: int) -> list[tuple[int, float]]:
    order = np.lexsort((rows, -scores))[:k]
    return [(int(rows[i]), float(scores[i])) for i in order]


def test_a_hand_table() -> None:
    """Rows 0-3; "希少" in row 2 only, "共通" in every row. With k = 1 the rare term's row has
    a partial score (idf 1.2528 × weight 1) over the common term's bound (idf 0.1335 × 2.2),
    so "共通" is read for row 2 alone and the best row is row 2 with both terms' weights."""
    postings = Postings.build([["共通"], ["共通"], ["希少", "共通"], ["共通", "共通"]])
    lo, hi, term_idf = looked_up(postings, ["希少", "共通"])
    avg = 6 / 4
    rows, scores = best_rows(
        postings, lo, hi, term_idf, 1, lambda r: np.ones(len(r), np.bool_), Bm25(avg, K1, B)
    )
    rare = (
        idf(np.asarray([1]), 4)[0]
        * bm25_weights(np.asarray([1]), np.asarray([2]), avg_len=avg, k1=K1, b=B)[0]
    )
    common = (
        idf(np.asarray([4]), 4)[0]
        * bm25_weights(np.asarray([1]), np.asarray([2]), avg_len=avg, k1=K1, b=B)[0]
    )
    assert rows.tolist() == [2]
    assert scores.tolist() == pytest.approx([rare + common])


def corpus(seed: int) -> tuple[Postings, list[str], np.ndarray]:
    """2,000 random rows over a vocabulary of Zipf-like frequencies, a question of their
    words, and which rows are eligible (six in ten)."""
    rng = np.random.default_rng(seed)
    vocabulary = [f"w{i}" for i in range(300)]
    weights = 1.0 / np.arange(1, 301)
    weights /= weights.sum()
    token_rows = [
        list(rng.choice(vocabulary, size=int(rng.integers(1, 30)), p=weights)) for _ in range(2_000)
    ]
    query = list(rng.choice(vocabulary, size=int(rng.integers(2, 25)), p=weights))
    return Postings.build(token_rows), query, rng.random(2_000) < 0.6


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("k", [1, 10, 50])
def test_the_top_k_of_every_posting(seed: int, k: int) -> None:
    """Random rows over a vocabulary of Zipf-like frequencies, some rows not eligible: the same
    top k (rows and scores) as scoring every posting."""
    postings, query, allowed = corpus(seed)
    lo, hi, term_idf = looked_up(postings, query)
    avg = float(np.mean(postings.lengths))
    every = postings.score(lo, hi, term_idf, avg_len=avg, k1=K1, b=B)
    candidates = np.flatnonzero(allowed & (every > 0))
    rows, scores = best_rows(postings, lo, hi, term_idf, k, lambda r: allowed[r], Bm25(avg, K1, B))
    assert allowed[rows].all()
    assert len(rows) <= len(candidates)
    expected = top(candidates, every[candidates], k)
    found = top(rows, scores, k)
    assert [r for r, _ in found] == [r for r, _ in expected]
    assert [s for _, s in found] == pytest.approx([s for _, s in expected], rel=1e-12)


def test_the_common_terms_are_read_for_few_rows() -> None:
    """Over 2,000 rows of which over a thousand are eligible and score, the top 10 of a long
    question is found among under a tenth of them."""
    postings, query, allowed = corpus(0)
    lo, hi, term_idf = looked_up(postings, query)
    avg = float(np.mean(postings.lengths))
    every = postings.score(lo, hi, term_idf, avg_len=avg, k1=K1, b=B)
    rows, _ = best_rows(postings, lo, hi, term_idf, 10, lambda r: allowed[r], Bm25(avg, K1, B))
    scored = int((allowed & (every > 0)).sum())
    assert len(query) > 15 and scored > 1_000
    assert len(rows) < scored / 10


def test_an_index_searches_the_same_with_and_without_pruning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two segments, a removed chunk, a filter (with the reader's statistics or not) and the
    whole index: the same hits (ids and scores) whether every posting is read or the index
    prunes from the first one."""
    rng = np.random.default_rng(5)
    vocabulary = [f"w{i}" for i in range(200)]
    weights = 1.0 / np.arange(1, 201)
    weights /= weights.sum()
    docs = [
        SegmentDoc(
            i + 1,
            list(rng.choice(vocabulary, size=int(rng.integers(1, 25)), p=weights)),
            np.ones(2, np.float32) / np.sqrt(2),
        )
        for i in range(1_200)
    ]
    index = SegmentIndex(tmp_path / "segments")
    index.apply(generation=1, dim=2, add=docs[:700], remove=np.zeros(0, np.int64))
    index.apply(generation=2, dim=2, add=docs[700:], remove=np.asarray([4, 9], np.int64))
    allowed = np.sort(rng.choice(np.arange(1, 1_201), size=500, replace=False)).astype(np.int64)
    queries = [list(rng.choice(vocabulary, size=12, p=weights)) for _ in range(8)]

    def searches() -> list[list[tuple[int, float]]]:
        """Each query unfiltered, filtered, and filtered with the reader's statistics."""
        return [
            [(h.chunk_id, h.score) for h in index.search_lexical(q, 10, filter_, readable=stats)]
            for q in queries
            for filter_, stats in ((None, None), (allowed, None), (allowed, allowed))
        ]

    every = searches()
    monkeypatch.setattr(maxscore, "PRUNE_FROM", 0)
    pruned = searches()
    for found, expected in zip(pruned, every, strict=True):
        assert [i for i, _ in found] == [i for i, _ in expected]
        assert [s for _, s in found] == pytest.approx([s for _, s in expected], rel=1e-12)
        assert not {4, 9} & {i for i, _ in found}
    assert all(len(found) == 10 for found in every)
