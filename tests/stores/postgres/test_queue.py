"""The ingest workers' queue on a real PostgreSQL server: two workers never hold one file; a
claim's writes show with its result or not at all; a worker whose connection dies gives its
file back at once, and the claim still counts; each finished file is reported once; a new
run drops the files of one whose ingest is gone, but not a file a worker still holds, and so
does a claim that finds no ingest under way."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from shirabe.records import FileResult
from shirabe.stores.postgres.queue import PostgresClaim, PostgresQueue
from shirabe.stores.postgres.store import PostgresStore
from shirabe.stores.protocol import SourceRecord
from shirabe.stores.queue import Claim, QueuedFile, RunPlan, Timings, WorkQueue

pytestmark = pytest.mark.postgres

PLAN = RunPlan(root="/docs", skip=("/uploads",), recipe="r1", actor="alice@pc (local)")


def files(*names: str) -> list[QueuedFile]:
    return [QueuedFile(f"/docs/{n}", f"/docs/{n}", n) for n in names]


@pytest.fixture
def store(database_url: str) -> Iterator[PostgresStore]:
    store = PostgresStore(database_url)
    yield store
    store.close()


@pytest.fixture
def queues(store: PostgresStore) -> Iterator[tuple[PostgresQueue, PostgresQueue]]:
    """Two workers' queues on one database, as two processes have them, while the ingest
    that opens the runs holds its writer lock."""
    one, two = PostgresQueue(store, lost_after=30), PostgresQueue(store, lost_after=30)
    with store.updating():
        yield one, two
    one.close()
    two.close()


def claimed(queue: WorkQueue, worker: str) -> Claim:
    claim = queue.claim(worker)
    assert claim is not None
    return claim


def test_two_workers_never_hold_one_file(queues: tuple[PostgresQueue, PostgresQueue]) -> None:
    one, two = queues
    run = one.open_run(PLAN, files("a.md", "b.md"))
    first, second = claimed(one, "w1"), claimed(two, "w2")
    assert {first.file.key, second.file.key} == {"/docs/a.md", "/docs/b.md"}
    assert (first.run.id, first.run.plan, first.attempts) == (run, PLAN, 1)
    assert one.claimable(run, 5) == 0 and one.waiting(run) == 2 and one.pending() == 2
    third = PostgresQueue(one._store, lost_after=30)
    try:
        assert third.claim("w3") is None  # both held
    finally:
        third.close()
    second.release()
    assert one.claimable(run, 5) == 1
    first.release()


def test_a_claims_writes_show_with_its_result_or_not_at_all(
    queues: tuple[PostgresQueue, PostgresQueue], store: PostgresStore
) -> None:
    one, _two = queues
    run = one.open_run(PLAN, files("a.md", "b.md"))
    kept, dropped = claimed(one, "w1"), None
    with kept.writing():
        store.record_failure(SourceRecord("/docs/a.md", "", 0, 0.0), "unreadable")
    assert store.get_source("/docs/a.md") is None  # not before the claim is finished
    kept.finish(FileResult("/docs/a.md", "failed", reason="unreadable"), Timings(seconds=2.0))
    source = store.get_source("/docs/a.md")
    assert source is not None and source.error == "unreadable"
    dropped = claimed(one, "w1")
    with dropped.writing():
        store.record_failure(SourceRecord("/docs/b.md", "", 0, 0.0), "never seen")
    dropped.release()
    assert store.get_source("/docs/b.md") is None
    [finished] = one.collect(run)
    assert (finished.result.path, finished.result.outcome) == ("/docs/a.md", "failed")
    assert (finished.worker, finished.attempts, finished.timings.seconds) == ("w1", 1, 2.0)
    assert finished.timings.writing > 0
    assert one.collect(run) == []  # each finished file is reported once
    assert one.waiting(run) == 1


def test_a_dead_workers_file_goes_to_another_at_once_and_its_claim_counts(
    queues: tuple[PostgresQueue, PostgresQueue], store: PostgresStore
) -> None:
    one, two = queues
    run = one.open_run(PLAN, files("a.md"))
    dying = claimed(two, "w2")
    assert isinstance(dying, PostgresClaim)
    with dying.writing():
        store.record_failure(SourceRecord("/docs/a.md", "", 0, 0.0), "half written")
    two._claimer.close()  # what a killed process's connection does
    taken = claimed(one, "w1")
    assert (taken.file.key, taken.attempts) == ("/docs/a.md", 2)
    assert store.get_source("/docs/a.md") is None  # nothing of the dead claim was written
    taken.finish(FileResult("/docs/a.md", "added", chunks=3), Timings())
    [finished] = one.collect(run)
    assert (finished.worker, finished.attempts, finished.result.chunks) == ("w1", 2, 3)
    assert one.pending() == 0 and one.claim("w1") is None


def test_a_new_run_drops_the_files_of_an_abandoned_one_but_not_a_held_file(
    queues: tuple[PostgresQueue, PostgresQueue],
) -> None:
    one, two = queues
    old = one.open_run(PLAN, files("a.md", "b.md", "c.md"))
    held = claimed(two, "w2")
    new = one.open_run(PLAN, files("d.md"))  # the ingest of the old run is gone
    assert one.waiting(old) == 1 and one.waiting(new) == 1
    taken = claimed(one, "w1")
    assert (taken.run.id, taken.file.key) == (new, "/docs/d.md")
    held.finish(FileResult(held.file.key, "added", chunks=1), Timings())
    taken.finish(FileResult("/docs/d.md", "added", chunks=1), Timings())
    assert [f.result.path for f in one.collect(old)] == [held.file.key]
    assert one.pending() == 0
    one.close_run(new)
    last = one.open_run(PLAN, files("e.md"))
    one.close_run(last, abandoned=True)
    assert one.waiting(last) == 0 and one.claim("w1") is None


def test_a_claim_finding_no_ingest_under_way_abandons_its_runs(store: PostgresStore) -> None:
    queue = PostgresQueue(store)
    try:
        with store.updating():
            run = queue.open_run(PLAN, files("a.md", "b.md"))
            held = claimed(queue, "w1")
        # the ingest that opened the run is gone: its files are the next ingest's
        other = PostgresQueue(store)
        try:
            assert other.claim("w2") is None
            assert other.pending() == 0 and other.waiting(run) == 1  # the held one stays
        finally:
            other.close()
        held.finish(FileResult(held.file.key, "added", chunks=1), Timings())
        assert [f.result.path for f in queue.collect(run)] == [held.file.key]
    finally:
        queue.close()


def test_the_server_ends_a_silent_workers_claim_after_lost_after_seconds(
    store: PostgresStore,
) -> None:
    queue = PostgresQueue(store, lost_after=30)
    try:
        conn = queue._claim_connection()
        if conn.info.host.startswith("/"):
            pytest.skip("a Unix socket has no TCP keepalives: the test server is reached by TCP")
        shown = {
            name: conn.execute(f"SHOW {name}").fetchone()[name]
            for name in ("tcp_keepalives_idle", "tcp_keepalives_interval", "tcp_keepalives_count")
        }
        timeout = conn.execute("SHOW tcp_user_timeout").fetchone()["tcp_user_timeout"]
        conn.rollback()
    finally:
        queue.close()
    assert shown == {
        "tcp_keepalives_idle": "10",
        "tcp_keepalives_interval": "5",
        "tcp_keepalives_count": "4",
    }
    assert timeout == "30000"  # milliseconds
