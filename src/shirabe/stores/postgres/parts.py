"""The search indexes partitioned by who may read (PostgreSQL LIST partitions per group set).

Every file is read by a set of groups (its ``groups`` tag, as the access map gave it: files
without groups are nobody's but an unfiltered search's). Each distinct set is a *reader set*
(``reader_sets``: its id and its groups as JSON text, the text the per-reader statistics are
kept under), and the two tables a search ranks from (:data:`TABLES`) are partitioned by it: a
file's chunk vectors and posting blocks are in its reader set's partitions (``chunk_vectors_3``,
``term_blocks_3``, …), each partition with its own HNSW graph and merged blocks. A search
under an access filter names the reader sets its groups may read, and PostgreSQL reads only
their partitions: the graphs it walks and the postings it reads hold only what the reader may
read. The filter on readable files is still applied to every row, so pruning only ever narrows
what a search reads.

The tables read by chunk id (``sentences``, ``chunk_terms``: the rows of chunks a search has
already found, all readable) are not partitioned: a lookup by id reads only those rows either
way, and across partitions it would look in each.

A reader set's partitions are created with the first file written under it, in that file's
write transaction (created apart, then attached: attaching does not stop searches). The BM25
statistics stay global and per group set (``readers.py``), so scores do not depend on the
partitions. Schema migration 13 (:func:`partition`) moves an existing index over.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Table:
    """A partitioned table: its columns (with ``reader_set``), key, and the indexes it keeps
    whatever the load (the HNSW graph and the by-file index of the vectors are built after a
    bulk load, ``bulk.py``)."""

    columns: str
    key: str
    indexes: tuple[str, ...] = ()


TABLES: dict[str, Table] = {
    "chunk_vectors": Table(
        "chunk_id bigint NOT NULL REFERENCES chunks(id) ON DELETE CASCADE, "
        "source_id bigint NOT NULL, reader_set integer NOT NULL, embedding halfvec NOT NULL",
        "chunk_id, reader_set",
    ),
    "term_blocks": Table(
        "term text NOT NULL, rank integer NOT NULL, source_id bigint, "
        "reader_set integer NOT NULL, data bytea NOT NULL",
        "",
        (
            "CREATE INDEX {name}_by_term ON {name} (term, rank)",
            "CREATE INDEX {name}_fresh ON {name} (source_id) WHERE rank < 0",
        ),
    ),
}
"""The tables partitioned by reader set. ``term_blocks``' indexes: each term's blocks in
order (fresh ones first), and a file's fresh blocks, to delete them."""

GROUPS = "coalesce(s.metadata ->> 'groups', '[]')"
"""A file's readers as text (``sources s``): the key of its reader set."""

_LOCK = 0x5348_4952_4142_45 + 3
"""Advisory lock (per transaction) taken to create a reader set: writers that are not
otherwise taking turns (a file's failure) do not create one twice."""


def create(conn: Any, table: str, name: str | None = None) -> None:
    """Table ``table`` (:data:`TABLES`) as an empty partitioned table named ``name``."""
    spec, name = TABLES[table], name or table
    key = f", PRIMARY KEY ({spec.key})" if spec.key else ""
    conn.execute(f"CREATE TABLE {name} ({spec.columns}{key}) PARTITION BY LIST (reader_set)")
    for statement in spec.indexes:
        conn.execute(statement.format(name=name))


def attach(conn: Any, table: str, reader_set: int, name: str | None = None) -> None:
    """An empty partition of ``table`` (or of the table named ``name``, made like it) for
    ``reader_set``: created apart and attached, which takes a lock that searches pass."""
    parent = name or table
    part = f"{parent}_{int(reader_set)}"
    conn.execute(
        f"CREATE TABLE {part} (LIKE {parent} INCLUDING DEFAULTS, "
        f"CHECK (reader_set = {int(reader_set)}))"
    )
    conn.execute(f"ALTER TABLE {parent} ATTACH PARTITION {part} FOR VALUES IN ({int(reader_set)})")


def reader_set(conn: Any, readers: str) -> int:
    """The id of the reader set ``readers`` (groups as JSON text), made with its partitions if
    it is new (in the caller's transaction)."""
    found = conn.execute("SELECT id FROM reader_sets WHERE readers = %s", (readers,)).fetchone()
    if found is not None:
        return int(found["id"])
    conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK,))
    found = conn.execute("SELECT id FROM reader_sets WHERE readers = %s", (readers,)).fetchone()
    if found is not None:
        return int(found["id"])
    made = conn.execute(
        "INSERT INTO reader_sets (readers) VALUES (%s) RETURNING id", (readers,)
    ).fetchone()
    for table in TABLES:
        attach(conn, table, int(made["id"]))
    log.info("reader set %d (%s): partitions made", made["id"], readers)
    return int(made["id"])


def of_source(conn: Any, source_id: int) -> int:
    """The reader set of file ``source_id``'s groups now, recorded on its row (``sources``):
    where its rows are written."""
    row = conn.execute(
        f"SELECT {GROUPS} AS readers FROM sources s WHERE s.id = %s", (source_id,)
    ).fetchone()
    found = reader_set(conn, str(row["readers"]))
    conn.execute("UPDATE sources SET reader_set = %s WHERE id = %s", (found, source_id))
    return found


def move(conn: Any, source_id: int) -> bool:
    """File ``source_id``'s rows into the reader set of its groups now (its tags changed
    without its chunks being written again: a failed read); whether they moved. Its postings in
    merged blocks stay where they are until the next compaction, which the move brings nearer:
    until then, readers of its new set find it by its vectors and its fresh blocks only, and
    those of its old set not at all (every row is still checked against the readable files)."""
    old = conn.execute("SELECT reader_set FROM sources WHERE id = %s", (source_id,)).fetchone()
    if old is None or old["reader_set"] is None:  # no rows anywhere (it never read)
        return False
    new = of_source(conn, source_id)
    if int(old["reader_set"]) == new:
        return False
    for table in TABLES:
        conn.execute(f"UPDATE {table} SET reader_set = %s WHERE source_id = %s", (new, source_id))
    return True


@dataclass(frozen=True, slots=True)
class Sets:
    """Reader sets, how many chunks they hold together, and how many of them hold any."""

    ids: list[int]
    chunks: int
    filled: int


def readable(conn: Any, groups: frozenset[str]) -> Sets:
    """The reader sets that ``groups`` may read (a set any of whose groups is among them)."""
    rows = conn.execute(
        "SELECT r.id, coalesce(l.rows, 0) AS n FROM reader_sets r LEFT JOIN reader_level_stats l "
        "ON l.readers = r.readers AND l.level = 'chunk' WHERE r.readers::jsonb ?| %s",
        (sorted(groups),),
    ).fetchall()
    counts = [int(r["n"]) for r in rows]
    return Sets(sorted(int(r["id"]) for r in rows), sum(counts), sum(n > 0 for n in counts))


def partition(conn: Any) -> None:
    """Schema migration 13's step: every file gets the reader set of its groups, and the
    search tables become partitioned tables holding the same rows, each in its file's
    partition. The posting blocks are built again at the next start, by partition
    (``compaction.py``; the migration's next step asks for it), as is the HNSW graph
    (``bulk.py``)."""
    started = time.perf_counter()
    conn.execute(
        "CREATE TABLE reader_sets (id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY, "
        "readers text NOT NULL UNIQUE)"
    )
    conn.execute("ALTER TABLE sources ADD COLUMN reader_set integer")
    conn.execute(
        f"INSERT INTO reader_sets (readers) SELECT DISTINCT {GROUPS} FROM sources s ORDER BY 1"
    )
    conn.execute(
        f"UPDATE sources s SET reader_set = r.id FROM reader_sets r WHERE r.readers = {GROUPS}"
    )
    sets = [int(r[0]) for r in conn.execute("SELECT id FROM reader_sets ORDER BY id")]
    conn.execute("DROP INDEX IF EXISTS chunk_vectors_hnsw")
    conn.execute("DROP INDEX IF EXISTS chunk_vectors_by_source")
    for table in TABLES:
        conn.execute(f"ALTER TABLE {table} RENAME TO {table}_unpartitioned")
        for name in _catalog(conn, "primary key", f"{table}_unpartitioned"):
            conn.execute(f'ALTER TABLE {table}_unpartitioned DROP CONSTRAINT "{name}"')
        for name in _catalog(conn, "indexes", f"{table}_unpartitioned"):
            conn.execute(f'DROP INDEX "{name}"')
        create(conn, table)
        for found in sets:
            attach(conn, table, found)
        if table != "term_blocks":  # the blocks are merged again, by partition
            columns = _catalog(conn, "columns", f"{table}_unpartitioned")
            conn.execute(
                f"INSERT INTO {table} ({', '.join(columns)}, reader_set) "
                f"SELECT {', '.join('x.' + c for c in columns)}, s.reader_set "
                f"FROM {table}_unpartitioned x JOIN sources s ON s.id = x.source_id"
            )
        conn.execute(f"DROP TABLE {table}_unpartitioned")
    conn.execute("CREATE INDEX chunk_vectors_by_source ON chunk_vectors (source_id)")
    log.info("partitioned by %d reader sets in %.1f s", len(sets), time.perf_counter() - started)


_CATALOG = {
    "columns": "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0 "
    "AND NOT attisdropped ORDER BY attnum",
    "primary key": "SELECT conname FROM pg_constraint WHERE conrelid = %s::regclass "
    "AND contype = 'p'",
    "indexes": "SELECT indexrelid::regclass::text FROM pg_index WHERE indrelid = %s::regclass",
}
"""Names a table's columns, primary key constraint and indexes have (the migration's
connection gives rows as tuples)."""


def _catalog(conn: Any, what: str, table: str) -> list[str]:
    return [r[0] for r in conn.execute(_CATALOG[what], (table,)).fetchall()]
