"""Indexes as older schemas kept them, made from a current one, for the migrations' tests."""

from __future__ import annotations

from typing import Any

import numpy as np

from shirabe.stores.postgres import cache, compaction, dense, graphs, parts

from tests.stores.test_contract import DIM, unit


def originals(files: dict[str, list[str]]) -> dict[str, np.ndarray]:
    """Each cache key's float32 vector as ``fill`` embeds it (a chunk's text, each sentence's)."""
    out = {}
    for path, texts in files.items():
        for position, text in enumerate(texts):
            out[f"{path}#{position}"] = unit(text)
            if path != "/d/c.md":
                parts = [p.strip() for p in text.split("。") if p.strip()]
                for i, part in enumerate(parts):
                    out[f"{path}#{position}.{i}"] = unit(part)
    return out


UNPARTITIONED = {
    "chunk_vectors": "CREATE TABLE chunk_vectors (chunk_id bigint PRIMARY KEY REFERENCES "
    "chunks(id) ON DELETE CASCADE, source_id bigint NOT NULL, embedding halfvec NOT NULL); "
    "CREATE INDEX chunk_vectors_by_source ON chunk_vectors (source_id)",
    "term_blocks": compaction.TABLE.format(name="term_blocks")
    + ";"
    + ";".join(i.format(name="term_blocks") for i in compaction.INDEXES),
}
"""The search tables as schema 12 kept them (before migration 13 partitioned them)."""


def to_schema_14(conn: Any) -> None:
    """The index as schema 14 kept it: the embedding cache's rows under their model's name and
    their key as text (each key one a chunk names, as every key of these tests' indexes is)."""
    conn.execute(
        "CREATE TABLE embeddings_text (model text NOT NULL, key text NOT NULL, "
        "vector bytea NOT NULL, PRIMARY KEY (model, key))"
    )
    conn.execute(
        "INSERT INTO embeddings_text SELECT m.name, k.key, e.vector FROM embeddings e "
        "JOIN embedding_models m ON m.id = e.model "
        "JOIN (SELECT DISTINCT jsonb_array_elements_text(vector_keys) AS key FROM chunks) k "
        f"ON {cache.digest_sql('k.key')} = e.key"
    )
    (kept,) = conn.execute("SELECT count(*) FROM embeddings_text").fetchone()
    (cached,) = conn.execute("SELECT count(*) FROM embeddings").fetchone()
    assert kept == cached, "a cached vector's key is named by no chunk"
    conn.execute("DROP TABLE embeddings, embedding_models")
    conn.execute("ALTER TABLE embeddings_text RENAME TO embeddings")
    conn.execute("ALTER INDEX embeddings_text_pkey RENAME TO embeddings_pkey")
    conn.execute("DELETE FROM shirabe_schema WHERE version = 15")


def to_schema_13(conn: Any) -> None:
    """The index as schema 13 kept it: the chunk vectors partitioned by reader set like the
    posting blocks, the same rows in each set's partition, an HNSW graph in each."""
    to_schema_14(conn)
    conn.execute("CREATE TEMP TABLE kept AS SELECT * FROM chunk_vectors")
    conn.execute("DROP TABLE chunk_vectors")
    parts.create(conn, "chunk_vectors")
    for (found,) in conn.execute("SELECT id FROM reader_sets ORDER BY id").fetchall():
        parts.attach(conn, "chunk_vectors", found)
    conn.execute("INSERT INTO chunk_vectors SELECT * FROM kept")
    conn.execute("DROP TABLE kept")
    conn.execute("CREATE INDEX chunk_vectors_by_source ON chunk_vectors (source_id)")
    conn.execute(graphs.index_sql(DIM))
    conn.execute("DELETE FROM shirabe_schema WHERE version = 14")


def to_schema_12(conn: Any) -> None:
    """The index as schema 12 kept it: the search tables whole, with the same rows (every
    posting block as it is), and no reader sets."""
    to_schema_14(conn)
    for table, create in UNPARTITIONED.items():
        columns = ", ".join(
            r[0]
            for r in conn.execute(
                "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0 "
                "AND NOT attisdropped AND attname <> 'reader_set' ORDER BY attnum",
                (table,),
            )
        )
        conn.execute(f"CREATE TEMP TABLE kept AS SELECT {columns} FROM {table}")
        conn.execute(f"DROP TABLE {table}")
        for statement in create.split(";"):
            conn.execute(statement)
        conn.execute(f"INSERT INTO {table} ({columns}) SELECT {columns} FROM kept")
        conn.execute("DROP TABLE kept")
    conn.execute(graphs.index_sql(DIM))
    conn.execute("DROP TABLE reader_sets")
    conn.execute("ALTER TABLE sources DROP COLUMN reader_set")
    conn.execute("DELETE FROM shirabe_schema WHERE version >= 13")


def to_schema_11(conn: Any, vectors: dict[str, np.ndarray]) -> None:
    """The index as schema 11 kept it: float32 vectors in the search tables (those given, not
    rounded), and float32 bytes in the embedding cache, with the HNSW index over them."""
    to_schema_12(conn)
    conn.execute("DROP INDEX IF EXISTS chunk_vectors_hnsw")
    for table in ("chunk_vectors", "sentences"):
        conn.execute(f"ALTER TABLE {table} ALTER COLUMN embedding TYPE vector")
    for cid, keys, own in conn.execute("SELECT id, vector_keys, own_sentence FROM chunks"):
        text = dense.text_vector
        conn.execute(
            "UPDATE chunk_vectors SET embedding = %s::vector WHERE chunk_id = %s",
            (text(vectors[keys[0]]), cid),
        )
        for ord_, key in enumerate(keys[:1] if own else keys[1:]):
            conn.execute(
                "UPDATE sentences SET embedding = %s::vector WHERE chunk_id = %s AND ord = %s",
                (text(vectors[key]), cid, ord_),
            )
    for model, key in conn.execute("SELECT model, key FROM embeddings").fetchall():
        conn.execute(
            "UPDATE embeddings SET vector = %s WHERE model = %s AND key = %s",
            (np.asarray(vectors[key], dtype="<f4").tobytes(), model, key),
        )
    conn.execute(
        f"CREATE INDEX chunk_vectors_hnsw ON chunk_vectors USING hnsw "
        f"((embedding::vector({DIM})) vector_cosine_ops)"
    )
    conn.execute("DELETE FROM shirabe_schema WHERE version = 12")
