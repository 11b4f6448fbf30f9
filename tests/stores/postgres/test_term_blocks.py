"""The server store's BM25 postings in term blocks: what a change leaves in merged blocks is
never found, a compaction clears it, and an index of postings rows (schema 10) migrates."""

from __future__ import annotations

import psycopg
import pytest

from shirabe.records import ScoredId
from shirabe.stores.postgres import compaction
from shirabe.stores.postgres.store import PostgresStore

from tests.stores.postgres.downgrades import originals, to_schema_11
from tests.stores.test_contract import DIM, K1, MODEL, B, put_file

pytestmark = pytest.mark.postgres

FILES = {
    "/d/a.md": ["給与 支払日 25日。賞与 6月", "賞与 6月 12月 賞与。支給 規程"],
    "/d/b.md": ["経費 精算 翌月 5日 経費 システム", "出張 旅費 規程。宿泊 上限"],
    "/d/c.md": ["休暇 申請 規程 承認", "有給 休暇 繰越。上限 20日"],
}
QUERIES = [{"賞与": 1.0}, {"規程": 1.0, "上限": 0.5}, {"休暇": 1.0, "申請": 1.0, "経費": 1.0}]


def open_store(url: str) -> PostgresStore:
    store = PostgresStore(url, k1=K1, b=B)
    store.bind(embedding_model=MODEL, embedding_dim=DIM, tokenizer="split")
    return store


def fill(store: PostgresStore, files: dict[str, list[str]]) -> None:
    for path, texts in files.items():
        put_file(store, path, texts, sentences=path != "/d/c.md")  # c: chunks as own sentence


def results(store: PostgresStore) -> list[list[tuple[str, int, float]]]:
    """Each query's chunk-level and sentence-level (within every chunk) ranking, by file and
    position with rounded scores."""
    out = []
    with psycopg.connect(store.url) as conn:
        every = [r[0] for r in conn.execute("SELECT id FROM chunks")]
    for query in QUERIES:
        for found in (
            store.search_lexical(query, 10),
            store.search_lexical(query, 10, level="sentence", within=every),
        ):
            out.append(described(store, found))
    return out


def described(store: PostgresStore, found: list[ScoredId]) -> list[tuple[str, int, float]]:
    chunks = store.get_chunks([s.chunk_id for s in found])
    return [
        (chunks[s.chunk_id].source, chunks[s.chunk_id].position, round(s.score, 9)) for s in found
    ]


def blocks_state(url: str) -> tuple[int, int, int]:
    """Fresh blocks, merged blocks, and merged postings of chunks that no longer exist."""
    from shirabe.stores.postgres import blocks

    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT rank, data FROM term_blocks").fetchall()
        ids = {r[0] for r in conn.execute("SELECT id FROM chunks")}
    dead = sum(
        int(chunk) not in ids
        for rank, data in rows
        if rank >= 0
        for chunk in blocks.decode(data).chunks
    )
    return sum(r[0] < 0 for r in rows), sum(r[0] >= 0 for r in rows), dead


def test_changed_files_leave_postings_no_search_finds_until_compacted(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = open_store(database_url)
    try:
        fill(store, FILES)
        store.optimize()
        assert blocks_state(database_url)[::2] == (0, 0)  # all merged, none dead
        changed = dict(FILES, **{"/d/a.md": ["賞与 12月 支給。規程 改定"]})
        put_file(store, "/d/a.md", changed["/d/a.md"])
        store.remove_source("/d/b.md")
        del changed["/d/b.md"]
        fresh, _merged, dead = blocks_state(database_url)
        assert fresh > 0 and dead > 0  # the old chunks of a and b are still in merged blocks
        after_change = results(store)
        with psycopg.connect(database_url) as conn:
            ids = {r[0] for r in conn.execute("SELECT id FROM chunks")}
        assert after_change and all(
            s.chunk_id in ids for q in QUERIES for s in store.search_lexical(q, 10)
        )
        store.refresh()  # not yet due: a few postings changed
        assert blocks_state(database_url)[0] == fresh
        monkeypatch.setattr(compaction, "AT_LEAST", 1)
        store.refresh()
        assert blocks_state(database_url)[::2] == (0, 0)
        assert results(store) == after_change
    finally:
        store.close()
    # the same files written once into a new index rank and score alike
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("DROP SCHEMA public CASCADE; CREATE SCHEMA public")
    fresh_store = open_store(database_url)
    try:
        fill(fresh_store, changed)
        assert results(fresh_store) == after_change
    finally:
        fresh_store.close()


DOWNGRADE = """
CREATE TABLE postings (
    term text NOT NULL, chunk_id bigint NOT NULL, source_id bigint NOT NULL,
    tf integer NOT NULL, length integer NOT NULL,
    PRIMARY KEY (term, chunk_id) INCLUDE (tf, length, source_id));
INSERT INTO postings SELECT t.term, c.id, c.source_id, count(*), c.length
    FROM chunks c, unnest(string_to_array(c.tokens, ' ')) t(term) GROUP BY t.term, c.id;
CREATE TABLE sentence_postings (
    term text NOT NULL, chunk_id bigint NOT NULL, source_id bigint NOT NULL, ord integer NOT NULL,
    tf integer NOT NULL, length integer NOT NULL,
    PRIMARY KEY (term, chunk_id, ord) INCLUDE (tf, length, source_id));
INSERT INTO sentence_postings SELECT t.term, c.id, c.source_id, e.ord - 1, count(*),
    cardinality(string_to_array(e.text, ' '))
    FROM chunks c CROSS JOIN LATERAL jsonb_array_elements_text(CASE WHEN c.own_sentence
        THEN jsonb_build_array(c.tokens) ELSE c.sentence_tokens END) WITH ORDINALITY e(text, ord)
    CROSS JOIN LATERAL unnest(string_to_array(e.text, ' ')) t(term)
    GROUP BY t.term, c.id, e.ord, e.text;
DROP TABLE term_blocks;
DROP TABLE chunk_terms;
ALTER TABLE chunks DROP COLUMN own_sentence;
DELETE FROM shirabe_meta WHERE key LIKE 'postings_%';
DELETE FROM shirabe_schema WHERE version = 11;
"""
"""An index as schema 10 kept it: a row per posting of each chunk and of each sentence row."""

SNAPSHOT = (
    "SELECT chunk_id, md5(chunk_entries), md5(sentence_entries), md5(lengths) FROM chunk_terms "
    "ORDER BY chunk_id"
)


def test_an_index_of_posting_rows_migrates_to_term_blocks(database_url: str) -> None:
    store = open_store(database_url)
    try:
        fill(store, FILES)
        before = results(store)
    finally:
        store.close()
    with psycopg.connect(database_url, autocommit=True) as conn:
        written = conn.execute(SNAPSHOT).fetchall()
        to_schema_11(conn, originals(FILES))
        conn.execute(DOWNGRADE)
        assert conn.execute("SELECT count(*) > 0 FROM sentence_postings").fetchone() == (True,)
    store = open_store(database_url)  # migrations 11 and 12, then the blocks are built at bind
    try:
        assert results(store) == before
        assert blocks_state(database_url) == (0, blocks_state(database_url)[1], 0)
        with psycopg.connect(database_url) as conn:
            # each chunk's terms by row, rebuilt from its stored terms as they were written
            assert conn.execute(SNAPSHOT).fetchall() == written
            gone = conn.execute("SELECT to_regclass('postings'), to_regclass('sentence_postings')")
            assert gone.fetchone() == (None, None)
            own = conn.execute(
                "SELECT s.path, bool_and(c.own_sentence) FROM chunks c "
                "JOIN sources s ON s.id = c.source_id GROUP BY s.path ORDER BY s.path"
            ).fetchall()
        # a's and b's chunks have sentence rows of their own (one sentence each counts too)
        assert own == [("/d/a.md", False), ("/d/b.md", False), ("/d/c.md", True)]
    finally:
        store.close()
