"""An ingest worker in this process, on a real PostgreSQL queue (no model, no process): it
refuses a run opened with other settings and leaves its file to others; it gives a file up,
as a recorded failure, after the claims the settings allow; a path outside the run's root is
recorded, not read. And ``--workers`` on the embedded store is a clear error."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from shirabe.cli.app import app as cli
from shirabe.engine import Shirabe
from shirabe.errors import ConfigurationError, ShirabeError
from shirabe.settings import IngestSettings, Settings, StoreSettings
from shirabe.stores.postgres.queue import PostgresQueue
from shirabe.stores.postgres.store import PostgresStore
from shirabe.stores.queue import QueuedFile, RunPlan

from tests.support import HashedEmbedder


def _engine(home: Path, url: str, **ingest: object) -> Shirabe:
    settings = Settings(
        home=home,
        store=StoreSettings(database_url=url),
        ingest=IngestSettings.model_validate(ingest),
    )
    return Shirabe(settings, embedder=HashedEmbedder())


@pytest.fixture
def engine(tmp_path: Path, database_url: str) -> Iterator[Shirabe]:
    with _engine(tmp_path / "home", database_url, worker_attempts=2) as shirabe:
        yield shirabe


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "規程.md").write_text("# 規程\n\n申請は前日までに行う。\n", encoding="utf-8")
    return folder


def _plan(engine: Shirabe, docs: Path, recipe: str | None = None) -> RunPlan:
    return RunPlan(str(docs), (), recipe or engine.recipe, "alice@pc (local)")


def _file(path: Path) -> QueuedFile:
    return QueuedFile(str(path), str(path), path.name)


def _claims(store: PostgresStore) -> list[tuple[str, int]]:
    with store._conn() as conn:
        rows = conn.execute("SELECT worker, file_id FROM queue_claims ORDER BY id").fetchall()
    return [(r["worker"], r["file_id"]) for r in rows]


@pytest.mark.postgres
def test_a_worker_refuses_a_run_opened_with_other_settings_and_leaves_its_file(
    engine: Shirabe, docs: Path, tmp_path: Path, database_url: str
) -> None:
    with _engine(tmp_path / "other", database_url, chunk_size=900) as other:
        assert other.recipe != engine.recipe
        run = engine.work_queue.open_run(_plan(other, docs), [_file(docs / "規程.md")])
    with (
        engine.store.updating(),
        pytest.raises(ShirabeError, match=f"otherwise than the ingest that opened run {run}"),
    ):
        engine.work()
    assert engine.work_queue.claimable(run, 5) == 1  # released: another worker takes it
    assert engine.store.get_source(str(docs / "規程.md")) is None


@pytest.mark.postgres
def test_a_file_that_stopped_every_worker_is_given_up_as_a_recorded_failure(
    engine: Shirabe, docs: Path
) -> None:
    store = engine.store
    assert isinstance(store, PostgresStore)
    run = engine.work_queue.open_run(_plan(engine, docs), [_file(docs / "規程.md")])
    with store.updating():  # the ingest that opened the run is under way
        for _ in range(2):  # two workers died holding it (worker_attempts=2)
            dying = PostgresQueue(store)
            try:
                assert dying.claim("gone") is not None
            finally:
                dying.close()
        report = engine.work()
    [result] = report.files
    assert (result.outcome, result.path) == ("failed", str(docs / "規程.md"))
    assert result.reason is not None and result.reason.startswith("given up after 2 attempts")
    source = store.get_source(str(docs / "規程.md"))
    assert source is not None and source.status == "failed" and source.error == result.reason
    [finished] = engine.work_queue.collect(run)
    assert (finished.attempts, finished.worker) == (3, engine.worker.name)
    assert [w for w, _ in _claims(store)] == ["gone", "gone", engine.worker.name]


@pytest.mark.postgres
def test_a_run_naming_a_file_outside_its_root_gets_a_failure_not_a_read(
    engine: Shirabe, docs: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "secret.md"
    outside.write_text("# 秘密\n\n読まれてはならない。\n", encoding="utf-8")
    engine.work_queue.open_run(_plan(engine, docs), [_file(outside)])
    with engine.store.updating():
        [result] = engine.work().files
    assert result.outcome == "failed"
    assert result.reason == f"not below the run's document root {docs}"
    assert not engine.store.source_chunks(str(outside))


def test_workers_on_the_embedded_store_are_a_clear_error(tmp_path: Path, docs: Path) -> None:
    with Shirabe(Settings(home=tmp_path / "home"), embedder=HashedEmbedder()) as engine:
        with pytest.raises(ConfigurationError, match="ingest workers share a queue"):
            engine.ingest([docs], workers=2)
        with pytest.raises(ShirabeError, match="ingested by one process, not workers"):
            engine.ingest([docs], workers=2, uploader="tanaka")
        assert engine.store.status().files == 0
    result = CliRunner().invoke(
        cli,
        ["ingest", str(docs), "--workers", "2"],
        env={"SHIRABE_HOME": str(tmp_path / "cli"), "SHIRABE_STORE__BACKEND": "embedded"},
    )
    assert result.exit_code == 1
    assert "ingest workers share a queue in the database" in " ".join(result.output.split())
