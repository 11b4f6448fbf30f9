"""An embedding model that needs no model files, installed as a plugin package, so that
tests driving whole ingests through the command line (in-process or as processes) take
seconds: set ``SHIRABE_EMBEDDER__NAME=hashed`` and put the site folder on ``PYTHONPATH``."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support import installed

NAME = "hashed"

CODE = """
import hashlib

import numpy as np

DIM = 8


def vector(text):
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
    v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


class Hashed:
    name = "test/hashed-8"
    dim = DIM

    def embed_passages(self, texts):
        return np.vstack([vector(t) for t in texts]) if texts else np.zeros((0, DIM), np.float32)

    def embed_query(self, text):
        return vector(text)


def make(settings):
    return Hashed()
"""


@contextmanager
def hashed_embedder(site: Path) -> Iterator[Path]:
    """The ``hashed`` embedder installed in ``site`` (returned) for the block."""
    entry = f"[shirabe.embedders]\n{NAME} = shirabe_hashed:make\n"
    with installed(site, "shirabe-hashed", "shirabe_hashed", CODE, entry):
        yield site
