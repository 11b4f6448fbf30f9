"""What ingest workers and the ingest that starts them decide, against tables worked out by
hand; the connection options that end a lost worker's claim; the settings a local worker is
started with."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from shirabe.indexing.crew import Crew, worker_environment
from shirabe.indexing.workload import Idle, Step, gives_up, next_step, when_idle
from shirabe.settings import IngestSettings, Settings, StoreSettings
from shirabe.stores.postgres.queue import keepalive


@pytest.mark.parametrize(
    ("pending", "wait", "expected"),
    [
        (0, False, "stop"),  # nothing left anywhere: done
        (3, False, "wait"),  # others hold files: one may die and give its file back
        (0, True, "wait"),  # told to wait for the next run
        (1, True, "wait"),
    ],
)
def test_an_idle_worker_waits_while_files_are_held_or_it_was_told_to(
    pending: int, wait: bool, expected: Idle
) -> None:
    assert when_idle(pending, wait=wait) == expected


@pytest.mark.parametrize(
    ("attempts", "limit", "expected"),
    [(1, 3, False), (3, 3, False), (4, 3, True), (2, 1, True), (1, 1, False)],
)
def test_a_file_is_given_up_once_every_allowed_claim_ended_unfinished(
    attempts: int, limit: int, expected: bool
) -> None:
    assert gives_up(attempts, limit) is expected


@pytest.mark.parametrize(
    ("waiting", "running", "wanted", "claimable", "starts_left", "expected"),
    [
        (0, 2, 2, 0, 6, ("done", 0)),  # every file finished
        (0, 0, 2, 0, 0, ("done", 0)),
        (10, 0, 2, 10, 6, ("start", 2)),  # the first workers
        (1, 0, 3, 1, 9, ("start", 1)),  # never more workers than free files
        (5, 1, 2, 4, 4, ("start", 1)),  # one was killed: another takes its place
        (5, 1, 2, 4, 0, ("wait", 0)),  # no starts left, one still works
        (5, 2, 2, 3, 4, ("wait", 0)),  # all there
        (2, 0, 2, 0, 4, ("wait", 0)),  # workers elsewhere hold the last files
        (2, 0, 2, 2, 0, ("stalled", 0)),  # free files and nobody left to take them
    ],
)
def test_the_ingest_starts_workers_while_files_are_free_and_some_are_missing(
    waiting: int,
    running: int,
    wanted: int,
    claimable: int,
    starts_left: int,
    expected: tuple[Step, int],
) -> None:
    step = next_step(
        waiting=waiting,
        running=running,
        wanted=wanted,
        claimable=claimable,
        starts_left=starts_left,
    )
    assert step == expected


@pytest.mark.parametrize(
    ("lost_after", "idle", "interval", "user_timeout"),
    [(60, 20, 10, 60_000), (5, 2, 1, 5_000), (3600, 1200, 600, 3_600_000), (10, 3, 2, 10_000)],
)
def test_a_claim_ends_about_lost_after_seconds_after_its_worker_stops_answering(
    lost_after: float, idle: int, interval: int, user_timeout: int
) -> None:
    client, server = keepalive(lost_after)
    assert client == {
        "keepalives": 1,
        "keepalives_idle": idle,
        "keepalives_interval": interval,
        "keepalives_count": 4,
        "tcp_user_timeout": user_timeout,
    }
    assert server == {
        "tcp_keepalives_idle": idle,
        "tcp_keepalives_interval": interval,
        "tcp_keepalives_count": 4,
        "tcp_user_timeout": user_timeout,
    }
    assert idle + 4 * interval == pytest.approx(lost_after, rel=0.35)


def test_a_local_worker_gets_the_settings_a_command_line_option_may_have_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    settings = Settings(
        home=Path("index"),
        store=StoreSettings(database_url="postgresql://db/x"),
        ingest=IngestSettings(chunk_size=600, section_summaries=False),
    )
    env = worker_environment(settings)
    assert env["SHIRABE_HOME"] == str(tmp_path / "index")
    assert env["SHIRABE_STORE__BACKEND"] == "postgres"
    assert env["SHIRABE_STORE__DATABASE_URL"] == "postgresql://db/x"
    assert env["SHIRABE_INGEST__CHUNK_SIZE"] == "600"
    assert env["SHIRABE_INGEST__SECTION_SUMMARIES"] == "false"
    assert env["SHIRABE_INGEST__OCR_LANGUAGES"] == "jpn+eng"
    monkeypatch.setenv("SHIRABE_HOME", "elsewhere")  # what the worker reads, as it reads it
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    again = Settings()
    assert (again.home, again.ingest.chunk_size) == (tmp_path / "index", 600)
    assert again.ingest.section_summaries is False
    assert again.store.database_url == "postgresql://db/x"


class _Stub:
    """A worker process that ends when told to, with what it wrote."""

    def __init__(self, log: Path) -> None:
        self.log, self.stopped = log, False
        self.code: int | None = None

    def poll(self) -> int | None:
        return self.code

    def errors(self) -> str:
        return f"said in {self.log.name}"

    def stop(self) -> None:
        self.stopped = True


def test_the_crew_tells_each_ended_worker_once_with_its_errors() -> None:
    made: list[_Stub] = []

    def start(log: Path) -> Any:
        made.append(_Stub(log))
        return made[-1]

    crew = Crew(start)
    crew.start(2)
    assert crew.running == 2 and crew.ended() == []
    made[0].code = -9
    assert crew.ended() == [(-9, "said in worker-1.log")]
    assert crew.ended() == [] and crew.running == 1
    crew.start(1)
    made[2].code = 1
    assert crew.ended() == [(1, "said in worker-3.log")]
    crew.stop()
    assert made[1].stopped and not made[0].stopped and crew.running == 0
