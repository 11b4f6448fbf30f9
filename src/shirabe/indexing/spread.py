"""An ingest spread over worker processes (``shirabe ingest --workers N``).

The ingest scans the folders as any ingest does: what is gone leaves the index, what cannot
be read or is a link not followed is recorded, and each file is read and hashed so that an
unchanged one costs nothing more. The files left to load, embed and write go into a run of the
queue (:mod:`shirabe.stores.queue`), which ``N`` local workers and any ``shirabe worker`` on
other machines take one file at a time; the ingest follows their progress, starts a worker
again when one is killed, and reports the run like a normal ingest once every file is done.
It holds the writer lock of a normal ingest the whole time (another ingest waits), and, into
an empty index, the bulk load that the workers' writes join.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from shirabe.errors import ShirabeError
from shirabe.indexing.crew import Crew, LocalWorker
from shirabe.indexing.ingest import Ingestor
from shirabe.indexing.places import Place
from shirabe.indexing.workers import POLL_SECONDS
from shirabe.indexing.workload import next_step
from shirabe.records import IngestEvent, IngestReport, Progress
from shirabe.stores.queue import QueuedFile, RunPlan, WorkQueue

log = logging.getLogger(__name__)


class SpreadIngest:
    """Ingests through ``queue`` with up to ``workers`` local worker processes (each made by
    ``start``), started again when killed, at most ``attempts`` times as many in all."""

    def __init__(
        self,
        ingestor: Ingestor,
        queue: WorkQueue,
        *,
        recipe: str,
        actor: str,
        start: Callable[[Path], LocalWorker],
        workers: int,
        attempts: int,
        poll: float = POLL_SECONDS,
    ) -> None:
        if workers < 1:
            raise ShirabeError(f"--workers must be at least 1, not {workers}")
        self._ingestor = ingestor
        self._queue = queue
        self._plan = RunPlan(
            root=str(ingestor.root),
            skip=tuple(str(p) for p in ingestor.skip),
            recipe=recipe,
            actor=actor,
        )
        self._start = start
        self._workers = workers
        self._starts = workers * attempts
        self._poll = poll

    def run(self, paths: Sequence[Path], progress: Progress | None = None) -> IngestReport:
        """Ingest ``paths`` (all below the root), as :meth:`Ingestor.run` does."""
        ingestor = self._ingestor
        started = time.perf_counter()
        notify = progress or (lambda _event: None)
        report = IngestReport()
        files = ingestor.scan(paths, report)
        total = len(files)
        notify(IngestEvent("scan", 0, total))
        try:
            with ingestor.store.loading():
                scanned = len(report.files)
                todo: dict[str, tuple[Path, Place]] = {}
                for path, place in files:
                    result = ingestor.triage(path, place)
                    if result is None:
                        todo.setdefault(place.key, (path, place))
                    else:
                        report.files.append(result)
                        notify(IngestEvent("file", len(report.files) - scanned, total, result))
                self._spread(list(todo.values()), report, notify, total, scanned)
                notify(IngestEvent("index", total, total))
        finally:
            ingestor.close()
        changed = sum(f.outcome != "unchanged" for f in report.files[scanned:])
        ingestor.conclude(report, changed, started, notify, total)
        return report

    def _spread(
        self,
        todo: Sequence[tuple[Path, Place]],
        report: IngestReport,
        notify: Progress,
        total: int,
        scanned: int,
    ) -> None:
        """The files of ``todo`` read by workers, each result reported as it comes (the
        first ``scanned`` of the report's files came from the scan, not from the files)."""
        if not todo:
            return
        queue = self._queue
        files = [QueuedFile(str(path), place.key, place.relative) for path, place in todo]
        run = queue.open_run(self._plan, files)
        crew = Crew(self._start)
        wanted, starts_left = min(self._workers, len(files)), self._starts
        errors: list[str] = []
        try:
            while True:
                self._collect(run, report, notify, total, scanned)
                if _ended(crew, errors):  # an error, not a kill: another would fail alike
                    starts_left = 0
                free = queue.claimable(run, wanted) if crew.running < wanted else 0
                step, count = next_step(
                    waiting=queue.waiting(run),
                    running=crew.running,
                    wanted=wanted,
                    claimable=free,
                    starts_left=starts_left,
                )
                if step == "done":
                    break
                if step == "stalled":
                    said = errors[-1] if errors else "they were stopped too many times"
                    raise ShirabeError(f"the ingest workers stopped with files left: {said}")
                if step == "start":
                    crew.start(count)
                    starts_left -= count
                time.sleep(self._poll)
            self._collect(run, report, notify, total, scanned)
            _ended(crew, errors)
            queue.close_run(run)
        except BaseException:
            queue.close_run(run, abandoned=True)
            raise
        finally:
            crew.stop()

    def _collect(
        self, run: int, report: IngestReport, notify: Progress, total: int, scanned: int
    ) -> None:
        """The files of ``run`` finished since the last look, into the report."""
        for finished in self._queue.collect(run):
            report.files.append(finished.result)
            notify(IngestEvent("file", len(report.files) - scanned, total, finished.result))


def _ended(crew: Crew, errors: list[str]) -> bool:
    """Whether a local worker ended with an error since the last look (what it said goes
    in ``errors``); one killed is logged, its file back in the queue."""
    failed = False
    for code, said in crew.ended():
        if code > 0:
            errors.append(said)
            failed = True
        elif code < 0:
            log.warning("a worker was stopped (signal %d): its file goes back", -code)
    return failed
