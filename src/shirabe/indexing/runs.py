"""The ingest runs under way in this process, each as far as its progress events have told.

Runs of other processes (a command, another server) show in the list of finished runs once
they end; the writer lock they hold makes a run here wait (``waiting``) until then.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime

from shirabe.records import IngestEvent, Progress, RunningIngest


class Runs:
    """The ingest runs of this process that have not ended, oldest first."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._runs: dict[int, RunningIngest] = {}

    def now(self) -> list[RunningIngest]:
        with self._lock:
            return list(self._runs.values())

    @contextmanager
    def run(self, actor: str, progress: Progress | None = None) -> Iterator[Run]:
        """A run by ``actor`` from now until the block ends: its events (given on to
        ``progress``) move what :meth:`now` shows of it."""
        started = datetime.now(UTC).isoformat(timespec="seconds")
        with self._lock:
            run_id = next(self._ids)
            self._runs[run_id] = RunningIngest(run_id, actor, started, "waiting")
        try:
            yield Run(self, run_id, progress)
        finally:
            with self._lock:
                del self._runs[run_id]

    def _move(self, run_id: int, change: Callable[[RunningIngest], RunningIngest]) -> None:
        with self._lock:
            found = self._runs.get(run_id)
            if found is not None:
                self._runs[run_id] = change(found)


class Run:
    """One run under way: told when it may start, and of each progress event."""

    def __init__(self, runs: Runs, run_id: int, progress: Progress | None) -> None:
        self._runs, self._id, self._progress = runs, run_id, progress

    def started(self) -> None:
        """The writer lock is held: the run reads files from now on."""
        self._runs._move(self._id, lambda run: replace(run, stage="starting"))

    def __call__(self, event: IngestEvent) -> None:
        def moved(run: RunningIngest) -> RunningIngest:
            current = event.result.path if event.result is not None else run.current
            return replace(
                run, stage=event.kind, done=event.done, total=event.total, current=current
            )

        self._runs._move(self._id, moved)
        if self._progress is not None:
            self._progress(event)
