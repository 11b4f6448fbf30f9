"""Running a server in a child process until it answers: for tests, benchmarks and scripts that
need a real ``shirabe serve`` (or a model server) on a free local port."""

from __future__ import annotations

import os
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path


class ServerStartError(RuntimeError):
    """The child process exited, or did not answer in time; the message ends with its log."""


def free_port() -> int:
    """A local port nothing listens on (bound and released at once)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return int(response.status) == 200
    except (urllib.error.URLError, OSError):
        return False


@contextmanager
def running(
    command: Sequence[str],
    ready_url: str,
    *,
    log: Path,
    timeout: float = 300,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> Iterator[subprocess.Popen[bytes]]:
    """Start ``command`` with its output in ``log``, wait until ``ready_url`` answers 200, and
    stop it (terminate, then kill) on leaving the block."""
    with log.open("wb") as out:
        process = subprocess.Popen(
            list(command),
            stdout=out,
            stderr=subprocess.STDOUT,
            env=dict(env) if env is not None else os.environ.copy(),
            cwd=cwd,
        )
    try:
        deadline = time.monotonic() + timeout
        while not _answers(ready_url):
            if process.poll() is not None:
                raise ServerStartError(f"{command[0]} exited: {_tail(log)}")
            if time.monotonic() > deadline:
                raise ServerStartError(
                    f"no answer from {ready_url} after {timeout:.0f} s: {_tail(log)}"
                )
            time.sleep(0.3)
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _tail(log: Path, size: int = 3000) -> str:
    return log.read_text(encoding="utf-8", errors="replace")[-size:]


__all__ = ["ServerStartError", "free_port", "running"]
