"""The server store's embedding cache of schema 14 (each row under its model's name and its key
as text) migrates to rows under the model's number and the key's digest: the index an ingest
writes, and every cached vector found again by its key."""

from __future__ import annotations

import psycopg
import pytest

from shirabe.stores.postgres.store import PostgresStore

from tests.indexing.index_snapshot import differences, snapshot
from tests.stores.postgres.downgrades import to_schema_14
from tests.stores.test_contract import DIM, K1, MODEL, B, put_file

pytestmark = pytest.mark.postgres

TEXTS = {
    "/d/総務/規程.md": ["規程 申請。承認 上限", "賞与 支給。休暇 規程"],
    "/d/経理/ＡＱ－３００ 仕様.md": ["価格 税込。型番 ＡＱ－３００"],
}


def open_store(url: str) -> PostgresStore:
    store = PostgresStore(url, k1=K1, b=B)
    store.bind(embedding_model=MODEL, embedding_dim=DIM, tokenizer="split")
    return store


def cache_keys(url: str) -> list[str]:
    """Every key the index's chunks name (their own vector's and their sentences')."""
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT DISTINCT jsonb_array_elements_text(vector_keys) FROM chunks"
        ).fetchall()
    return [key for (key,) in rows]


def test_a_cache_of_text_keys_migrates_to_the_rows_an_ingest_writes(database_url: str) -> None:
    store = open_store(database_url)
    try:
        for path, texts in TEXTS.items():
            put_file(store, path, texts)
        keys = cache_keys(database_url)
        cached = store.get_embeddings(MODEL, keys)
        written = snapshot(database_url)
    finally:
        store.close()
    assert len(cached) == len(keys) == 9  # three chunks of two sentences each
    with psycopg.connect(database_url, autocommit=True) as conn:
        to_schema_14(conn)
        text_keys = conn.execute("SELECT model, key FROM embeddings").fetchall()
    assert sorted(text_keys) == sorted((MODEL, key) for key in keys)
    store = open_store(database_url)  # migration 15
    try:
        assert differences(snapshot(database_url), written) == {}
        found = store.get_embeddings(MODEL, [*keys, "/d/総務/規程.md#9"])
        assert found.keys() == cached.keys()
        for key, vector in cached.items():
            assert found[key].tobytes() == vector.tobytes()
        assert store.get_embeddings("other/model", keys) == {}
    finally:
        store.close()
