"""Loading files under limits: parsers run in a worker process that can be stopped.

A malformed PDF or spreadsheet can keep a parser busy for minutes, and an Office file whose
XML unpacks to hundreds of megabytes can make it take gigabytes; a thread can be neither
stopped nor capped, a process can. The worker is a fresh interpreter
(``python -m shirabe.loaders.worker``), not a multiprocessing child: it inherits no model
threads and never imports the caller's ``__main__``, so a script without a main guard, a
notebook or a thread can ingest. Its memory is capped (``RLIMIT_DATA``, on Linux and other
POSIX systems); it is started on first use and restarted after a timeout, a crash or running
out of memory.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import multiprocessing
import os
import signal
import site
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Final, Protocol

from shirabe.errors import ReaderUnavailableError
from shirabe.loaders.protocol import LoadError, LoadOptions, set_progress_hook
from shirabe.loaders.registry import loader_for
from shirabe.records import Document
from shirabe.text.encoding import replacement_warnings

log = logging.getLogger(__name__)

WORKER_START_SECONDS = 120.0
EXIT_GRACE_SECONDS = 5.0

TIMED_OUT: Final = "timeout"
"""The status :func:`await_reply` gives when the worker was silent for the whole time limit."""
TOO_LONG: Final = "too long"
"""The status :func:`await_reply` gives when the whole read took longer than its limit."""
CRASHED: Final = "crashed"
"""The status :func:`await_reply` gives when the worker's end of the pipe closed."""
OUT_OF_MEMORY: Final = "memory"
"""The status the worker sends when a file needed more memory than it may have; it then exits."""
CRASH_REASON: Final = "the reader crashed on this file"


class Channel(Protocol):
    """One end of the pipe between the loader and its worker, as both sides use it."""

    def send(self, obj: Any) -> None: ...

    def recv(self) -> Any: ...

    def poll(self, timeout: float | None = ...) -> bool: ...


def load_file(path: Path, options: LoadOptions) -> Document:
    """Load one file in this process with the loader its suffix selects; bytes of a text
    file replaced while decoding become document warnings."""
    loader = loader_for(path)
    if loader is None:
        raise LoadError(path, f"unsupported file type {path.suffix or '(none)'}")
    with replacement_warnings() as notes:
        document = loader.load(path, options)
    extra = [note for note in dict.fromkeys(notes) if note not in document.warnings]
    if not extra:
        return document
    return dataclasses.replace(document, warnings=[*document.warnings, *extra])


def serve(conn: Channel, limit: int | None = None) -> None:
    """Worker loop: receive (path, options), send ("progress", None) while reading, then
    ("ok", document) or ("error", reason); ``None`` or a closed pipe ends it, and so does a
    file that ran out of memory, after sending (OUT_OF_MEMORY, None). ``limit`` is the
    memory ceiling this process runs under, if any."""
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
        reply = _answer(Path(path), options, limit)
        try:
            conn.send(reply)
        except MemoryError:  # pickling a huge document
            reply = (OUT_OF_MEMORY, None)
            conn.send(reply)
        if reply[0] == OUT_OF_MEMORY:
            return  # a fresh worker is better than a fragmented heap


def _answer(path: Path, options: LoadOptions, limit: int | None) -> tuple[str, object]:
    _reset_peak_rss()
    try:
        return "ok", load_file(path, options)
    except Exception as exc:  # a broken file must never kill the worker
        if _out_of_memory(exc) or _came_close(limit):
            return OUT_OF_MEMORY, None
        if isinstance(exc, LoadError):
            return "error", exc.reason
        return "error", f"{type(exc).__name__}: {exc}"


def _out_of_memory(exc: BaseException) -> bool:
    """Whether ``exc`` is, or was raised because of, a failed allocation: a ``MemoryError``
    or libxml2's out-of-memory error (lxml reports it as a syntax error), anywhere in the
    chain of causes (loaders wrap parser errors in ``LoadError``)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, MemoryError):
            return True
        if type(current).__module__ == "lxml.etree" and getattr(current, "code", None) == 2:
            return True  # XML_ERR_NO_MEMORY
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def _came_close(limit: int | None) -> bool:
    """Whether this process's resident memory came within 10% of ``limit`` during the file
    just read: a parser failing there most likely failed to allocate, whatever it says."""
    peak = _peak_rss()
    return limit is not None and peak is not None and peak >= 0.9 * limit


def _reset_peak_rss() -> None:
    with contextlib.suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5")  # Linux: VmHWM starts again from VmRSS


def _peak_rss() -> int | None:
    """Peak resident memory in bytes since the last reset (Linux ``VmHWM``), if known."""
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return None


def await_reply(
    conn: Channel,
    timeout: float | None,
    total: float | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> tuple[str, object]:
    """The worker's reply to the file just sent, waiting at most ``timeout`` seconds for each
    message (``None``: as long as it takes): a progress message starts the wait again, so
    only silence stops a long read; and at most ``total`` seconds in all, progress or not.

    Returns ``("ok", document)``, ``("error", reason)`` or ``(OUT_OF_MEMORY, None)`` as the
    worker sent them, ``(TIMED_OUT, None)`` after ``timeout`` seconds without any message,
    ``(TOO_LONG, None)`` after ``total`` seconds, and ``(CRASHED, None)`` when the worker's end
    of the pipe closed.
    """
    started = clock()
    while True:
        wait, whole = timeout, False
        if total is not None:
            left = total - (clock() - started)
            if left <= 0:
                return TOO_LONG, None
            if wait is None or left < wait:
                wait, whole = left, True
        if not conn.poll(wait):
            return (TOO_LONG if whole else TIMED_OUT), None
        try:
            status, payload = conn.recv()
        except EOFError:
            return CRASHED, None
        if status != "progress":
            return status, payload


def describe_bytes(size: int) -> str:
    """``2 GiB``, ``1.5 GiB``, ``300 MiB``: a memory size as people say it."""
    unit, name = (1 << 30, "GiB") if size >= 1 << 30 else (1 << 20, "MiB")
    return f"{size / unit:.1f}".removesuffix(".0") + f" {name}"


def memory_reason(limit: int | None) -> str:
    """Why a file that ran out of memory was not read."""
    if limit is None:
        return "ran out of memory while reading"
    return (
        f"needs more than {describe_bytes(limit)} of memory while reading "
        "(limit SHIRABE_LIMITS__MAX_LOADER_MEMORY)"
    )


def crash_reason(returncode: int | None, peak: int | None, limit: int | None) -> str:
    """Why the worker died without answering: its memory ceiling when it had come close to
    it, the system's out-of-memory killer when something else killed it, else a crash."""
    if limit is not None and peak is not None and peak >= 0.9 * limit:
        return memory_reason(limit)
    if returncode == -signal.SIGKILL:
        return "the reader was killed while reading (out of memory on this machine?)"
    if returncode is not None and returncode < 0:
        try:
            return f"{CRASH_REASON} ({signal.Signals(-returncode).name})"
        except ValueError:
            pass
    return CRASH_REASON


def limit_memory(limit: int) -> bool:
    """Cap this process's data segment (the heap and every private mapping) at ``limit``
    bytes, so that an allocation beyond it fails with ``MemoryError``; False where the
    system has no such limit."""
    try:
        import resource
    except ImportError:  # not POSIX
        return False
    try:
        _soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_DATA, (limit, hard))
    except (ValueError, OSError):
        log.warning("cannot limit the reader's memory to %s", describe_bytes(limit))
        return False
    return True


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m shirabe.loaders.worker FD``: set up as the loader asks on the socket
    ``FD`` (its ``sys.path``, the memory limit), then serve requests until it closes."""
    args = sys.argv[1:] if argv is None else argv
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the loader's to handle
    threading.Thread(target=_exit_when_orphaned, args=(os.getppid(),), daemon=True).start()
    conn = Connection(int(args[0]))
    try:
        setup = conn.recv()
        sys.path[:] = setup["sys_path"]
        limit = setup["max_memory"]
        if limit is not None and not limit_memory(limit):
            limit = None
        serve(conn, limit)
    except (EOFError, OSError):
        pass  # the loader went away
    finally:
        conn.close()


def _exit_when_orphaned(parent: int) -> None:
    """End this process soon after the loader's process is gone, even in the middle of a
    long file (its socket is only read between files)."""
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(1)


class TimedLoader:
    """Loads files in a worker process, giving up on a file that makes no progress for
    ``timeout`` seconds (from the start, or since the loader last reported a page or rows:
    :func:`shirabe.loaders.report_progress`) or that needs more memory than
    ``options.max_loader_memory``.

    With neither limit (``timeout=None`` and no memory limit) files are loaded in the
    calling process.
    """

    def __init__(
        self, options: LoadOptions, timeout: float | None, total: float | None = None
    ) -> None:
        self._options = options
        self._timeout = timeout
        self._total = total
        self._process: subprocess.Popen[bytes] | None = None
        self._conn: Connection | None = None
        self._finalizer: weakref.finalize[Any, TimedLoader] | None = None
        self._floor: int | None = None

    def load(self, path: Path) -> Document:
        if (
            self._timeout is None
            and self._total is None
            and self._options.max_loader_memory is None
        ):
            return load_file(path, self._options)
        conn = self._worker()
        conn.send((str(path), self._options))
        started = time.monotonic()
        status, payload = await_reply(conn, self._timeout, self._total)
        if status == TIMED_OUT:
            self._kill(grace=0.0)
            raise LoadError(path, f"no progress for {self._timeout:g} s while reading (time limit)")
        if status == TOO_LONG:
            self._kill(grace=0.0)
            raise LoadError(
                path,
                f"still reading after {self._total:g} s (limit SHIRABE_LIMITS__MAX_LOAD_SECONDS)",
            )
        if status == OUT_OF_MEMORY:
            self._kill()
            raise LoadError(path, memory_reason(self._options.max_loader_memory))
        if status == CRASHED:
            returncode, peak = self._kill()
            raise LoadError(path, crash_reason(returncode, peak, self._options.max_loader_memory))
        log.debug("loaded %s in %.2fs", path, time.monotonic() - started)
        if status == "error":
            raise LoadError(path, str(payload))
        assert isinstance(payload, Document)
        return payload

    def _worker(self) -> Connection:
        if self._process is None or self._process.poll() is not None or self._conn is None:
            self._kill(grace=0.0)
            self._conn, self._process = _start(self._options.max_loader_memory)
            # a child's ru_maxrss starts from its parent's peak at exec: only more is its own
            self._floor = _peak_rss()
            self._finalizer = weakref.finalize(self, _stop, self._process, self._conn)
            # the time limit is for reading files, not for starting Python on a busy machine
            try:
                ready = self._conn.poll(WORKER_START_SECONDS) and self._conn.recv()[0] == "ready"
            except EOFError:
                ready = False
            if not ready:
                self._kill(grace=0.0)
                raise ReaderUnavailableError(
                    f"the file reader process ({sys.executable} -m shirabe.loaders.worker) did "
                    f"not start within {WORKER_START_SECONDS:g} s; no file can be read"
                )
        return self._conn

    def _kill(self, grace: float = EXIT_GRACE_SECONDS) -> tuple[int | None, int | None]:
        """Stop the worker (after ``grace`` seconds to exit by itself) and return its exit
        code and peak resident memory in bytes, where known to be its own."""
        if self._finalizer is not None:
            self._finalizer.detach()
        process, conn = self._process, self._conn
        self._process = self._conn = self._finalizer = None
        if conn is not None:
            conn.close()
        if process is None:
            return None, None
        returncode, peak = _reap(process, grace)
        if peak is not None and (self._floor is None or peak <= self._floor):
            peak = None  # no more than this process's own peak: perhaps not the worker's
        return returncode, peak

    def close(self) -> None:
        if self._conn is not None and self._process is not None and self._process.poll() is None:
            with contextlib.suppress(OSError):
                self._conn.send(None)
        self._kill()

    def __enter__(self) -> TimedLoader:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def _start(max_memory: int | None) -> tuple[Connection, subprocess.Popen[bytes]]:
    """A new worker and the loader's end of the socket pair it is served on."""
    ours, theirs = multiprocessing.Pipe(duplex=True)
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "shirabe.loaders.worker", str(theirs.fileno())],
            pass_fds=(theirs.fileno(),),
            stdin=subprocess.DEVNULL,
            env=child_environment(),
        )
    except BaseException:
        ours.close()
        raise
    finally:
        theirs.close()
    ours.send({"sys_path": list(sys.path), "max_memory": max_memory})
    return ours, process


def child_environment() -> dict[str, str]:
    """This process's environment, with the folder shirabe was imported from put on
    ``PYTHONPATH`` unless it is a site-packages folder (a source tree added to ``sys.path``
    by hand would not be found otherwise)."""
    env = dict(os.environ)
    root = Path(__file__).resolve().parents[2]  # the folder holding shirabe/
    sites = {Path(p).resolve() for p in [*site.getsitepackages(), site.getusersitepackages()]}
    if root not in sites:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), env.get("PYTHONPATH")]))
    return env


def _reap(process: subprocess.Popen[bytes], grace: float) -> tuple[int | None, int | None]:
    """Wait up to ``grace`` seconds for ``process`` to end, kill it if it has not, and return
    its exit code and peak resident memory in bytes (``os.wait4`` gives both at once)."""
    deadline = time.monotonic() + grace
    try:
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() >= deadline:
                os.kill(process.pid, signal.SIGKILL)  # not process.kill(): it would reap
                pid, status, usage = os.wait4(process.pid, 0)
                break
            time.sleep(0.02)
    except ChildProcessError:  # already reaped elsewhere
        return process.poll(), None
    process.returncode = os.waitstatus_to_exitcode(status)
    peak = usage.ru_maxrss * (1 if sys.platform == "darwin" else 1024)
    log.debug("reader process %d ended (%d), peak %s", pid, process.returncode, peak)
    return process.returncode, peak


def _stop(process: subprocess.Popen[bytes], conn: Connection) -> None:
    """Kill a worker whose loader was never closed (at exit, or when it is collected)."""
    conn.close()
    if process.poll() is None:
        process.kill()
        process.wait()


if __name__ == "__main__":
    main()
