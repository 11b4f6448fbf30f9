"""The server store by reader set: each file's posting blocks live in its group set's partition
and its vectors carry the set, a search under an access filter reads only the partitions and
walks only the graphs its groups may read, a file whose groups change moves, and indexes of
schemas 12 and 13 migrate to what an ingest writes."""

from __future__ import annotations

import json
import time
from typing import Any

import psycopg
import pytest
from psycopg.conninfo import make_conninfo
from psycopg.rows import dict_row

from shirabe.records import Filters
from shirabe.stores.postgres import compaction, graphs
from shirabe.stores.postgres.dense import HnswSearch
from shirabe.stores.postgres.store import PostgresStore
from shirabe.stores.protocol import SourceRecord

from tests.indexing.index_snapshot import differences, snapshot
from tests.stores.postgres.downgrades import to_schema_12, to_schema_13
from tests.stores.test_contract import DIM, K1, MODEL, B, put_file, unit

pytestmark = pytest.mark.postgres

GROUPS: dict[str, tuple[str, ...]] = {
    "/d/総務.md": ("総務",),
    "/d/経理.md": ("経理",),
    "/d/共有.md": ("総務", "経理"),
    "/d/人事.md": ("人事",),
}
TEXTS = {
    path: [f"規程 {dept} 申請。承認 上限", f"賞与 {dept} 支給。休暇 規程"]
    for path, dept in zip(GROUPS, ("総務", "経理", "共有", "人事"), strict=True)
}
SEARCH_TABLES = ("chunk_vectors", "term_blocks")
PARTITIONED = ("term_blocks",)


def open_store(url: str, hnsw: HnswSearch | None = None) -> PostgresStore:
    store = PostgresStore(url, k1=K1, b=B, hnsw=hnsw)
    store.bind(embedding_model=MODEL, embedding_dim=DIM, tokenizer="split")
    return store


def fill(store: PostgresStore) -> None:
    for path, texts in TEXTS.items():
        put_file(store, path, texts, groups=GROUPS[path])


def placed(url: str) -> set[tuple[str, str, str]]:
    """(table partition, file, the file's readers) of every row of the search tables that
    names a file."""
    out = set()
    with psycopg.connect(url) as conn:
        for table in SEARCH_TABLES:
            rows = conn.execute(
                f"SELECT DISTINCT x.tableoid::regclass::text, s.path, r.readers FROM {table} x "
                "JOIN sources s ON s.id = x.source_id JOIN reader_sets r ON r.id = x.reader_set"
            ).fetchall()
            out |= {(t, p, readers) for t, p, readers in rows}
    return out


def rows_of(url: str, path: str) -> set[tuple[str, str]]:
    """(table partition, readers) of file ``path``'s rows in the search tables."""
    return {(t, readers) for t, p, readers in placed(url) if p == path}


def graph_of(url: str, reader_set: int) -> str:
    """The condition of reader set ``reader_set``'s HNSW graph (its partial index)."""
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT pg_get_expr(i.indpred, i.indrelid) FROM pg_index i "
            "WHERE i.indexrelid = to_regclass(%s)",
            (graphs.name(reader_set),),
        ).fetchone()
    assert row is not None, f"no graph of reader set {reader_set}"
    return f"WHERE {row[0]}"


def graph_scans(url: str) -> dict[str, int]:
    """How many times each HNSW graph was walked (PostgreSQL's statistics)."""
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT indexrelname, idx_scan FROM pg_stat_user_indexes "
            "WHERE relname = 'chunk_vectors' AND indexrelname LIKE 'chunk_vectors_hnsw%%'"
        ).fetchall()
    return {name: int(n) for name, n in rows}


def walked(url: str, filters: Filters | None) -> set[str]:
    """The graphs a chunk-level vector search under ``filters`` walks, from the statistics its
    connection leaves when it closes. A graph is always used (``exact_below`` 0), and a scan of
    the table is not considered (these few rows would be sorted whole)."""
    before = graph_scans(url)
    indexed = make_conninfo(url, options="-c enable_seqscan=off")
    store = open_store(indexed, HnswSearch(exact_below=0))
    try:
        assert store.search_dense(unit("規程 申請"), 3, filters)
    finally:
        store.close()
    for _ in range(100):  # a closing connection's counts arrive shortly after
        after = graph_scans(url)
        if after != before:
            break
        time.sleep(0.1)
    return {name for name, n in after.items() if n > before.get(name, 0)}


def partition_of(url: str, groups: tuple[str, ...]) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT id FROM reader_sets WHERE readers = %s", (json.dumps(list(groups)),)
        ).fetchone()
    assert row is not None
    return int(row[0])


def searches(store: PostgresStore, filters: Filters | None) -> set[str]:
    """The files found by every kind of search under ``filters``."""
    found = []
    query = {"規程": 1.0, "賞与": 1.0}
    found += store.search_lexical(query, 10, filters)
    pool = [s.chunk_id for s in found]
    found += store.search_lexical(query, 10, filters, level="sentence", within=pool)
    found += store.search_dense(unit("規程 申請"), 10, filters)
    found += store.search_dense(unit("規程 申請"), 10, filters, level="sentence", within=pool)
    chunks = store.get_chunks([s.chunk_id for s in found])
    return {c.source for c in chunks.values()}


def test_each_files_rows_are_in_the_partitions_of_its_group_set(database_url: str) -> None:
    store = open_store(database_url)
    try:
        fill(store)
        store.optimize()  # every block merged, each reader set's in its own partition
        rows = placed(database_url)
        for path, groups in GROUPS.items():
            part = partition_of(database_url, groups)
            mine = {(t, readers) for t, p, readers in rows if p == path}
            assert {t for t, _ in mine} == {"chunk_vectors"}  # merged blocks only (optimized)
            assert {readers for _, readers in mine} == {json.dumps(list(groups))}
            assert graph_of(database_url, part) == f"WHERE (reader_set = {part})"
        with psycopg.connect(database_url) as conn:
            merged = conn.execute(
                "SELECT DISTINCT tableoid::regclass::text, reader_set FROM term_blocks"
            ).fetchall()
        assert merged and all(t == f"term_blocks_{r}" for t, r in merged)
        assert len(merged) == len(GROUPS)
    finally:
        store.close()


def test_a_filtered_search_reads_only_the_partitions_its_groups_may_read(
    database_url: str,
) -> None:
    """Every posting partition of 経理's and 人事's reader sets is locked by another
    transaction: a reader of 総務 searches without touching them (its searches would wait for
    the lock and fail after lock_timeout), while an unfiltered search fails, which shows the
    locks hold."""
    store = open_store(database_url)
    try:
        fill(store)
        store.optimize()
    finally:
        store.close()
    others = [partition_of(database_url, ("経理",)), partition_of(database_url, ("人事",))]
    timed = make_conninfo(database_url, options="-c lock_timeout=3000")
    locker = psycopg.connect(database_url)
    store = open_store(timed)
    try:
        for part in others:
            for table in PARTITIONED:
                locker.execute(f"LOCK TABLE {table}_{part} IN ACCESS EXCLUSIVE MODE")
        assert searches(store, Filters(groups=frozenset({"総務"}))) == {"/d/総務.md", "/d/共有.md"}
        with pytest.raises(psycopg.errors.LockNotAvailable):
            searches(store, None)
    finally:
        locker.rollback()
        locker.close()
        store.close()
    store = open_store(database_url)
    try:  # with nothing locked, the same searches find every file their readers may read
        assert searches(store, Filters(groups=frozenset({"経理"}))) == {"/d/経理.md", "/d/共有.md"}
        assert searches(store, None) == set(GROUPS)
    finally:
        store.close()


def test_a_vector_search_walks_the_graphs_its_reader_may_read(database_url: str) -> None:
    """A reader of one department of four walks that set's graph alone; a search that may
    read every set (unfiltered, or a reader of them all) walks the graph of every chunk."""
    store = open_store(database_url)
    try:
        fill(store)
    finally:
        store.close()
    jinji = partition_of(database_url, ("人事",))
    assert walked(database_url, Filters(groups=frozenset({"人事"}))) == {graphs.name(jinji)}
    assert walked(database_url, None) == {graphs.WHOLE}
    everyone = Filters(groups=frozenset({"総務", "経理", "人事"}))
    assert walked(database_url, everyone) == {graphs.WHOLE}


def test_a_file_whose_groups_change_moves_to_their_partitions(database_url: str) -> None:
    store = open_store(database_url)
    try:
        fill(store)
        store.optimize()
        # written again under new groups (the access map changed)
        put_file(store, "/d/人事.md", TEXTS["/d/人事.md"], groups=("経理",))
        part = partition_of(database_url, ("経理",))
        assert rows_of(database_url, "/d/人事.md") == {
            ("chunk_vectors", json.dumps(["経理"])),
            (f"term_blocks_{part}", json.dumps(["経理"])),
        }
        keiri = Filters(groups=frozenset({"経理"}))
        assert "/d/人事.md" in searches(store, keiri)
        assert "/d/人事.md" not in searches(store, Filters(groups=frozenset({"人事"})))
        # a failed read takes the new tags (readers) and keeps the last good text under them
        info = store.get_source("/d/総務.md")
        assert info is not None
        failed = SourceRecord(
            path="/d/総務.md",
            sha256="0" * 64,
            size=1,
            mtime=1.0,
            metadata={"groups": json.dumps(["人事"])},
        )
        store.record_failure(failed, "読めません")
        jinji = partition_of(database_url, ("人事",))
        assert rows_of(database_url, "/d/総務.md") <= {
            ("chunk_vectors", json.dumps(["人事"])),
            (f"term_blocks_{jinji}", json.dumps(["人事"])),
        }
        jinji_reader = Filters(groups=frozenset({"人事"}))
        assert "/d/総務.md" not in searches(store, Filters(groups=frozenset({"総務"})))
        assert "/d/総務.md" in {
            c.source
            for c in store.get_chunks(
                [s.chunk_id for s in store.search_dense(unit("規程 申請"), 10, jinji_reader)]
            ).values()
        }
        with psycopg.connect(database_url, row_factory=dict_row) as conn:
            assert compaction.due(conn, at_least=1)  # its merged postings move at the next
        store.optimize()
        assert "/d/総務.md" in {
            c.source
            for c in store.get_chunks(
                [s.chunk_id for s in store.search_lexical({"総務": 1.0}, 10, jinji_reader)]
            ).values()
        }
    finally:
        store.close()


READERS = (("総務",), ("経理",), ("人事",), ("総務", "人事"))


def ingested(url: str) -> tuple[dict[str, list[tuple[Any, ...]]], dict[tuple[str, ...], set[str]]]:
    """The files written and optimized: the index's snapshot, and the files each of
    :data:`READERS` finds."""
    store = open_store(url)
    try:
        fill(store)
        store.optimize()
        return snapshot(url), {
            groups: searches(store, Filters(groups=frozenset(groups))) for groups in READERS
        }
    finally:
        store.close()


def reopened_as_ingested(
    url: str,
    written: dict[str, list[tuple[Any, ...]]],
    found: dict[tuple[str, ...], set[str]],
) -> None:
    """The index opened again (migrated, its indexes built at bind) is what :func:`ingested`
    wrote, and its readers find what they found there."""
    store = open_store(url)
    try:
        assert differences(snapshot(url), written) == {}
        assert {g: searches(store, Filters(groups=frozenset(g))) for g in found} == found
    finally:
        store.close()


def test_an_index_of_schema_12_migrates_to_the_partitions_an_ingest_writes(
    database_url: str,
) -> None:
    written, before = ingested(database_url)
    with psycopg.connect(database_url, autocommit=True) as conn:
        to_schema_12(conn)
        assert conn.execute("SELECT to_regclass('reader_sets')").fetchone() == (None,)
    reopened_as_ingested(database_url, written, before)  # migrations 13 and 14, then bind's
    assert {p for _t, p, _r in placed(database_url)} == set(GROUPS)


def test_an_index_of_schema_13_migrates_to_one_vector_table_with_a_graph_per_reader_set(
    database_url: str,
) -> None:
    written, before = ingested(database_url)
    with psycopg.connect(database_url, autocommit=True) as conn:
        to_schema_13(conn)
        kind = conn.execute("SELECT relkind FROM pg_class WHERE relname = 'chunk_vectors'")
        assert kind.fetchone() == ("p",)  # partitioned, as schema 13 kept it
    reopened_as_ingested(database_url, written, before)  # migration 14, then the graphs
    with psycopg.connect(database_url) as conn:
        kind = conn.execute("SELECT relkind FROM pg_class WHERE relname = 'chunk_vectors'")
        assert kind.fetchone() == ("r",)
        indexes = conn.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'chunk_vectors'"
        ).fetchall()
    sets = [partition_of(database_url, groups) for groups in GROUPS.values()]
    assert {name for (name,) in indexes} == {
        "chunk_vectors_pkey",
        "chunk_vectors_by_source",
        graphs.WHOLE,
        *(graphs.name(s) for s in sets),
    }
    for s in sets:
        assert graph_of(database_url, s) == f"WHERE (reader_set = {s})"
