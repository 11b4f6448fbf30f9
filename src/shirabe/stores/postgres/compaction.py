"""Compaction: every term's merged blocks rebuilt from the chunks' stored terms.

Writes add fresh blocks (a file's postings of a term) and leave the postings of deleted chunks
in the merged blocks. A compaction reads every chunk's terms (PostgreSQL groups them by term),
reader set by reader set (``parts.py``), cuts each term's postings into merged blocks, best
impact first, into a new table per reader set, and puts each in its partition's place in one
short step at the end; searches read the old blocks until then. It runs at the end
of a bulk load, when a schema migration asks for it, from ``optimize``, and after an ingest
once the postings changed since the last one pass :data:`SHARE` of those it merged.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import numpy as np

from shirabe.stores.postgres import blocks, parts
from shirabe.stores.postgres.lexical import CHANGED

log = logging.getLogger(__name__)

SHARE = 0.1
"""Postings written or dropped since the last compaction, as a share of those it merged, past
which the next refresh compacts."""
AT_LEAST = 20_000
"""…and at least this many (a small index is cheap to search unmerged)."""
MERGED = "postings_merged"
"""``shirabe_meta``: how many postings the last compaction merged."""
REBUILD = "term_blocks"
"""``shirabe_meta``: present (``rebuild``) when the blocks must be built before searching."""

TABLE = """
    CREATE TABLE {name} (
        term text NOT NULL,
        rank integer NOT NULL,
        source_id bigint,
        data bytea NOT NULL
    )
"""
INDEXES = (
    "CREATE INDEX {name}_by_term ON {name} (term, rank)",
    "CREATE INDEX {name}_fresh ON {name} (source_id) WHERE rank < 0",
)
"""The blocks' table and indexes before they were partitioned (schema migration 11; now
``parts.TABLES``)."""

_PACKED = np.dtype([("chunk", ">i8"), ("source", ">i8"), ("tf", ">i4"), ("length", ">i4")])
_POSTINGS = """
    SELECT t.term, string_agg(int8send(t.chunk_id) || int8send(t.source_id) || int4send(t.tf)
        || int4send(t.length), ''::bytea) AS packed
    FROM (SELECT c.id AS chunk_id, c.source_id, c.length, u.term, count(*)::integer AS tf
          FROM chunks c JOIN sources s ON s.id = c.source_id
          CROSS JOIN LATERAL unnest(string_to_array(c.tokens, ' ')) AS u(term)
          WHERE s.reader_set = %s
          GROUP BY c.id, u.term) t
    GROUP BY t.term
"""
"""Each term's postings in one reader set's files, packed by the server (a row per term)."""


def rebuild(conn: Any) -> int:
    """Every term's merged blocks from the chunks' terms, in place of all blocks (in the
    caller's transaction, under the writer lock); the postings merged. Each reader set's
    blocks are built into a table of their own while searches read the old ones, and then
    every partition is swapped for its new table at once."""
    started = time.perf_counter()
    merged = 0
    sets = [int(r["id"]) for r in conn.execute("SELECT id FROM reader_sets ORDER BY id")]
    for part in sets:
        merged += _build(conn, part)
    for part in sets:  # the swaps, in a moment (searches wait from the first until commit)
        conn.execute(f"ALTER TABLE term_blocks DETACH PARTITION term_blocks_{part}")
        conn.execute(f"DROP TABLE term_blocks_{part}")
        conn.execute(f"ALTER TABLE term_blocks_next_{part} RENAME TO term_blocks_{part}")
        for suffix in ("by_term", "fresh"):
            index = f"term_blocks_{part}_{suffix}"
            conn.execute(f"ALTER INDEX term_blocks_next_{part}_{suffix} RENAME TO {index}")
        conn.execute(
            f"ALTER TABLE term_blocks ATTACH PARTITION term_blocks_{part} FOR VALUES IN ({part})"
        )
    conn.execute("DELETE FROM shirabe_meta WHERE key = ANY(%s)", ([CHANGED, REBUILD, MERGED],))
    conn.execute("INSERT INTO shirabe_meta VALUES (%s, %s)", (MERGED, str(merged)))
    log.info("merged %d postings in %.1f s", merged, time.perf_counter() - started)
    return merged


def _build(conn: Any, part: int) -> int:
    """Reader set ``part``'s merged blocks in a new table (``term_blocks_next_<part>``, made to
    be attached in its partition's place); the postings merged."""
    name = f"term_blocks_next_{part}"
    conn.execute(f"DROP TABLE IF EXISTS {name}")
    conn.execute(
        f"CREATE TABLE {name} (LIKE term_blocks INCLUDING DEFAULTS, CHECK (reader_set = {part}))"
    )
    merged = 0
    pending: list[tuple[str, int, None, int, bytes]] = []
    with conn.cursor(name="shirabe_compaction", binary=True) as terms:
        terms.itersize = 2000
        terms.execute(_POSTINGS, (part,))
        for row in terms:
            term, raw = row["term"], np.frombuffer(row["packed"], dtype=_PACKED)
            found = blocks.postings(raw["chunk"], raw["source"], raw["tf"], raw["length"])
            merged += len(found)
            pending.extend(
                (term, rank, None, part, blocks.encode(block))
                for rank, block in enumerate(blocks.merged(found))
            )
            if len(pending) >= _BATCH:  # between two fetches of the cursor
                _copy(conn, name, pending)
                pending = []
    _copy(conn, name, pending)
    for statement in parts.TABLES["term_blocks"].indexes:
        conn.execute(statement.format(name=name))
    return merged


_BATCH = 20_000
"""Blocks written at once."""


def _copy(conn: Any, name: str, rows: list[tuple[str, int, None, int, bytes]]) -> None:
    if not rows:
        return
    with conn.cursor().copy(
        f"COPY {name} (term, rank, source_id, reader_set, data) FROM STDIN (FORMAT BINARY)"
    ) as copy:
        copy.set_types(["text", "int4", "int8", "int4", "bytea"])
        for row in rows:
            copy.write_row(row)


def asked(conn: Any) -> bool:
    """Whether a migration asked for the blocks to be built."""
    row = conn.execute("SELECT 1 FROM shirabe_meta WHERE key = %s", (REBUILD,)).fetchone()
    return row is not None


def due(conn: Any, *, share: float = SHARE, at_least: int | None = None) -> bool:
    """Whether the blocks must be rebuilt (a migration asked), or enough postings changed: at
    least ``share`` of those merged last and ``at_least`` (:data:`AT_LEAST`)."""
    found = {
        r["key"]: r["value"]
        for r in conn.execute(
            "SELECT key, value FROM shirabe_meta WHERE key = ANY(%s)", ([CHANGED, MERGED, REBUILD],)
        )
    }
    if REBUILD in found:
        return True
    changed = int(found.get(CHANGED, 0))
    floor = AT_LEAST if at_least is None else at_least
    return changed > 0 and changed >= max(floor, share * int(found.get(MERGED, 0)))
