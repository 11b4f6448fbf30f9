"""Each chunk's terms by row, for scoring chunks that are already known (``chunk_terms``).

Row 0 is the chunk, rows 1… its sentence rows. A chunk's entries are fixed-width records
(the term's 64-bit hash, the row, the term's count in it), those of the chunk and those of
its sentence rows apart, and its row lengths a list of counts, so the entries of a few hundred
chunks at one level are read in one query and scored in one NumPy pass: the exact BM25 of a
search's candidates at chunk level, and of its pool at sentence level, without a row per
posting. About 12 bytes a posting.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from shirabe.stores.bm25 import term_hash

ENTRY = np.dtype([("term", "<u8"), ("row", "<u2"), ("tf", "<u2")])
LENGTH = np.dtype("<u4")
_MAX = np.iinfo(np.uint16).max


def encode(tokens: Sequence[str], rows: Sequence[Sequence[str]]) -> tuple[bytes, bytes, bytes]:
    """A chunk's entries (of the chunk, of its sentence rows) and row lengths, given its terms
    and its sentence rows' terms."""
    if len(rows) >= _MAX:
        raise ValueError(f"a chunk of {len(rows)} sentence rows; at most {_MAX - 1}")
    records: list[tuple[int, int, int]] = []
    for row, terms in enumerate([tokens, *rows]):
        for term, tf in Counter(terms).items():
            if tf > _MAX:
                raise ValueError(f"a term counted {tf} times in one chunk; at most {_MAX}")
            records.append((term_hash(term), row, tf))
    entries = np.array(records, dtype=ENTRY)
    lengths = np.array([len(tokens), *(len(r) for r in rows)], dtype=LENGTH)
    whole = entries["row"] == 0
    return entries[whole].tobytes(), entries[~whole].tobytes(), lengths.tobytes()


@dataclass(frozen=True, slots=True)
class Stored:
    """Chunks' entries read together: ``owner`` is each entry's chunk (an index into ``ids``),
    ``lengths`` each entry's row length."""

    ids: NDArray[np.int64]
    entries: NDArray[np.void]
    owner: NDArray[np.int64]
    lengths: NDArray[np.int64]


def read(found: Sequence[tuple[int, bytes, bytes]]) -> Stored:
    """``(chunk id, entries, row lengths)`` of several chunks (the entries of one level) as one
    set of arrays."""
    ids = np.asarray([f[0] for f in found], dtype=np.int64)
    entries = np.frombuffer(b"".join(f[1] for f in found), dtype=ENTRY)
    counts = np.asarray([len(f[1]) // ENTRY.itemsize for f in found], dtype=np.int64)
    owner = np.repeat(np.arange(len(found), dtype=np.int64), counts)
    lengths = np.frombuffer(b"".join(f[2] for f in found), dtype=LENGTH).astype(np.int64)
    starts = np.concatenate(
        [[0], np.cumsum([len(f[2]) // LENGTH.itemsize for f in found])[:-1]]
    ).astype(np.int64)
    rows = entries["row"].astype(np.int64)
    return Stored(ids, entries, owner, lengths[starts[owner] + rows] if len(rows) else rows)


def score(
    stored: Stored,
    weights: dict[int, float],
    bm25: tuple[float, float, float],
    *,
    sentences: bool,
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Each chunk's BM25 (as a whole, or by its best sentence row) for query terms given by
    hash with their weight × idf; chunks without a query term are left out. Best first, ties
    by chunk id."""
    hashes = np.asarray(sorted(weights), dtype=np.uint64)
    w = np.asarray([weights[int(h)] for h in hashes], dtype=np.float64)
    e = stored.entries
    rows = e["row"].astype(np.int64)
    keep = np.isin(e["term"], hashes) & ((rows > 0) if sentences else (rows == 0))
    if not keep.any():
        return np.zeros(0, np.int64), np.zeros(0, np.float64)
    tf = e["tf"][keep].astype(np.float64)
    a, b, c = bm25
    weight = w[np.searchsorted(hashes, e["term"][keep])]
    part = weight * tf * a / (tf + b + c * stored.lengths[keep])
    owner, row = stored.owner[keep], rows[keep]
    span = int(rows.max()) + 1  # rows of one chunk: a key per (chunk, row)
    unique, inverse = np.unique(owner * span + row, return_inverse=True)
    per_row = np.bincount(inverse, weights=part)
    row_owner = unique // span
    best = np.full(len(stored.ids), -np.inf)
    np.maximum.at(best, row_owner, per_row)
    present = np.flatnonzero(np.isfinite(best))
    ids, scores = stored.ids[present], best[present]
    order = np.lexsort((ids, -scores))
    return ids[order], scores[order]


TABLE = """
    CREATE TABLE chunk_terms (
        chunk_id bigint PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
        source_id bigint NOT NULL,
        chunk_entries bytea NOT NULL,
        sentence_entries bytea NOT NULL,
        lengths bytea NOT NULL
    )
"""


Terms = tuple[int, int, Sequence[str], Sequence[Sequence[str]]]
"""A chunk's id, its file's id, its terms and its sentence rows' terms."""


def write(conn: Any, chunks: Sequence[Terms]) -> None:
    """The ``chunk_terms`` rows of ``chunks``."""
    with conn.cursor().copy(
        "COPY chunk_terms (chunk_id, source_id, chunk_entries, sentence_entries, lengths) "
        "FROM STDIN (FORMAT BINARY)"
    ) as copy:
        copy.set_types(["int8", "int8", "bytea", "bytea", "bytea"])
        for cid, source_id, tokens, rows in chunks:
            copy.write_row((cid, source_id, *encode(tokens, rows)))


def postings_of(conn: Any, source_id: int) -> int:
    """How many chunk postings file ``source_id``'s chunks hold."""
    row = conn.execute(
        "SELECT coalesce(sum(length(chunk_entries)), 0) AS n FROM chunk_terms WHERE source_id = %s",
        (source_id,),
    ).fetchone()
    return int(row["n"]) // ENTRY.itemsize


def fill(conn: Any) -> int:
    """Rows for the chunks that have none (an index made before ``chunk_terms``), from their
    stored terms; how many were written."""
    written = 0
    while True:
        found = conn.execute(
            "SELECT c.id, c.source_id, c.tokens, c.sentence_tokens, c.own_sentence FROM chunks c "
            "WHERE NOT EXISTS (SELECT 1 FROM chunk_terms f WHERE f.chunk_id = c.id) "
            "ORDER BY c.id LIMIT 1000"
        ).fetchall()
        if not found:
            return written
        chunks: list[Terms] = []
        for r in found:
            tokens = _split(r["tokens"])
            rows = [tokens] if r["own_sentence"] else [_split(x) for x in r["sentence_tokens"]]
            chunks.append((int(r["id"]), int(r["source_id"]), tokens, rows))
        write(conn, chunks)
        written += len(found)


def _split(terms: str) -> list[str]:
    """Stored terms (space-separated) as a list."""
    return terms.split(" ") if terms else []
