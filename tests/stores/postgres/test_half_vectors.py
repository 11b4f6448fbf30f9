"""The server store's vectors in half precision: an index of float32 vectors (schema 11)
migrates to exactly the index a new ingest writes, and its searches score as before to within
half precision."""

from __future__ import annotations

import numpy as np
import psycopg
import pytest

from shirabe.records import Filters
from shirabe.stores.postgres import dense
from shirabe.stores.postgres.store import PostgresStore

from tests.indexing.index_snapshot import snapshot
from tests.stores.postgres.downgrades import originals, to_schema_11
from tests.stores.postgres.test_term_blocks import FILES, fill, open_store
from tests.stores.test_contract import COSINE, DIM, MODEL, unit

pytestmark = pytest.mark.postgres


def dense_results(store: PostgresStore) -> list[list[tuple[str, int, float]]]:
    """Chunk- and sentence-level vector searches, unfiltered and filtered, each hit by file
    and position with its score."""
    out = []
    for text in ("賞与 6月", "休暇 申請", "出張 旅費 規程"):
        q = unit(text)
        for level in ("chunk", "sentence"):
            for filters in (None, Filters(path_glob="/d/a.md")):
                found = store.search_dense(q, 4, filters, level=level)
                chunks = store.get_chunks([s.chunk_id for s in found])
                out.append(
                    [
                        (chunks[s.chunk_id].source, chunks[s.chunk_id].position, s.score)
                        for s in found
                    ]
                )
    return out


def test_float32_vectors_migrate_to_the_half_precision_index_an_ingest_writes(
    database_url: str,
) -> None:
    store = open_store(database_url)
    try:
        fill(store, FILES)
        written = snapshot(database_url)
        before = dense_results(store)
    finally:
        store.close()
    vectors = originals(FILES)
    with psycopg.connect(database_url, autocommit=True) as conn:
        to_schema_11(conn, vectors)
        assert sorted(r[0] for r in conn.execute("SELECT key FROM embeddings")) == sorted(vectors)
        old = conn.execute("SELECT vector FROM embeddings LIMIT 1").fetchone()
        assert old is not None and len(old[0]) == 4 * DIM
    store = open_store(database_url)  # migration 12, then the HNSW index is built at bind
    try:
        # PostgreSQL's rounding of the vectors and the cache's rewrite give what an ingest
        # writes, byte for byte
        assert snapshot(database_url) == written
        after = dense_results(store)
        assert [[hit[:2] for hit in found] for found in after] == [
            [hit[:2] for hit in found] for found in before
        ]
        for found, was in zip(after, before, strict=True):
            assert [h[2] for h in found] == pytest.approx([h[2] for h in was], abs=1e-6)
        cached = store.get_embeddings(MODEL, list(vectors))
        for key, vector in vectors.items():  # half precision of the float32 vector
            np.testing.assert_array_equal(cached[key], vector.astype(np.float16).astype(np.float32))
            assert float(cached[key] @ vector) == pytest.approx(1.0, abs=COSINE)
        with psycopg.connect(database_url) as conn:
            index = conn.execute(
                "SELECT indexdef FROM pg_indexes WHERE indexname = 'chunk_vectors_hnsw'"
            ).fetchone()
            assert index is not None and "halfvec_cosine_ops" in index[0]
            kinds = conn.execute(
                "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
                "WHERE attname IN ('embedding') AND attrelid IN "
                "('chunk_vectors'::regclass, 'sentences'::regclass)"
            ).fetchall()
            assert kinds == [("halfvec",), ("halfvec",)]
    finally:
        store.close()


def test_a_search_scores_with_the_stored_vector_and_the_full_query(database_url: str) -> None:
    """The score is the cosine of the stored (half-precision) vector with the float32 query,
    whichever way the search went: through the index, or every allowed row scored."""
    for exact_below in (0, 10**6):
        store = PostgresStore(database_url, hnsw=dense.HnswSearch(exact_below=exact_below))
        store.bind(embedding_model=MODEL, embedding_dim=DIM, tokenizer="split")
        try:
            if exact_below == 0:
                fill(store, FILES)
            vectors = originals(FILES)
            q = unit("規程 上限 申請")
            for filters in (None, Filters(path_glob="/d/b.md")):
                found = store.search_dense(q, 3, filters)
                chunks = store.get_chunks([s.chunk_id for s in found])
                for s in found:
                    c = chunks[s.chunk_id]
                    half = vectors[f"{c.source}#{c.position}"].astype(np.float16).astype(np.float32)
                    expected = float(half @ q) / float(np.linalg.norm(half) * np.linalg.norm(q))
                    assert s.score == pytest.approx(expected, abs=1e-6)
        finally:
            store.close()
