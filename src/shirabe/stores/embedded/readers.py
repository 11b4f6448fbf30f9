"""BM25's collection statistics over what one reader may read.

A score computed with the statistics of the whole index tells a reader about documents they
may not read: a word that also appears in a restricted file is rarer-looking than its twin that
does not, so it scores lower. A filtered search therefore scores with the document
frequencies, row count and average length of the rows its filter allows, as an index holding
only those documents would. Row counts and lengths are kept per allowed-id array (readers of the
same groups share one) and index snapshot; document frequencies are counted for each query from
the query terms' postings, which scoring reads anyway.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from shirabe.stores.embedded.filters import contains
from shirabe.stores.embedded.segments import IdArray, Segment
from shirabe.stores.protocol import Level

KEPT = 8
"""Allowed-id arrays whose statistics are kept (one per group set in use, at most)."""


@dataclass(frozen=True, slots=True)
class Collection:
    """The rows of one level that a reader may read, segment by segment, and their count
    and average length. Deleted rows are not counted (an index of only those documents
    would not hold them)."""

    readable_rows: list[NDArray[np.bool_]]
    rows: int
    avg_len: float

    def frequencies(
        self,
        segments: Sequence[Segment],
        level: Level,
        ranges: Sequence[tuple[NDArray[np.int64], NDArray[np.int64]]],
    ) -> NDArray[np.int64]:
        """For each looked-up term, the readable rows holding it."""
        df = np.zeros(len(ranges[0][0]) if ranges else 0, dtype=np.int64)
        for seg, ok, (lo, hi) in zip(segments, self.readable_rows, ranges, strict=True):
            rows = seg.postings(level).rows
            for j in np.flatnonzero(hi > lo):
                df[j] += int(np.count_nonzero(ok[np.asarray(rows[lo[j] : hi[j]])]))
        return df


def collection(
    segments: Sequence[Segment],
    alive: Sequence[NDArray[np.bool_]],
    level: Level,
    readable: IdArray,
) -> Collection:
    """The statistics of ``level`` over the live rows of the chunks in ``readable``
    (sorted ids)."""
    masks: list[NDArray[np.bool_]] = []
    rows = 0
    total = 0.0
    for seg, live in zip(segments, alive, strict=True):
        docs = np.asarray(live) & contains(readable, np.asarray(seg.chunk_ids))
        if level == "chunk":
            ok = docs
        else:
            ptr = np.asarray(seg.sent_ptr)
            ok = np.repeat(docs, np.diff(ptr))
        lengths = np.asarray(seg.postings(level).lengths)
        rows += int(np.count_nonzero(ok))
        total += float(lengths[ok].sum())
        masks.append(ok)
    return Collection(masks, rows, total / rows if rows else 0.0)


class ReaderCollections:
    """:func:`collection`, kept per index snapshot, allowed-id array and level. The arrays
    come from the store's cache of allowed ids (one per filter and generation); an entry holds
    its array, so the array's identity cannot be reused while the entry lives."""

    def __init__(self, size: int = KEPT) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._kept: OrderedDict[tuple[bytes, int, Level], tuple[IdArray, Collection]] = (
            OrderedDict()
        )

    def get(
        self,
        stamp: bytes,
        segments: Sequence[Segment],
        alive: Sequence[NDArray[np.bool_]],
        level: Level,
        readable: IdArray,
    ) -> Collection:
        key = (stamp, id(readable), level)
        with self._lock:
            entry = self._kept.get(key)
            if entry is not None and entry[0] is readable:
                self._kept.move_to_end(key)
                return entry[1]
        found = collection(segments, alive, level, readable)
        with self._lock:
            self._kept[key] = (readable, found)
            while len(self._kept) > self._size:
                self._kept.popitem(last=False)
        return found
