"""Indexes as older schemas kept them, made from a current one, for the migrations' tests."""

from __future__ import annotations

from typing import Any

import numpy as np

from shirabe.stores.postgres import dense

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


def to_schema_11(conn: Any, vectors: dict[str, np.ndarray]) -> None:
    """The index as schema 11 kept it: float32 vectors in the search tables (those given, not
    rounded), and float32 bytes in the embedding cache, with the HNSW index over them."""
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
