"""Segments: one batch of chunks indexed at chunk and sentence level, and merging batches."""

from __future__ import annotations

import numpy as np

from shirabe.stores.bm25 import term_hash
from shirabe.stores.embedded.segments import CodedVectors, build_segment, merge_segments
from shirabe.stores.protocol import Level

from tests.stores.embedded.test_index import DIM, DOCS


def test_a_segment_holds_chunks_in_id_order_with_their_sentences() -> None:
    segment = build_segment(list(reversed(DOCS)), DIM)
    assert segment.chunk_ids.tolist() == [1, 2, 3]
    # chunks 1 and 2 are their own single sentence, chunk 3 has two
    assert segment.sent_ptr.tolist() == [0, 1, 2, 4]
    assert segment.chunk_postings.lengths.tolist() == [3, 4, 3]
    assert segment.sent_postings.lengths.tolist() == [3, 4, 1, 2]
    lo, hi = segment.chunk_postings.lookup(np.asarray([term_hash("申請")], np.uint64))
    assert segment.chunk_postings.rows[lo[0] : hi[0]].tolist() == [0, 1]
    assert segment.chunk_postings.tfs[lo[0] : hi[0]].tolist() == [1.0, 2.0]


def test_merge_equals_single_segment() -> None:
    dead = np.asarray([2], np.int64)
    merged = merge_segments([build_segment(DOCS[:2], DIM), build_segment(DOCS[2:], DIM)], dead, DIM)
    direct = build_segment([DOCS[0], DOCS[2]], DIM)
    assert merged.chunk_ids.tolist() == direct.chunk_ids.tolist()
    assert merged.sent_ptr.tolist() == direct.sent_ptr.tolist()
    levels: tuple[Level, ...] = ("chunk", "sentence")
    for level in levels:
        got, want = merged.vectors(level), direct.vectors(level)
        assert isinstance(got, CodedVectors) and isinstance(want, CodedVectors)
        assert np.asarray(got.codes).tolist() == np.asarray(want.codes).tolist()
        assert np.asarray(got.scales).tolist() == np.asarray(want.scales).tolist()
        assert np.asarray(got.ids).tolist() == np.asarray(want.ids).tolist()
    for level in levels:
        a, b = merged.postings(level), direct.postings(level)
        assert a.terms.tolist() == b.terms.tolist()
        assert a.term_ptr.tolist() == b.term_ptr.tolist()
        assert a.rows.tolist() == b.rows.tolist()
        assert a.lengths.tolist() == b.lengths.tolist()
