"""Looking ids up in a filter's allowed ids."""

from __future__ import annotations

import numpy as np
import pytest

from shirabe.stores.embedded.filters import SEARCH_BELOW, allowed_rows, contains


@pytest.mark.parametrize(
    ("allowed", "asked", "found"),
    [
        ((2, 5, 9), (1, 2, 5, 6, 9, 10), [False, True, True, False, True, False]),
        ((2, 5, 9), (9, 2), [True, True]),  # in any order
        ((2, 5, 9), (), []),
        ((), (1, 2), [False, False]),  # nothing allowed
        ((7,), (7, 8, 100), [True, False, False]),  # past the last allowed id
    ],
)
def test_few_ids_are_found_by_binary_search(
    allowed: tuple[int, ...], asked: tuple[int, ...], found: list[bool]
) -> None:
    as_ids = np.asarray(allowed, dtype=np.int64), np.asarray(asked, dtype=np.int64)
    assert contains(*as_ids).tolist() == found


def test_many_ids_give_the_same_answer_as_a_few_at_a_time() -> None:
    allowed = np.arange(0, 3 * SEARCH_BELOW, 3, dtype=np.int64)
    asked = np.arange(SEARCH_BELOW + 10, dtype=np.int64)
    whole = contains(allowed, asked)
    parts = np.concatenate([contains(allowed, part) for part in np.array_split(asked, 8)])
    assert whole.tolist() == parts.tolist()
    assert int(whole.sum()) == len(range(0, SEARCH_BELOW + 10, 3))


@pytest.mark.parametrize(
    ("chunk_ids", "allowed", "rows"),
    [
        ([3, 5, 9, 12], [1, 5, 12, 40], [False, True, False, True]),
        ([3, 5, 9, 12], [], [False, False, False, False]),
        ([3, 5, 9, 12], [2, 4, 13], [False, False, False, False]),
        ([3, 5, 9, 12], [3, 5, 9, 12], [True, True, True, True]),
        ([], [1, 2], []),
    ],
)
def test_allowed_rows(chunk_ids: list[int], allowed: list[int], rows: list[bool]) -> None:
    found = allowed_rows(np.asarray(chunk_ids, np.int64), np.asarray(allowed, np.int64))
    assert found.tolist() == rows
