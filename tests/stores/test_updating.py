"""Ingests into one index take turns, in both stores: a second ingest waits for the writer lock
(saying so in the log) and then goes ahead, or fails with a clear error when the wait runs out;
searches never wait. Two ``shirabe ingest`` processes started together on a new index both
finish, and the index holds every file once."""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from shirabe.errors import IndexBusyError
from shirabe.stores.embedded.schema import MIGRATIONS, schema_version
from shirabe.stores.embedded.store import EmbeddedStore
from shirabe.stores.postgres.store import PostgresStore
from shirabe.stores.protocol import Store

from tests.stores.hashed import NAME, hashed_embedder
from tests.support import SAMPLE_DOCS


@pytest.fixture(params=["embedded", pytest.param("postgres", marks=pytest.mark.postgres)])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def open_store(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> Callable[..., Store]:
    """Opens a store on this test's index (a folder, or a new database) with the given wait
    for the writer lock."""
    if kind == "embedded":
        return lambda timeout: EmbeddedStore(tmp_path / "index", update_timeout=timeout)
    url = str(request.getfixturevalue("database_url"))
    return lambda timeout: PostgresStore(url, update_timeout=timeout)


@pytest.fixture
def stores(open_store: Callable[..., Store]) -> Iterator[tuple[Store, Store]]:
    """Two stores on one index, as two processes would have: the first waits a long time."""
    first, second = open_store(600.0), open_store(0.0)
    yield first, second
    first.close()
    second.close()


def test_a_second_writer_fails_clearly_when_it_may_not_wait_and_readers_go_on(
    stores: tuple[Store, Store],
) -> None:
    first, second = stores
    with first.updating():
        busy = pytest.raises(IndexBusyError, match="being updated by another process")
        with busy, second.updating():
            pytest.fail("two writers held the lock at once")
        assert second.list_sources() == [] and second.status().files == 0
        assert second.search_lexical(["有給"], 5) == []
    with second.updating():  # released: the next one goes ahead at once
        pass


class _Waiting(logging.Handler):
    """Sets an event when a store logs that it waits for the writer lock."""

    def __init__(self) -> None:
        super().__init__()
        self.seen = threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if "waiting up to" in record.getMessage():
            self.seen.set()


def test_a_second_writer_says_it_waits_then_goes_ahead(
    stores: tuple[Store, Store], caplog: pytest.LogCaptureFixture
) -> None:
    first, second = stores
    waiting = _Waiting()
    logging.getLogger("shirabe.stores").addHandler(waiting)
    order: list[str] = []

    def second_ingest() -> None:
        with first.updating():  # a long wait: it goes ahead once the holder is done
            order.append("second")

    try:
        with second.updating():
            thread = threading.Thread(target=second_ingest)
            thread.start()
            assert waiting.seen.wait(60), "the waiting writer logged nothing"
            order.append("first")
        thread.join(60)
    finally:
        logging.getLogger("shirabe.stores").removeHandler(waiting)
    assert order == ["first", "second"]
    assert "is being updated by another process; waiting up to 600 s" in caplog.text
    assert "this one goes ahead" in caplog.text


def _open(home: str, start: Any) -> None:
    start.wait()
    EmbeddedStore(Path(home)).close()


@pytest.mark.slow
def test_processes_creating_one_embedded_index_at_once_all_succeed(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(4)
    home = tmp_path / "index"
    workers = [context.Process(target=_open, args=(str(home), start)) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
    assert [w.exitcode for w in workers] == [0, 0, 0, 0]
    assert schema_version(home) == len(MIGRATIONS)


def _two_ingests(tmp_path: Path, env: dict[str, str]) -> list[dict[str, object]]:
    """Runs two ``shirabe ingest`` processes on the sample corpus at once; their reports."""
    docs = tmp_path / "sample_docs"
    shutil.copytree(SAMPLE_DOCS, docs)
    with hashed_embedder(tmp_path / "site") as site:
        env = {**os.environ, **env, "PYTHONPATH": str(site), "SHIRABE_EMBEDDER__NAME": NAME}
        command = [sys.executable, "-m", "shirabe", "ingest", "--json", str(docs)]
        runs = [
            subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            for _ in range(2)
        ]
        outputs = [run.communicate(timeout=600) for run in runs]
    reports = []
    for run, (stdout, stderr) in zip(runs, outputs, strict=True):
        problems = stderr.decode()
        assert run.returncode == 0, problems
        for symptom in ("Traceback", "error:", "sqlite3", "psycopg", "already exists"):
            assert symptom not in problems, problems
        reports.append(json.loads(stdout))
    return reports


def _check(reports: list[dict[str, object]], store: Store) -> None:
    """One run added every file, the other found them all unchanged; each file is in once."""
    files = sorted(str(p.relative_to(SAMPLE_DOCS)) for p in SAMPLE_DOCS.rglob("*") if p.is_file())
    counts = sorted((r["counts"] for r in reports), key=lambda c: c["added"])  # type: ignore[index]
    empty = {"added": 0, "updated": 0, "removed": 0, "unchanged": 0, "failed": 0}
    assert counts == [empty | {"unchanged": len(files)}, empty | {"added": len(files)}]
    sources = store.list_sources()
    keys = [s.path for s in sources]
    assert len(set(keys)) == len(keys) == len(files)
    assert all(sum(k.endswith(f) for k in keys) == 1 for f in files), keys
    status = store.status()
    assert status.files == len(files)
    assert status.chunks == sum(s.chunks for s in sources) > 0


@pytest.mark.slow
def test_two_ingests_started_together_on_a_new_embedded_index(tmp_path: Path) -> None:
    home = tmp_path / "index"
    reports = _two_ingests(
        tmp_path, {"SHIRABE_HOME": str(home), "SHIRABE_STORE__BACKEND": "embedded"}
    )
    store = EmbeddedStore(home)
    try:
        _check(reports, store)
    finally:
        store.close()


@pytest.mark.slow
@pytest.mark.postgres
def test_two_ingests_started_together_on_a_new_database(tmp_path: Path, database_url: str) -> None:
    env = {"SHIRABE_HOME": str(tmp_path / "home"), "SHIRABE_STORE__DATABASE_URL": database_url}
    reports = _two_ingests(tmp_path, env)
    store = PostgresStore(database_url)
    try:
        _check(reports, store)
    finally:
        store.close()
