"""The worker processes an ingest starts on its own machine: ``python -m shirabe worker``,
each a fresh interpreter with the settings of the ingest that starts it, its errors kept in
a log file of its own so that the ingest can tell why one stopped."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from shirabe.indexing.tags import CUT_SETTINGS
from shirabe.loaders.worker import child_environment
from shirabe.settings import Settings, env_name

WORKER_COMMAND = ("-m", "shirabe", "worker")
"""The command (after the interpreter) that runs one worker until the queue is empty."""

STOP_SECONDS = 10.0
"""How long a worker asked to stop may take before it is killed."""


def worker_environment(settings: Settings) -> dict[str, str]:
    """This process's environment (where shirabe was imported from put first), with the
    settings a command-line option may have given: the index's home and store, and how files
    are cut. A worker reads everything else from the same environment and ``.env`` file, and
    refuses to join a run whose recipe its settings do not give."""
    env = child_environment()
    env[env_name("home")] = str(Path(settings.home).resolve())
    store = settings.store
    env[env_name("store", "backend")] = store.chosen_backend
    if store.database_url:
        env[env_name("store", "database_url")] = store.database_url
    for name in CUT_SETTINGS:
        value = getattr(settings.ingest, name)
        text = str(value).lower() if isinstance(value, bool) else str(value)
        env[env_name("ingest", name)] = text
    return env


class LocalWorker(Protocol):
    """A worker process as the ingest that started it sees it."""

    def poll(self) -> int | None:
        """Its exit code once it has ended (negative: the signal that ended it)."""
        ...

    def errors(self) -> str:
        """The end of what it wrote to its error stream."""
        ...

    def stop(self) -> None: ...


class WorkerProcess:
    """One ``shirabe worker`` process, its error stream in ``log``."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self._log = log
        with log.open("wb") as errors:
            self._process = subprocess.Popen(
                [sys.executable, *WORKER_COMMAND],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=errors,
            )

    @property
    def pid(self) -> int:
        return self._process.pid

    def poll(self) -> int | None:
        return self._process.poll()

    def errors(self, size: int = 2000) -> str:
        text = self._log.read_text(encoding="utf-8", errors="replace")
        return text[-size:].strip()

    def stop(self) -> None:
        if self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(STOP_SECONDS)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()


class Crew:
    """The local workers of one run: started by ``start`` (given the number of the worker),
    told apart once they end, stopped together."""

    def __init__(self, start: Callable[[Path], LocalWorker]) -> None:
        self._start = start
        self._logs = tempfile.TemporaryDirectory(prefix="shirabe-workers-")
        self._running: list[LocalWorker] = []
        self._started = 0

    @property
    def running(self) -> int:
        return len(self._running)

    def start(self, count: int) -> None:
        for _ in range(count):
            self._started += 1
            log = Path(self._logs.name) / f"worker-{self._started}.log"
            self._running.append(self._start(log))

    def ended(self) -> list[tuple[int, str]]:
        """The exit code and the last errors of each worker that ended since the last call."""
        out: list[tuple[int, str]] = []
        for worker in list(self._running):
            code = worker.poll()
            if code is not None:
                self._running.remove(worker)
                out.append((code, worker.errors()))
        return out

    def stop(self) -> None:
        """Stop the workers still running (their files go back to the queue) and forget
        their logs."""
        for worker in self._running:
            worker.stop()
        self._running.clear()
        self._logs.cleanup()


def local_workers(settings: Settings) -> Callable[[Path], LocalWorker]:
    """Starts one worker process with the settings' environment, its errors in a log."""
    env = worker_environment(settings)
    return lambda log: WorkerProcess(env, log)
