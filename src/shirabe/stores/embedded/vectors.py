"""The files the embedding cache keeps its vectors in: one per model, each vector a record of
half-precision numbers at its slot, read through a memory map. A dense search reads the few
hundred vectors it rescores by slot, as one NumPy index into the map, without a database
lookup per vector.

A slot is written, and the file synced, before the database row naming it is committed, so a
committed row always finds its vector; bytes a writer left past the last committed slot are
written over by the next one.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from shirabe.embedders.protocol import Vector

HALF = np.dtype("<f2")
_LARGEST = float(np.finfo(np.float16).max)


def to_half(vectors: NDArray[Any] | Sequence[Vector]) -> NDArray[np.float16]:
    """Vectors (rows) in half precision; a component it cannot hold (beyond ±65,504, or not a
    number) is refused."""
    values = np.asarray(vectors, dtype=np.float32)
    if values.size and not (np.all(np.isfinite(values)) and np.abs(values).max() <= _LARGEST):
        raise ValueError("an embedding component is not a number or beyond ±65,504")
    out: NDArray[np.float16] = values.astype(HALF)
    return out


def vector_file(home: Path, model_id: int) -> Path:
    """The file of the vectors of the model numbered ``model_id`` in the index in ``home``."""
    return home / f"embeddings-{model_id}.f16"


class VectorFile:
    """The vectors of one model: ``dim`` half-precision numbers a slot."""

    def __init__(self, path: Path, dim: int) -> None:
        self.path = path
        self.dim = dim
        self._map: NDArray[np.float16] | None = None
        self._lock = threading.Lock()

    def _mapped(self, needed: int) -> NDArray[np.float16]:
        """The map, made again when the file has grown past it (another writer)."""
        with self._lock:
            if self._map is None or len(self._map) < needed:
                slots = self.path.stat().st_size // (2 * self.dim) if self.path.exists() else 0
                if slots < needed:
                    raise LookupError(f"{self.path}: {slots} vectors, slot {needed - 1} asked")
                mapped = np.memmap(self.path, dtype=HALF, mode="r", shape=(slots, self.dim))
                self._map = np.asarray(mapped)  # a plain array over the map: faster to index
            return self._map

    def read(self, slots: NDArray[np.int64]) -> NDArray[np.float32]:
        """The vectors at ``slots``, as float32 rows in that order."""
        wanted = np.asarray(slots, dtype=np.int64)
        if len(wanted) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        out: NDArray[np.float32] = self._mapped(int(wanted.max()) + 1)[wanted].astype(np.float32)
        return out

    def write(self, start: int, vectors: NDArray[np.float16]) -> None:
        """Write ``vectors`` from slot ``start`` on and sync the file (before the rows naming
        them are committed)."""
        if len(vectors) == 0:
            return
        data = np.ascontiguousarray(vectors, dtype=HALF).tobytes()
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            view, offset = memoryview(data), start * 2 * self.dim
            while view:
                written = os.pwrite(fd, view, offset)
                view, offset = view[written:], offset + written
            os.fdatasync(fd)
        finally:
            os.close(fd)
