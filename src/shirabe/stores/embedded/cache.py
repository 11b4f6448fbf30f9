"""The embedding cache of an embedded index: every vector a model made, by model and by the
hash of its text (the key), so that no text is embedded twice. It is where the vectors live:
segments keep int8 codes of them for the scan and refer to them by id to rescore the best
candidates, and a segment rebuilt is made from them.

A vector is kept in half precision: 768 bytes at 384 dimensions, five rows to a 4 kB page with
its key and model number, against two rows of float32. A unit vector's components lose less
than 2⁻¹¹ of their value, and a cosine about 10⁻⁴ at most.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from shirabe.embedders.protocol import Vector

HALF = np.dtype("<f2")
_BATCH = 500
_BY_ID = 5000
"""Ids a statement looks up at once (SQLite takes up to 32,766 parameters)."""
_LARGEST = float(np.finfo(np.float16).max)


def to_half(vector: Vector | Sequence[float]) -> bytes:
    """A vector's bytes in the cache: little-endian half precision. A component half
    precision cannot hold (beyond ±65,504, or not a number) is refused."""
    values = np.asarray(vector, dtype=np.float32).reshape(-1)
    if len(values) and not (np.all(np.isfinite(values)) and np.abs(values).max() <= _LARGEST):
        raise ValueError("an embedding component is not a number or beyond ±65,504")
    return values.astype(HALF).tobytes()


def from_half(blob: bytes) -> Vector:
    """A cached vector as float32."""
    out: Vector = np.frombuffer(blob, dtype=HALF).astype(np.float32)
    return out


def from_single(blob: bytes) -> Vector:
    """A vector of the cache before schema 5 (float32)."""
    out: Vector = np.frombuffer(blob, dtype=np.float32).copy()
    return out


def half_of_single(blob: bytes) -> bytes:
    """A float32 vector's bytes (the cache before schema 5) as the cache's bytes now."""
    return to_half(np.frombuffer(blob, dtype=np.float32))


class EmbeddingCache:
    """The ``embeddings`` and ``embedding_models`` tables, over the connection ``conn``
    gives (one per thread)."""

    def __init__(self, conn: Callable[[], sqlite3.Connection]) -> None:
        self._conn = conn
        self._models: dict[str, int] = {}

    def _model_id(self, model: str) -> int | None:
        known = self._models.get(model)
        if known is None:
            row = (
                self._conn()
                .execute("SELECT id FROM embedding_models WHERE name = ?", (model,))
                .fetchone()
            )
            if row is None:
                return None
            known = self._models[model] = int(row[0])
        return known

    def get(self, model: str, keys: Sequence[str]) -> dict[str, Vector]:
        """The cached vectors of ``keys`` (those there are)."""
        return {key: vector for key, (_id, vector) in self.get_with_ids(model, keys).items()}

    def get_with_ids(self, model: str, keys: Sequence[str]) -> dict[str, tuple[int, Vector]]:
        """The cached vectors of ``keys``, each with its id."""
        model_id = self._model_id(model)
        found: dict[str, tuple[int, Vector]] = {}
        if model_id is None:
            return found
        conn = self._conn()
        unique = list(dict.fromkeys(keys))
        for i in range(0, len(unique), _BATCH):
            batch = unique[i : i + _BATCH]
            marks = ",".join("?" * len(batch))
            for vector_id, key, blob in conn.execute(
                f"SELECT id, key, vector FROM embeddings WHERE model = ? AND key IN ({marks})",
                (model_id, *batch),
            ):
                found[key] = (int(vector_id), from_half(blob))
        return found

    def by_id(self, ids: Sequence[int]) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
        """The cached vectors of these ids, of one model: the ids there are, ascending, and
        their vectors as the rows of a matrix."""
        conn = self._conn()
        rows: list[tuple[int, bytes]] = []
        unique = sorted({int(i) for i in ids})
        for i in range(0, len(unique), _BY_ID):
            batch = unique[i : i + _BY_ID]
            marks = ",".join("?" * len(batch))
            rows += conn.execute(
                f"SELECT id, vector FROM embeddings WHERE id IN ({marks}) ORDER BY id", batch
            ).fetchall()
        found = np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))
        blob = b"".join(row[1] for row in rows)
        matrix = np.frombuffer(blob, dtype=HALF).reshape(len(rows), -1).astype(np.float32)
        return found, matrix

    def put(self, model: str, vectors: Mapping[str, Vector]) -> None:
        """Cache ``vectors``; a key already cached keeps its vector."""
        rows = [(key, to_half(vector)) for key, vector in vectors.items()]
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute("INSERT OR IGNORE INTO embedding_models (name) VALUES (?)", (model,))
            (model_id,) = conn.execute(
                "SELECT id FROM embedding_models WHERE name = ?", (model,)
            ).fetchone()
            conn.executemany(
                "INSERT OR IGNORE INTO embeddings (model, key, vector) VALUES (?, ?, ?)",
                [(model_id, key, blob) for key, blob in rows],
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise


def read_cache(database: Path, batch: int = 2000) -> Iterator[tuple[str, dict[str, Vector]]]:
    """Every cached vector of the database at ``database``, in batches of (model, {key:
    vector}); a database of an earlier schema (float32 under the model's name) is read as
    it is, not migrated."""
    with contextlib.closing(sqlite3.connect(database)) as conn:
        half = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'embedding_models'"
        ).fetchone()
        if half:
            query = (
                "SELECT m.name, e.key, e.vector FROM embeddings e "
                "JOIN embedding_models m ON m.id = e.model ORDER BY e.model"
            )
        else:
            query = "SELECT model, key, vector FROM embeddings ORDER BY model"
        decode = from_half if half else from_single
        cursor = conn.execute(query)
        while rows := cursor.fetchmany(batch):
            by_model: dict[str, dict[str, Vector]] = {}
            for model, key, blob in rows:
                by_model.setdefault(model, {})[key] = decode(blob)
            yield from by_model.items()
