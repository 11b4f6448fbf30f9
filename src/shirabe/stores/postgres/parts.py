"""The posting blocks partitioned by who may read (PostgreSQL LIST partitions per group set).

Every file is read by a set of groups (its ``groups`` tag, as the access map gave it: files
without groups are nobody's but an unfiltered search's). Each distinct set is a *reader set*
(``reader_sets``: its id and its groups as JSON text, the text the per-reader statistics are
kept under). The BM25 posting blocks (:data:`TABLES`) are partitioned by it: a file's blocks
are in its reader set's partition (``term_blocks_3``, …), merged apart. A search under an
access filter names the reader sets its groups may read, and PostgreSQL reads only their
partitions. The chunk vectors carry their reader set too, and each set has an HNSW graph of
its own beside the graph of every chunk (``graphs.py``). The filter on readable files is
still applied to every row, so a reader set only ever narrows what a search reads.

The tables read by chunk id (``sentences``, ``chunk_terms``: the rows of chunks a search has
already found, all readable) are not partitioned: a lookup by id reads only those rows either
way, and across partitions it would look in each.

A reader set's partitions and graph are made with the first file written under it, in that
file's write transaction (a partition created apart, then attached: attaching does not stop
searches). The BM25 statistics stay global and per group set (``readers.py``), so scores do
not depend on the partitions. Schema migration 13 (:func:`partition`) moved an existing index
over, with the vectors partitioned too; migration 14 (:func:`unpartition_vectors`) made them
one table again, with the graphs of ``graphs.py``.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

from shirabe.stores.postgres import graphs

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

VECTORS = (
    "chunk_id bigint PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE, "
    "source_id bigint NOT NULL, reader_set integer NOT NULL, embedding halfvec NOT NULL"
)
"""``chunk_vectors``' columns: one table, a row's reader set naming its graph."""

AT_SCHEMA_13: dict[str, Table] = {
    "chunk_vectors": Table(
        "chunk_id bigint NOT NULL REFERENCES chunks(id) ON DELETE CASCADE, "
        "source_id bigint NOT NULL, reader_set integer NOT NULL, embedding halfvec NOT NULL",
        "chunk_id, reader_set",
    ),
} | TABLES
"""The tables migration 13 partitioned (the vectors too, until migration 14)."""

WITH_READERS = (*TABLES, "chunk_vectors")
"""The tables whose rows carry their file's reader set."""

GROUPS = "coalesce(s.metadata ->> 'groups', '[]')"
"""A file's readers as text (``sources s``): the key of its reader set."""

_LOCK = 0x5348_4952_4142_45 + 3
"""Advisory lock (per transaction) taken to create a reader set: writers that are not
otherwise taking turns (a file's failure) do not create one twice."""


def create(conn: Any, table: str, name: str | None = None) -> None:
    """Table ``table`` (:data:`AT_SCHEMA_13`) as an empty partitioned table named ``name``."""
    spec, name = AT_SCHEMA_13[table], name or table
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
    """The id of the reader set ``readers`` (groups as JSON text), made with its partitions and
    its graph if it is new (in the caller's transaction)."""
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
    graphs.add(conn, int(made["id"]))
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
    for table in WITH_READERS:
        conn.execute(f"UPDATE {table} SET reader_set = %s WHERE source_id = %s", (new, source_id))
    return True


@dataclass(frozen=True, slots=True)
class Sets:
    """Reader sets, how many chunks they hold together, and those of them that hold any."""

    ids: list[int]
    chunks: int
    filled: tuple[int, ...]


def readable(conn: Any, groups: frozenset[str]) -> Sets:
    """The reader sets that ``groups`` may read (a set any of whose groups is among them)."""
    rows = conn.execute(
        "SELECT r.id, coalesce(l.rows, 0) AS n FROM reader_sets r LEFT JOIN reader_level_stats l "
        "ON l.readers = r.readers AND l.level = 'chunk' WHERE r.readers::jsonb ?| %s",
        (sorted(groups),),
    ).fetchall()
    counts = {int(r["id"]): int(r["n"]) for r in rows}
    return Sets(
        sorted(counts), sum(counts.values()), tuple(sorted(i for i, n in counts.items() if n))
    )


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
    for table in AT_SCHEMA_13:
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


def unpartition_vectors(conn: Any) -> None:
    """Schema migration 14's step: ``chunk_vectors`` one table again, with the same rows (and
    their reader sets); its graphs, the whole's and each reader set's (``graphs.py``), are built
    at the next start (``bulk.py``)."""
    started = time.perf_counter()
    conn.execute("ALTER TABLE chunk_vectors RENAME TO chunk_vectors_partitioned")
    for name in _catalog(conn, "indexes", "chunk_vectors_partitioned"):  # the names are reused
        conn.execute(f'ALTER INDEX "{name}" RENAME TO "{name}_partitioned"')
    conn.execute(f"CREATE TABLE chunk_vectors ({VECTORS})")
    conn.execute(
        "INSERT INTO chunk_vectors (chunk_id, source_id, reader_set, embedding) "
        "SELECT chunk_id, source_id, reader_set, embedding FROM chunk_vectors_partitioned"
    )
    conn.execute("DROP TABLE chunk_vectors_partitioned")
    conn.execute("CREATE INDEX chunk_vectors_by_source ON chunk_vectors (source_id)")
    conn.execute("ANALYZE chunk_vectors")  # a new table: its statistics for the planner
    log.info("chunk vectors made one table in %.1f s", time.perf_counter() - started)


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
