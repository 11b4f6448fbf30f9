"""The ingest workers' queue in the database (:mod:`shirabe.stores.queue`).

A worker claims a file with ``SELECT … FOR UPDATE SKIP LOCKED`` in a transaction of its own
and keeps that transaction open while it reads, embeds and writes the file: the file's rows
are written in savepoints of it (:meth:`PostgresStore.writing_in`) and committed together
with the file's result. The row lock is the claim. This was chosen over a lease with an
expiry time because the database itself ends it: a worker killed midway (``kill -9``, out of
memory) closes its connection, the server rolls the transaction back, and the file is
claimable again at once, with nothing of it written; no clock decides that a slow worker is
dead while it still writes, so a file is never written by two workers at once, and a worker
cut off from the database cannot write after another took its file (its writes were in the
transaction that ended). A machine that stops answering without closing its connections
(power, network) is noticed by TCP keepalives, which :func:`keepalive` sets from
``SHIRABE_INGEST__WORKER_LOST_AFTER`` (through a pooler such as PgBouncer, the pooler's own
keepalives decide when the server hears of it). The cost: a transaction stays open for as
long as one file takes, which holds back vacuum for that long.

A run lives as long as the ingest that opened it, which holds the ingest's writer lock
throughout: a claim that finds that lock free abandons the open runs instead (their files go to
the next ingest), so no worker writes for an ingest that is gone.

The tables (schema migration 10): runs, their files (``queued`` → ``finished`` by a worker →
``reported`` to the ingest that opened the run), and every claim of a file. Claims are
counted in ``queue_claims``, written outside the claim's transaction so that a
claim whose worker died still counts (a file that stops every worker that reads it is given
up after ``SHIRABE_INGEST__WORKER_ATTEMPTS``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from shirabe.records import FileResult
from shirabe.stores.postgres.connections import WriteClock, copy_rows, guarded
from shirabe.stores.postgres.store import INGEST_LOCK, PostgresStore
from shirabe.stores.protocol import Store
from shirabe.stores.queue import Finished, QueuedFile, RunPlan, Timings, WorkRun

KEEP_RUNS = 20
"""Closed runs kept, newest first, with their files and claims (what each worker did)."""

_CLAIM = """
    SELECT f.id, f.path, f.key, f.relative, r.id AS run_id, r.root, r.skip, r.recipe, r.actor
    FROM queue_files f JOIN queue_runs r ON r.id = f.run_id
    WHERE f.state = 'queued' AND r.state = 'open'
    ORDER BY f.id
    LIMIT 1
    FOR UPDATE OF f SKIP LOCKED
"""

_UNHELD = "SELECT id FROM queue_files WHERE run_id = %s AND state = 'queued' FOR UPDATE SKIP LOCKED"


def keepalive(lost_after: float) -> tuple[dict[str, int], dict[str, int]]:
    """Under which a peer that stops answering is given up about ``lost_after`` seconds
    after it last did, on both ends: libpq's connection options (the worker notices a lost
    server) and the server's settings for the session (the server ends a lost worker's
    claim). Keepalive probes from a third of the time, every sixth, four unanswered ending
    it; data unacknowledged for the whole time ends it too."""
    idle, interval = max(1, round(lost_after / 3)), max(1, round(lost_after / 6))
    user_timeout = max(1000, round(lost_after * 1000))
    client = {
        "keepalives": 1,
        "keepalives_idle": idle,
        "keepalives_interval": interval,
        "keepalives_count": 4,
        "tcp_user_timeout": user_timeout,
    }
    server = {
        "tcp_keepalives_idle": idle,
        "tcp_keepalives_interval": interval,
        "tcp_keepalives_count": 4,
        "tcp_user_timeout": user_timeout,
    }
    return client, server


class PostgresClaim:
    """A file held by a row lock in the claim connection's open transaction."""

    def __init__(
        self,
        store: PostgresStore,
        conn: Any,
        run: WorkRun,
        file: QueuedFile,
        *,
        attempts: int,
        worker: str,
        file_id: int,
    ) -> None:
        self._store, self._conn = store, conn
        self.run, self.file, self.attempts = run, file, attempts
        self.worker = worker
        self._id = file_id
        self._clock = WriteClock()

    @contextmanager
    def writing(self) -> Iterator[None]:
        with self._store.writing_in(self._conn) as clock:
            self._clock = clock
            yield

    def finish(self, result: FileResult, timings: Timings) -> None:
        clock = self._clock
        writing = 0.0 if clock.locked_at is None else time.perf_counter() - clock.locked_at
        with guarded(self._conn):
            self._conn.execute(
                "UPDATE queue_files SET state = 'finished', attempts = %s, claimed_by = %s, "
                "outcome = %s, chunks = %s, error = %s, warnings = %s, seconds = %s, "
                "embedding_seconds = %s, waiting_seconds = %s, writing_seconds = %s, "
                "finished_at = clock_timestamp() WHERE id = %s",
                (
                    self.attempts,
                    self.worker,
                    result.outcome,
                    result.chunks,
                    result.reason,
                    json.dumps(list(result.warnings), ensure_ascii=False),
                    timings.seconds,
                    timings.embedding,
                    clock.waited,
                    writing,
                    self._id,
                ),
            )
            self._conn.commit()

    def release(self) -> None:
        if not self._conn.closed:
            with guarded(self._conn):
                self._conn.rollback()


class PostgresQueue:
    """The queue on the store's database: claims on a connection of their own, everything
    else on another, in autocommit (see the module docstring)."""

    def __init__(self, store: PostgresStore, *, lost_after: float = 60.0) -> None:
        self._store = store
        self._lost_after = lost_after
        self._claimer: Any = None
        self._side: Any = None

    # the ingest that opens a run

    def open_run(self, plan: RunPlan, files: Sequence[QueuedFile]) -> int:
        conn = self._conn()
        with guarded(conn), conn.transaction():
            _abandon_open_runs(conn)
            conn.execute(
                "DELETE FROM queue_runs r WHERE state <> 'open' AND id NOT IN "
                "(SELECT id FROM queue_runs ORDER BY id DESC LIMIT %s) AND NOT EXISTS "
                "(SELECT 1 FROM queue_files f WHERE f.run_id = r.id AND f.state = 'queued')",
                (KEEP_RUNS,),
            )
            run_id = int(
                conn.execute(
                    "INSERT INTO queue_runs (root, skip, recipe, actor) VALUES (%s, %s, %s, %s) "
                    "RETURNING id",
                    (plan.root, json.dumps(list(plan.skip)), plan.recipe, plan.actor),
                ).fetchone()["id"]
            )
            copy_rows(
                conn,
                "queue_files (run_id, path, key, relative)",
                [(run_id, f.path, f.key, f.relative) for f in files],
            )
        return run_id

    def collect(self, run: int) -> list[Finished]:
        conn = self._conn()
        with guarded(conn):
            rows = conn.execute(
                "UPDATE queue_files SET state = 'reported' WHERE run_id = %s "
                "AND state = 'finished' RETURNING *",
                (run,),
            ).fetchall()
        return [_finished(r) for r in sorted(rows, key=lambda r: (r["finished_at"], r["id"]))]

    def waiting(self, run: int) -> int:
        return self._count(
            "SELECT count(*) AS n FROM queue_files WHERE run_id = %s AND state = 'queued'", (run,)
        )

    def claimable(self, run: int, most: int) -> int:
        conn = self._conn()
        with guarded(conn), conn.transaction():  # the locks taken to count go at once
            return int(
                conn.execute(
                    f"SELECT count(*) AS n FROM ({_UNHELD} LIMIT %s) t", (run, most)
                ).fetchone()["n"]
            )

    def close_run(self, run: int, *, abandoned: bool = False) -> None:
        conn = self._conn()
        with guarded(conn), conn.transaction():
            conn.execute(
                "UPDATE queue_runs SET state = %s, closed_at = now() WHERE id = %s",
                ("abandoned" if abandoned else "finished", run),
            )
            if abandoned:
                conn.execute(f"DELETE FROM queue_files WHERE id IN ({_UNHELD})", (run,))

    # workers

    def claim(self, worker: str) -> PostgresClaim | None:
        conn = self._claim_connection()
        with guarded(conn):
            row = conn.execute(_CLAIM).fetchone()
            if row is None:
                conn.rollback()
                return None
            free = conn.execute("SELECT pg_try_advisory_xact_lock(%s) AS x", (INGEST_LOCK,))
            if free.fetchone()["x"]:  # no ingest holds its writer lock: the run's is gone
                _abandon_open_runs(conn)
                conn.commit()
                return None
        side = self._conn()
        with guarded(side), side.transaction():
            side.execute(
                "INSERT INTO queue_claims (file_id, run_id, worker) VALUES (%s, %s, %s)",
                (row["id"], row["run_id"], worker),
            )
            attempts = self._count(
                "SELECT count(*) AS n FROM queue_claims WHERE file_id = %s", (row["id"],)
            )
        plan = RunPlan(row["root"], tuple(row["skip"]), row["recipe"], row["actor"])
        file = QueuedFile(row["path"], row["key"], row["relative"])
        run = WorkRun(int(row["run_id"]), plan)
        return PostgresClaim(
            self._store, conn, run, file, attempts=attempts, worker=worker, file_id=int(row["id"])
        )

    def pending(self) -> int:
        return self._count(
            "SELECT count(*) AS n FROM queue_files f JOIN queue_runs r ON r.id = f.run_id "
            "WHERE f.state = 'queued' AND r.state = 'open'"
        )

    def close(self) -> None:
        for conn in (self._claimer, self._side):
            if conn is not None and not conn.closed:
                conn.close()

    # connections

    def _conn(self) -> Any:
        """The connection for everything but claims (autocommit)."""
        if self._side is None or self._side.closed:
            self._side = self._store.connect(autocommit=True)
        return self._side

    def _claim_connection(self) -> Any:
        """The connection whose transaction holds a claim, watched by keepalives (the
        server's set as statements, not as a startup option, which a pooler may refuse)."""
        if self._claimer is None or self._claimer.closed:
            client, server = keepalive(self._lost_after)
            conn = self._store.connect(**client)
            with guarded(conn):
                for name, value in server.items():
                    conn.execute("SELECT set_config(%s, %s, false)", (name, str(value)))
                conn.commit()
            self._claimer = conn
        return self._claimer

    def _count(self, sql: str, params: Sequence[Any] = ()) -> int:
        conn = self._conn()
        with guarded(conn):
            return int(conn.execute(sql, tuple(params)).fetchone()["n"])


def _abandon_open_runs(conn: Any) -> None:
    """Every open run marked abandoned, its files no worker holds dropped: called by whoever
    holds the ingest's writer lock, so no ingest that opened one is still there."""
    gone = conn.execute(
        "UPDATE queue_runs SET state = 'abandoned', closed_at = now() WHERE state = 'open' "
        "RETURNING id"
    ).fetchall()
    for run in gone:
        conn.execute(f"DELETE FROM queue_files WHERE id IN ({_UNHELD})", (run["id"],))


def _finished(row: dict[str, Any]) -> Finished:
    """A finished file's row as the ingest that opened its run reports it."""
    result = FileResult(
        row["key"],
        row["outcome"],
        chunks=int(row["chunks"]),
        reason=row["error"],
        warnings=tuple(row["warnings"]),
    )
    timings = Timings(
        seconds=row["seconds"] or 0.0,
        embedding=row["embedding_seconds"] or 0.0,
        waiting=row["waiting_seconds"] or 0.0,
        writing=row["writing_seconds"] or 0.0,
    )
    return Finished(result, row["claimed_by"] or "", int(row["attempts"]), timings)


def open_queue(store: Store, *, lost_after: float) -> PostgresQueue:
    """The queue beside ``store``, which must be a :class:`PostgresStore`."""
    if not isinstance(store, PostgresStore):
        raise TypeError(f"the PostgreSQL queue needs a PostgresStore, not {type(store).__name__}")
    return PostgresQueue(store, lost_after=lost_after)
