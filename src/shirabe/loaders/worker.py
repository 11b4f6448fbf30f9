"""Loading files under a time limit: parsers run in a worker process that can be killed.

A malformed PDF or spreadsheet can keep a parser busy for minutes; a thread cannot be stopped,
a process can. The worker is started once per ingest (spawned, not forked, so it inherits no
model threads) and restarted after a timeout or a crash.
"""

from __future__ import annotations

import logging
import multiprocessing
import time
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any, Final, Protocol

from shirabe.loaders.protocol import LoadError, LoadOptions, set_progress_hook
from shirabe.loaders.registry import loader_for
from shirabe.records import Document

log = logging.getLogger(__name__)

WORKER_START_SECONDS = 120.0

TIMED_OUT: Final = "timeout"
"""The status :func:`await_reply` gives when the worker was silent for the whole time limit."""
CRASHED: Final = "crashed"
"""The status :func:`await_reply` gives when the worker's end of the pipe closed."""


class Channel(Protocol):
    """One end of the pipe between the loader and its worker, as both sides use it."""

    def send(self, obj: Any) -> None: ...

    def recv(self) -> Any: ...

    def poll(self, timeout: float | None = ...) -> bool: ...


def load_file(path: Path, options: LoadOptions) -> Document:
    """Load one file in this process with the loader its suffix selects."""
    loader = loader_for(path)
    if loader is None:
        raise LoadError(path, f"unsupported file type {path.suffix or '(none)'}")
    return loader.load(path, options)


def serve(conn: Channel) -> None:
    """Worker loop: receive (path, options), send ("progress", None) while reading, then
    ("ok", document) or ("error", reason); ``None`` or a closed pipe ends it."""
    set_progress_hook(lambda: conn.send(("progress", None)))
    conn.send(("ready", None))
    while True:
        try:
            request = conn.recv()
        except EOFError:
            return
        if request is None:
            return
        path, options = request
        try:
            conn.send(("ok", load_file(Path(path), options)))
        except LoadError as exc:
            conn.send(("error", exc.reason))
        except Exception as exc:  # a broken file must never kill the worker
            conn.send(("error", f"{type(exc).__name__}: {exc}"))


def await_reply(conn: Channel, timeout: float) -> tuple[str, object]:
    """The worker's reply to the file just sent, waiting at most ``timeout`` seconds for each
    message: a progress message starts the wait again, so only silence stops a long read.

    Returns ``("ok", document)`` or ``("error", reason)`` as the worker sent them,
    ``(TIMED_OUT, None)`` after ``timeout`` seconds without any message, and
    ``(CRASHED, None)`` when the worker's end of the pipe closed.
    """
    while True:
        if not conn.poll(timeout):
            return TIMED_OUT, None
        try:
            status, payload = conn.recv()
        except EOFError:
            return CRASHED, None
        if status != "progress":
            return status, payload


class TimedLoader:
    """Loads files in a worker process, giving up on a file that makes no progress for
    ``timeout`` seconds: from the start, or since the loader last reported a page or rows
    (:func:`shirabe.loaders.report_progress`).

    With ``timeout=None`` files are loaded in the calling process.
    """

    def __init__(self, options: LoadOptions, timeout: float | None) -> None:
        self._options = options
        self._timeout = timeout
        self._process: BaseProcess | None = None
        self._conn: Connection | None = None

    def load(self, path: Path) -> Document:
        if self._timeout is None:
            return load_file(path, self._options)
        conn = self._worker()
        conn.send((str(path), self._options))
        started = time.monotonic()
        status, payload = await_reply(conn, self._timeout)
        if status == TIMED_OUT:
            self._kill()
            raise LoadError(path, f"no progress for {self._timeout:g} s while reading (time limit)")
        if status == CRASHED:
            self._kill()
            raise LoadError(path, "the reader crashed on this file")
        log.debug("loaded %s in %.2fs", path, time.monotonic() - started)
        if status == "error":
            raise LoadError(path, str(payload))
        assert isinstance(payload, Document)
        return payload

    def _worker(self) -> Connection:
        if self._process is None or not self._process.is_alive() or self._conn is None:
            self._kill()
            context = multiprocessing.get_context("spawn")
            parent, child = context.Pipe()
            self._process = context.Process(target=serve, args=(child,), daemon=True)
            self._process.start()
            child.close()
            self._conn = parent
            # the time limit is for reading files, not for starting Python on a busy machine
            if not parent.poll(WORKER_START_SECONDS) or parent.recv()[0] != "ready":
                self._kill()
                raise RuntimeError("the file reader process did not start")
        return self._conn

    def _kill(self) -> None:
        if self._process is not None and self._process.is_alive():
            self._process.kill()
            self._process.join(timeout=5)
        if self._conn is not None:
            self._conn.close()
        self._process = None
        self._conn = None

    def close(self) -> None:
        if self._conn is not None and self._process is not None and self._process.is_alive():
            try:
                self._conn.send(None)
                self._process.join(timeout=5)
            except (BrokenPipeError, OSError):
                pass
        self._kill()

    def __enter__(self) -> TimedLoader:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
