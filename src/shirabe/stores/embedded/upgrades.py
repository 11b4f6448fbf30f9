"""The schema migrations of an embedded index that SQL alone cannot make."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np

from shirabe.stores.embedded.rows import packed_columns
from shirabe.stores.embedded.vectors import VectorFile, to_half, vector_file

_BATCH = 5000


def fewer_bytes(conn: sqlite3.Connection) -> None:
    """Migration 5. The cached vectors move out of the database into a file per model, in half
    precision (2.2 kB a vector in the database → 768 bytes in the file, with 0.1 kB of key and
    slot left in the database), the model's name in every row becoming a number; a chunk's
    terms and its sentences' terms become one compressed column (3.2 kB a chunk → 0.8 kB).
    Segments are then rebuilt with int8 codes of the vectors (format 3)."""
    home = Path(conn.execute("PRAGMA database_list").fetchone()[2]).parent
    conn.execute(
        "CREATE TABLE embedding_models (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, "
        "dim INTEGER NOT NULL, count INTEGER NOT NULL)"
    )
    conn.execute(
        "CREATE TABLE embedding_slots (id INTEGER PRIMARY KEY, "
        "model INTEGER NOT NULL REFERENCES embedding_models(id), key TEXT NOT NULL, "
        "slot INTEGER NOT NULL, UNIQUE (model, key))"
    )
    models = [row[0] for row in conn.execute("SELECT DISTINCT model FROM embeddings ORDER BY 1")]
    for name in models:
        (size,) = conn.execute(
            "SELECT length(vector) FROM embeddings WHERE model = ? LIMIT 1", (name,)
        ).fetchone()
        dim = int(size) // 4
        model_id = conn.execute(
            "INSERT INTO embedding_models (name, dim, count) VALUES (?, ?, 0)", (name, dim)
        ).lastrowid
        assert model_id is not None
        vectors = VectorFile(vector_file(home, model_id), dim)
        count = 0
        cursor = conn.execute(
            "SELECT key, vector FROM embeddings WHERE model = ? ORDER BY id", (name,)
        )
        while rows := cursor.fetchmany(_BATCH):
            blob = b"".join(vector for _, vector in rows)
            vectors.write(count, to_half(np.frombuffer(blob, np.float32).reshape(len(rows), dim)))
            conn.executemany(
                "INSERT INTO embedding_slots (model, key, slot) VALUES (?, ?, ?)",
                [(model_id, key, count + i) for i, (key, _) in enumerate(rows)],
            )
            count += len(rows)
        conn.execute("UPDATE embedding_models SET count = ? WHERE id = ?", (count, model_id))
    conn.execute("DROP TABLE embeddings")
    conn.execute("ALTER TABLE embedding_slots RENAME TO embeddings")
    conn.create_function("packed_columns", 2, packed_columns, deterministic=True)
    conn.execute("ALTER TABLE chunks ADD COLUMN terms BLOB NOT NULL DEFAULT x''")
    conn.execute("UPDATE chunks SET terms = packed_columns(tokens, sentence_tokens)")
    conn.execute("ALTER TABLE chunks DROP COLUMN tokens")
    conn.execute("ALTER TABLE chunks DROP COLUMN sentence_tokens")
