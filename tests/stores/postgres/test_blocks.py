"""Posting blocks: bytes, impact order and cuts, by hand-computed tables."""

from __future__ import annotations

import numpy as np
import pytest

from shirabe.stores.postgres import blocks

# chunk, file, tf, length → impact tf / (tf + 1.2·(0.25 + 0.75·length/200))
TABLE = [
    (105, 7, 1, 10, 1 / (1 + 1.2 * (0.25 + 0.0375))),  # 0.7435
    (101, 7, 3, 250, 3 / (3 + 1.2 * (0.25 + 0.9375))),  # 0.6780
    (300, 9, 2, 40, 2 / (2 + 1.2 * (0.25 + 0.15))),  # 0.8065
]


def table_postings() -> blocks.Postings:
    return blocks.postings(*([int(row[i]) for row in TABLE] for i in range(4)))


def test_a_block_is_a_header_then_each_column_in_the_narrowest_type() -> None:
    p = table_postings()
    # header 21 bytes (version, count, smallest chunk 101, smallest file 7), 4 type codes,
    # then offsets 4, 0, 199 / 0, 0, 2, tfs and lengths: each fits a byte
    assert len(blocks.encode(p)) == 21 + 4 + 3 + 3 + 3 + 3
    wide = blocks.postings([10, 70_000], [1, 1], [1, 300], [5, 2**20])
    # chunk offsets 0, 69,990: 4 bytes; files 1 byte; tfs 2 bytes; lengths 4 bytes
    assert len(blocks.encode(wide)) == 21 + 4 + 2 * (4 + 1 + 2 + 4)
    for postings in (p, wide):
        back = blocks.decode(blocks.encode(postings))
        for column in ("chunks", "sources", "tfs", "lengths"):
            assert getattr(back, column).tolist() == getattr(postings, column).tolist()


def test_bad_blocks_are_refused() -> None:
    with pytest.raises(ValueError, match="at least one posting"):
        blocks.encode(blocks.postings([], [], [], []))
    with pytest.raises(ValueError, match="not negative"):
        blocks.encode(blocks.postings([1], [1], [-1], [3]))
    data = bytearray(blocks.encode(table_postings()))
    data[0] = 9
    with pytest.raises(ValueError, match="version 9"):
        blocks.decode(bytes(data))


def test_impact_is_the_bm25_term_frequency_part_at_length_200() -> None:
    p = table_postings()
    assert np.allclose(blocks.impact(p.tfs, p.lengths), [row[4] for row in TABLE], atol=1e-6)


def test_merged_blocks_hold_the_best_impact_first_each_in_chunk_order() -> None:
    cut = blocks.merged(table_postings(), size=2)
    # impacts: 300 (0.806) > 105 (0.744) > 101 (0.678)
    assert [b.chunks.tolist() for b in cut] == [[105, 300], [101]]
    assert [b.tfs.tolist() for b in cut] == [[1, 2], [3]]
    assert [b.sources.tolist() for b in cut] == [[7, 9], [7]]
    # equal impacts: by chunk id
    same = blocks.postings([8, 3, 5], [1, 1, 1], [2, 2, 2], [100, 100, 100])
    assert [b.chunks.tolist() for b in blocks.merged(same, size=1)] == [[3], [5], [8]]
