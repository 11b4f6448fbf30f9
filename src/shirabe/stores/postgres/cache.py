"""The embedding cache of the server store: each text's vector under its model and key, kept in
half precision (two bytes a component), as the search tables keep their vectors (``halfvec``).
A text embedded again is then written with exactly the vector it was searched with before, and
the embedded store's cache, also half precision, copies over without change.

Schema 11 and older kept float32 bytes; :func:`halve` is the migration that rewrites them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from shirabe.embedders.protocol import Vector

HALF = np.dtype("<f2")
BATCH = 1000
"""Keys read in one query."""
MIGRATION_BATCH = 20_000
"""Rows the migration rewrites at a time."""


def encode(vector: Vector) -> bytes:
    """A vector's bytes in the cache: little-endian half precision, rounded to nearest."""
    return np.asarray(vector, dtype=np.float32).astype(HALF).tobytes()


def decode(data: bytes) -> Vector:
    """The float32 vector of a cached value (each component exactly the half one)."""
    return np.frombuffer(data, dtype=HALF).astype(np.float32)


def get(conn: Any, model: str, keys: Sequence[str]) -> dict[str, Vector]:
    """The cached vectors of ``model`` for those of ``keys`` that have one."""
    found: dict[str, Vector] = {}
    unique = list(dict.fromkeys(keys))
    for i in range(0, len(unique), BATCH):
        for row in conn.execute(
            "SELECT key, vector FROM embeddings WHERE model = %s AND key = ANY(%s)",
            (model, unique[i : i + BATCH]),
        ):
            found[row["key"]] = decode(row["vector"])
    return found


def put(conn: Any, model: str, vectors: Mapping[str, Vector]) -> None:
    """Cache ``vectors``; a key already cached keeps its first vector."""
    conn.cursor().executemany(
        "INSERT INTO embeddings (model, key, vector) VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
        [(model, key, encode(vec)) for key, vec in vectors.items()],
    )


def halve(conn: Any) -> None:
    """Migration 12's cache step: every float32 vector rewritten in half precision, into a new
    table (no dead rows left behind) that then takes the old one's place. ``conn`` is the
    migration's (rows as tuples, inside its transaction)."""
    conn.execute(
        "CREATE TABLE embeddings_half (model text NOT NULL, key text NOT NULL, "
        "vector bytea NOT NULL)"
    )
    after: tuple[str, str] = ("", "")
    first = True
    while True:
        rows = conn.execute(
            "SELECT model, key, vector FROM embeddings "
            + ("" if first else "WHERE (model, key) > (%s, %s) ")
            + "ORDER BY model, key LIMIT %s",
            (MIGRATION_BATCH,) if first else (*after, MIGRATION_BATCH),
        ).fetchall()
        if not rows:
            break
        first = False
        with conn.cursor().copy("COPY embeddings_half (model, key, vector) FROM STDIN") as copy:
            for model, key, data in rows:
                copy.write_row((model, key, encode(np.frombuffer(data, dtype="<f4"))))
        after = (rows[-1][0], rows[-1][1])
    conn.execute("DROP TABLE embeddings")
    conn.execute("ALTER TABLE embeddings_half RENAME TO embeddings")
    conn.execute("ALTER TABLE embeddings ADD PRIMARY KEY (model, key)")
