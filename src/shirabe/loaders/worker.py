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

from shirabe.loaders.protocol import LoadError, LoadOptions, set_progress_hook
from shirabe.loaders.registry import loader_for
from shirabe.records import Document

log = logging.getLogger(__name__)

WORKER_START_SECONDS = 120.0


def load_file(path: Path, options: LoadOptions) -> Document:
    """Load one file in this process with the loader its suffix selects."""
    loader = loader_for(path)
    if loader is None:
        raise LoadError(path, f"unsupported file type {path.suffix or '(none)'}")
    return loader.load(path, options)


def _serve(conn: Connection) -> None:
    """Worker loop: receive (path, options), send ("progress", None) while reading, then
    ("ok", document) or ("error", reason)."""
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
        status, payload = "progress", None
        while status == "progress":
            if not conn.poll(self._timeout):
                self._kill()
                raise LoadError(
                    path, f"no progress for {self._timeout:g} s while reading (time limit)"
                )
            try:
                status, payload = conn.recv()
            except EOFError:
                self._kill()
                raise LoadError(path, "the reader crashed on this file") from None
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
            self._process = context.Process(target=_serve, args=(child,), daemon=True)
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
