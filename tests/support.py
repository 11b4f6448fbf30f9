"""Paths and guards shared by the tests."""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from shirabe import plugins
from shirabe.answering.prompting import MARKER, marker_numbers
from shirabe.embedders.protocol import Matrix, Vector
from shirabe.loaders import registry as loaders

ROOT = Path(__file__).resolve().parents[1]
"""The project root."""
SAMPLE_DOCS = ROOT / "sample_docs"
SHARED = ROOT.parent / "shared"
"""``../shared`` beside the project: real-world fixtures and the JSQuAD data."""
FIXTURES = SHARED / "fixtures"

STRICT_VAR = "SHIRABE_TEST_STRICT"
"""Set to 1 (CI does) and a test whose data or tool is missing fails instead of skipping."""


def unavailable(message: str) -> None:
    """Stop a test that cannot run here: a failure in CI, a skip saying why elsewhere."""
    if os.environ.get(STRICT_VAR) == "1":
        pytest.fail(f"{message} ({STRICT_VAR}=1: everything the tests need must be here)")
    pytest.skip(message)


def shared(path: Path = FIXTURES) -> Path:
    """``path`` under ``../shared``, which must be beside the project."""
    if not path.exists():
        unavailable(f"{path} not found: these tests need ../shared beside the project")
    return path


def cited(text: str) -> list[list[int]]:
    """The passage numbers of each citation marker in an answer, in order."""
    return [marker_numbers(m.group(1)) for m in MARKER.finditer(text)]


@contextmanager
def installed(
    site: Path,
    name: str,
    module: str,
    code: str,
    entry_points: str,
) -> Iterator[None]:
    """A package as pip leaves it in site-packages (its module and its dist-info with
    ``entry_points``), put on the path (a spawned worker process inherits it) and seen by the
    registries for the duration of the block."""
    info = site / f"{name.replace('-', '_')}-0.1.0.dist-info"
    info.mkdir(parents=True)
    (site / f"{module}.py").write_text(code, encoding="utf-8")
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(entry_points, encoding="utf-8")
    sys.path.insert(0, str(site))
    plugins.refresh()
    loaders.refresh()
    try:
        yield
    finally:
        sys.path.remove(str(site))
        sys.modules.pop(module, None)
        plugins.refresh()
        loaders.refresh()


class HashedEmbedder:
    """An embedding model in a few lines, for tests that need vectors but not meaning: a text's
    character n-grams (1 to 3 characters) are each hashed to one of ``dim`` dimensions, with a
    sign, and summed; the sum is L2-normalised. Texts that share n-grams are near, texts that
    share none are orthogonal but for collisions; the same text gives the same vector in every
    process. Queries and passages are encoded alike; an empty text is the first unit vector.

    Nearness is spelling here, not meaning: a test whose assertion needs two texts in other
    words to be near needs the real model (the ``e5`` fixture, marked ``slow``)."""

    SIZES = (1, 2, 3)

    def __init__(self, dim: int = 64) -> None:
        self._dim = dim

    @property
    def name(self) -> str:
        return f"test/hashed-ngrams-{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def _vector(self, text: str) -> Vector:
        v = np.zeros(self._dim, dtype=np.float32)
        for size in self.SIZES:
            for i in range(len(text) - size + 1):
                digest = hashlib.blake2b(text[i : i + size].encode(), digest_size=8).digest()
                h = int.from_bytes(digest, "little")
                v[h % self._dim] += 1.0 if (h >> 32) & 1 else -1.0
        norm = float(np.linalg.norm(v))
        if norm == 0.0:
            v[0] = 1.0
            return v
        return v / np.float32(norm)

    def embed_passages(self, texts: Sequence[str]) -> Matrix:
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        return np.vstack([self._vector(t) for t in texts])

    def embed_query(self, text: str) -> Vector:
        return self._vector(text)
