"""Each chunk's terms by row, scored: hand-computed BM25 at chunk and sentence level."""

from __future__ import annotations

import pytest

from shirabe.stores.bm25 import term_hash
from shirabe.stores.postgres import forward

BM25 = (2.2, 0.3, 0.1)  # k1 + 1, k1·(1 − b), k1·b / avgdl


def chunks(*, sentences: bool) -> forward.Stored:
    """Two chunks' entries at one level, as a search reads them."""
    one = forward.encode(["a", "b", "a"], [["a", "b"], ["a"]])  # rows: chunk, 2 sentences
    two = forward.encode(["b", "c"], [["b", "c"]])
    level = 1 if sentences else 0
    return forward.read([(7, one[level], one[2]), (3, two[level], two[2])])


def test_a_chunk_is_entries_of_twelve_bytes_and_its_row_lengths() -> None:
    whole, sentences, lengths = forward.encode(["a", "b", "a"], [["a", "b"], ["a"]])
    assert len(whole) == 12 * 2  # a, b in the chunk
    assert len(sentences) == 12 * 3  # a, b in row 1; a in row 2
    assert len(lengths) == 4 * 3


def test_chunks_score_as_wholes_or_by_their_best_sentence() -> None:
    a = {term_hash("a"): 1.0}
    ids, scores = forward.score(chunks(sentences=False), a, BM25, sentences=False)
    # tf 2 in a chunk of 3 terms: 1 · 2 · 2.2 / (2 + 0.3 + 0.1 · 3)
    assert ids.tolist() == [7] and scores.tolist() == pytest.approx([4.4 / 2.6])
    ids, scores = forward.score(chunks(sentences=True), a, BM25, sentences=True)
    # row 1: 2.2 / (1 + 0.3 + 0.2) = 1.467; row 2: 2.2 / (1 + 0.3 + 0.1) = 1.571
    assert ids.tolist() == [7] and scores.tolist() == pytest.approx([2.2 / 1.4])
    both = {term_hash("b"): 2.0, term_hash("c"): 1.0}
    ids, scores = forward.score(chunks(sentences=False), both, BM25, sentences=False)
    # chunk 3: 2 · 2.2 / 1.5 + 1 · 2.2 / 1.5; chunk 7: 2 · 2.2 / (1 + 0.3 + 0.3)
    assert ids.tolist() == [3, 7]
    assert scores.tolist() == pytest.approx([6.6 / 1.5, 4.4 / 1.6])


def test_equal_scores_go_by_chunk_id_and_a_missing_term_scores_nothing() -> None:
    x = forward.encode(["x"], [["x"]])
    same = forward.read([(9, x[1], x[2]), (4, x[1], x[2])])
    ids, _scores = forward.score(same, {term_hash("x"): 1.0}, BM25, sentences=True)
    assert ids.tolist() == [4, 9]
    ids, scores = forward.score(
        chunks(sentences=True), {term_hash("zzz"): 1.0}, BM25, sentences=True
    )
    assert len(ids) == len(scores) == 0
