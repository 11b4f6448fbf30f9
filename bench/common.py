"""Helpers shared by the benchmark scripts."""

from __future__ import annotations

import json
import resource
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from shirabe.embedders.protocol import Embedder, Matrix, Vector

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
CACHE = ROOT / "bench" / ".cache"
RESULTS = ROOT / "bench" / "results"


class TimedEmbedder:
    """Wraps an embedder and adds up the time spent embedding passages and queries."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.passage_seconds = 0.0
        self.passages = 0
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
        return out


def percentile(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values, dtype=np.float64), q)) if values else 0.0


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def write_result(name: str, payload: dict[str, Any]) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(payload, ensure_ascii=False, indent=2), encoding="utf-8")
    return path
