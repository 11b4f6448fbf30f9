"""An ingest worker: it takes files from the runs in the queue one at a time, reads, embeds
and writes each, until no run has files left (``shirabe worker``, on any machine that
reaches the database and sees the files at the run's paths)."""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Callable
from pathlib import Path

from shirabe.errors import OutsideRootError, ShirabeError
from shirabe.indexing.ingest import Ingestor
from shirabe.indexing.places import Place
from shirabe.indexing.workload import gives_up, when_idle
from shirabe.records import FileResult, IngestEvent, IngestReport, Progress
from shirabe.stores.queue import Claim, Timings, WorkQueue, WorkRun

log = logging.getLogger(__name__)

POLL_SECONDS = 0.5
"""How often a worker with nothing to claim looks again, and the ingest that started
workers looks at their progress."""

MakeIngestor = Callable[[WorkRun], Ingestor]
"""An ingest below a run's root, never below its folders to skip, auditing as its actor."""


def worker_name() -> str:
    """How the queue's claims name this process: its machine and process id."""
    return f"{socket.gethostname()}:{os.getpid()}"


class Worker:
    """Takes the files of open runs from ``queue`` and indexes them, as ``make`` sets up an
    ingest for each run; refuses runs opened with another ``recipe``."""

    def __init__(
        self,
        queue: WorkQueue,
        make: MakeIngestor,
        *,
        recipe: str,
        attempts: int,
        name: str | None = None,
        poll: float = POLL_SECONDS,
    ) -> None:
        self._queue = queue
        self._make = make
        self._recipe = recipe
        self._attempts = attempts
        self.name = name or worker_name()
        self._poll = poll
        self._ingestors: dict[int, Ingestor] = {}

    def run(self, *, wait: bool = False, progress: Progress | None = None) -> IngestReport:
        """Work until the open runs have no file left (with ``wait``: until stopped); the
        report lists the files this worker finished."""
        started = time.perf_counter()
        notify = progress or (lambda _event: None)
        report = IngestReport()
        try:
            while True:
                claim = self._queue.claim(self.name)
                if claim is None:
                    if when_idle(self._queue.pending(), wait=wait) == "stop":
                        break
                    time.sleep(self._poll)
                    continue
                result = self._take(claim)
                report.files.append(result)
                notify(IngestEvent("file", len(report.files), 0, result))
        finally:
            for ingestor in self._ingestors.values():
                ingestor.close()
            self._ingestors.clear()
        report.seconds = time.perf_counter() - started
        return report

    def _take(self, claim: Claim) -> FileResult:
        """Index the claimed file and finish the claim; on any error the claim is released
        (the file goes to another worker) and the error raised."""
        started = time.perf_counter()
        try:
            ingestor = self._ingestor(claim.run)
            embedded = ingestor.embedding_seconds
            with claim.writing():
                result = self._index(ingestor, claim)
            timings = Timings(
                seconds=time.perf_counter() - started,
                embedding=ingestor.embedding_seconds - embedded,
            )
            claim.finish(result, timings)
        except BaseException:
            claim.release()
            raise
        log.info("%s: %s (%d chunks)", result.path, result.outcome, result.chunks)
        return result

    def _index(self, ingestor: Ingestor, claim: Claim) -> FileResult:
        """The claimed file indexed at its place, or recorded as failed: given up after too
        many claims, or named outside the run's root."""
        file = claim.file
        place = Place(file.key, file.relative)
        if gives_up(claim.attempts, self._attempts):
            return ingestor.fail(
                place,
                f"given up after {claim.attempts - 1} attempts: each worker reading it stopped "
                "before it was done (killed, or out of memory)",
            )
        path = Path(file.path)
        try:
            ingestor.place(path)
        except OutsideRootError:  # a run names only files below its root: not read
            return ingestor.fail(place, f"not below the run's document root {ingestor.root}")
        return ingestor.process(path, place)

    def _ingestor(self, run: WorkRun) -> Ingestor:
        """The ingest of ``run``, made once; a run opened with another recipe is refused."""
        if run.plan.recipe != self._recipe:
            raise ShirabeError(
                f"this worker would index files otherwise than the ingest that opened run "
                f"{run.id}: start it with the same settings (the ingest section, the access map "
                f"and synonyms, the tokenizer and the embedding model). The run's: "
                f"{run.plan.recipe}; this worker's: {self._recipe}"
            )
        found = self._ingestors.get(run.id)
        if found is None:
            found = self._ingestors[run.id] = self._make(run)
        return found
