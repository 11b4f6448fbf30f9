"""The embedding cache of an embedded index: every vector a model made, by model and by the
hash of its text (the key), so that no text is embedded twice. It is where the vectors live:
segments keep int8 codes of them for the scan and refer to them by slot to rescore the best
candidates, and a segment rebuilt is made from them.

The database holds each key with the slot of its vector; the vectors are in a file per model,
in half precision (``vectors.py``): 768 bytes at 384 dimensions. A unit vector's components
keep 11 significant bits; its cosines move by about 10⁻⁴ at most.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from shirabe.embedders.protocol import Vector
from shirabe.stores.embedded.vectors import VectorFile, to_half, vector_file

_BATCH = 500


class EmbeddingCache:
    """The ``embeddings`` and ``embedding_models`` tables, over the connection ``conn``
    gives (one per thread), and the vector files beside the database in ``home``."""

    def __init__(self, conn: Callable[[], sqlite3.Connection], home: Path) -> None:
        self._conn = conn
        self._home = home
        self._files: dict[str, tuple[int, VectorFile]] = {}

    def _model(self, model: str) -> tuple[int, VectorFile] | None:
        """The model's number and vector file (None: nothing cached for it yet)."""
        known = self._files.get(model)
        if known is None:
            row = (
                self._conn()
                .execute("SELECT id, dim FROM embedding_models WHERE name = ?", (model,))
                .fetchone()
            )
            if row is None:
                return None
            model_id, dim = int(row[0]), int(row[1])
            known = self._files[model] = (
                model_id,
                VectorFile(vector_file(self._home, model_id), dim),
            )
        return known

    def get(self, model: str, keys: Sequence[str]) -> dict[str, Vector]:
        """The cached vectors of ``keys`` (those there are)."""
        return {key: vector for key, (_slot, vector) in self.get_with_slots(model, keys).items()}

    def get_with_slots(self, model: str, keys: Sequence[str]) -> dict[str, tuple[int, Vector]]:
        """The cached vectors of ``keys``, each with its slot."""
        known = self._model(model)
        if known is None:
            return {}
        model_id, vectors = known
        found = _slots(self._conn(), model_id, keys)
        matrix = vectors.read(np.asarray([slot for _, slot in found], dtype=np.int64))
        return {key: (int(slot), matrix[i]) for i, (key, slot) in enumerate(found)}

    def by_slot(self, model: str, slots: NDArray[np.int64]) -> NDArray[np.float32]:
        """The vectors of the model at ``slots``, as rows in that order."""
        known = self._model(model)
        if known is None:
            raise LookupError(f"no vectors of {model} in {self._home}")
        return known[1].read(slots)

    def put(self, model: str, vectors: Mapping[str, Vector]) -> None:
        """Cache ``vectors``; a key already cached keeps its vector."""
        if not vectors:
            return
        halves = to_half([np.asarray(v, dtype=np.float32).reshape(-1) for v in vectors.values()])
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")  # one writer at a time, in every process
        try:
            conn.execute(
                "INSERT OR IGNORE INTO embedding_models (name, dim, count) VALUES (?, ?, 0)",
                (model, halves.shape[1]),
            )
            model_id, dim, count = conn.execute(
                "SELECT id, dim, count FROM embedding_models WHERE name = ?", (model,)
            ).fetchone()
            if dim != halves.shape[1]:
                raise ValueError(f"{model} makes vectors of {dim} numbers, not {halves.shape[1]}")
            keys = list(vectors)
            cached = {key for key, _slot in _slots(conn, model_id, keys)}
            new = [i for i, key in enumerate(keys) if key not in cached]
            if new:
                VectorFile(vector_file(self._home, model_id), dim).write(count, halves[new])
                conn.executemany(
                    "INSERT INTO embeddings (model, key, slot) VALUES (?, ?, ?)",
                    [(model_id, keys[i], count + n) for n, i in enumerate(new)],
                )
                conn.execute(
                    "UPDATE embedding_models SET count = ? WHERE id = ?",
                    (count + len(new), model_id),
                )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise


def _slots(conn: sqlite3.Connection, model_id: int, keys: Sequence[str]) -> list[tuple[str, int]]:
    """The (key, slot) of those of ``keys`` the model has a vector for."""
    found: list[tuple[str, int]] = []
    unique = list(dict.fromkeys(keys))
    for i in range(0, len(unique), _BATCH):
        batch = unique[i : i + _BATCH]
        marks = ",".join("?" * len(batch))
        found += conn.execute(
            f"SELECT key, slot FROM embeddings WHERE model = ? AND key IN ({marks})",
            (model_id, *batch),
        ).fetchall()
    return found


def read_cache(database: Path, batch: int = 2000) -> Iterator[tuple[str, dict[str, Vector]]]:
    """Every cached vector of the index whose database is at ``database``, in batches of
    (model, {key: vector}); an index of an earlier schema (float32 in the database) is read as
    it is, not migrated."""
    with contextlib.closing(sqlite3.connect(database)) as conn:
        files = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'embedding_models'"
        ).fetchone()
        if not files:
            cursor = conn.execute("SELECT model, key, vector FROM embeddings ORDER BY model")
            while rows := cursor.fetchmany(batch):
                by_model: dict[str, dict[str, Vector]] = {}
                for model, key, blob in rows:
                    by_model.setdefault(model, {})[key] = np.frombuffer(blob, np.float32).copy()
                yield from by_model.items()
            return
        models = conn.execute("SELECT id, name, dim FROM embedding_models").fetchall()
        for model_id, name, dim in models:
            vectors = VectorFile(vector_file(database.parent, model_id), dim)
            cursor = conn.execute(
                "SELECT key, slot FROM embeddings WHERE model = ? ORDER BY slot", (model_id,)
            )
            while rows := cursor.fetchmany(batch):
                matrix = vectors.read(np.asarray([slot for _, slot in rows], dtype=np.int64))
                yield name, {key: matrix[i] for i, (key, _slot) in enumerate(rows)}
