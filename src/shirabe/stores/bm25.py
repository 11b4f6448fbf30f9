"""BM25 as pure array functions, shared by every store that scores in Python."""

from __future__ import annotations

import hashlib

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]


def term_hash(token: str) -> int:
    """A stable 64-bit hash of a term (Python's ``hash`` changes between processes)."""
    return int.from_bytes(hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest(), "little")


def idf(df: int | NDArray[np.int64], n_docs: int) -> FloatArray:
    """Lucene's BM25 idf, ``ln(1 + (N - df + 0.5) / (df + 0.5))``: never negative."""
    d = np.asarray(df, dtype=np.float64)
    return np.log1p((n_docs - d + 0.5) / (d + 0.5))


def bm25_weights(
    tf: NDArray[np.floating] | NDArray[np.integer],
    doc_len: NDArray[np.floating] | NDArray[np.integer],
    *,
    avg_len: float,
    k1: float,
    b: float,
) -> FloatArray:
    """The saturated term-frequency factor ``tf·(k1+1) / (tf + k1·(1 − b + b·dl/avgdl))``."""
    t = np.asarray(tf, dtype=np.float64)
    dl = np.asarray(doc_len, dtype=np.float64)
    norm = k1 * (1.0 - b + b * dl / max(avg_len, 1e-9))
    out: FloatArray = t * (k1 + 1.0) / (t + norm)
    return out
