"""Postings keep term frequencies in the smallest type that holds them."""

from __future__ import annotations

import numpy as np
import pytest

from shirabe.stores.embedded.postings import Postings, merge_postings, narrow_counts

# term frequencies and the type they are kept in
COUNTS = [
    ([1, 2, 255], np.uint8),
    ([1, 256], np.uint16),
    ([70000], np.uint32),
    ([1.0, 3.0], np.uint8),  # whole numbers, as float32 segments held them
    ([1.5], np.float32),
    ([-1], np.float32),
]


@pytest.mark.parametrize(("counts", "kind"), COUNTS)
def test_term_frequencies_take_the_smallest_type_that_holds_them(
    counts: list[float], kind: type
) -> None:
    narrowed = narrow_counts(np.asarray(counts))
    assert narrowed.dtype == kind and narrowed.tolist() == counts


def test_postings_built_and_merged_keep_one_byte_a_frequency() -> None:
    postings = Postings.build([["申請", "申請", "経費"], ["申請"]])
    assert postings.tfs.dtype == np.uint8
    assert sorted(postings.tfs.tolist()) == [1, 1, 2]
    merged = merge_postings([(postings, np.asarray([True, False])), (postings, np.ones(2, bool))])
    assert merged.tfs.dtype == np.uint8
    assert sorted(merged.tfs.tolist()) == [1, 1, 1, 2, 2]
