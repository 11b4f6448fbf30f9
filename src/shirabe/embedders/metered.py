"""An embedder wrapper that counts and times what it is asked to embed."""

from __future__ import annotations

import time
from collections.abc import Sequence

from shirabe.embedders.protocol import Embedder, Matrix, Vector


class MeteredEmbedder:
    """Delegates to ``inner``, adding up passages, queries and the seconds spent on each."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.passages = 0
        self.passage_seconds = 0.0
        self.queries = 0
        self.query_seconds = 0.0

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed_passages(self, texts: Sequence[str]) -> Matrix:
        started = time.perf_counter()
        out = self.inner.embed_passages(texts)
        self.passage_seconds += time.perf_counter() - started
        self.passages += len(texts)
        return out

    def embed_query(self, text: str) -> Vector:
        started = time.perf_counter()
        out = self.inner.embed_query(text)
        self.query_seconds += time.perf_counter() - started
        self.queries += 1
        return out
