"""Loading under a time limit in a worker process.

The waiting loop runs against a scripted pipe on a virtual clock, so what the time limit does
(progress keeps a long read going, silence stops it) is checked without waiting for anything;
the tests that start a real worker assume nothing about how fast the machine is.
"""

from __future__ import annotations

import os
import pickle
from collections import deque
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from shirabe.loaders.protocol import LoadError, LoadOptions, set_progress_hook
from shirabe.loaders.worker import (
    CRASH_REASON,
    CRASHED,
    OUT_OF_MEMORY,
    TIMED_OUT,
    TOO_LONG,
    TimedLoader,
    _start as start_worker,
    await_reply,
    crash_reason,
    describe_bytes,
    memory_reason,
    serve,
)
from shirabe.records import Document, Part

DOCUMENT = Document("a.csv", [Part("本文。", {"row": 1})])
PROGRESS = ("progress", None)
CLOSED = None
"""In a timeline: the worker's end of the pipe closes (the worker died)."""

Message = tuple[str, object] | None


class Timeline:
    """The loader's end of the pipe on a virtual clock.

    Each scripted message arrives ``gap`` seconds after the one before it; ``poll`` waits on
    this clock (returning False, and moving the clock on by the whole timeout, when nothing
    arrives in time), so no test waits for real time to pass.
    """

    def __init__(self, script: Sequence[tuple[float, Message]]) -> None:
        self.now = 0.0
        self.sent: list[object] = []
        self._arrivals: deque[tuple[float, Message]] = deque()
        at = 0.0
        for gap, message in script:
            at += gap
            self._arrivals.append((at, message))

    def send(self, obj: Any) -> None:
        self.sent.append(obj)

    def poll(self, timeout: float | None = 0.0) -> bool:
        if self._arrivals and (timeout is None or self._arrivals[0][0] <= self.now + timeout):
            self.now = max(self.now, self._arrivals[0][0])
            return True
        if timeout is None:
            raise AssertionError("waiting forever for a message that never comes")
        self.now += timeout
        return False

    def recv(self) -> Any:
        at, message = self._arrivals.popleft()
        self.now = max(self.now, at)
        if message is CLOSED:
            raise EOFError
        return message


def progress_every(gap: float, count: int) -> list[tuple[float, Message]]:
    return [(gap, PROGRESS)] * count


# ------------------------------------------------------------------ the waiting loop


@pytest.mark.parametrize(
    ("script", "reply", "stopped_at"),
    [
        pytest.param([(0.5, ("ok", DOCUMENT))], ("ok", DOCUMENT), 0.5, id="quick"),
        pytest.param(
            [*progress_every(1.5, 40), (1.5, ("ok", DOCUMENT))],
            ("ok", DOCUMENT),
            61.5,
            id="a-minute-of-progress-under-a-2s-limit",
        ),
        pytest.param(
            [*progress_every(1.9, 3), (1.9, ("error", "encrypted"))],
            ("error", "encrypted"),
            7.6,
            id="an-error-after-progress",
        ),
        pytest.param([], (TIMED_OUT, None), 2.0, id="silent-from-the-start"),
        pytest.param(
            [*progress_every(1.5, 3), (2.5, ("ok", DOCUMENT))],
            (TIMED_OUT, None),
            6.5,
            id="silent-for-longer-than-the-limit-after-progress",
        ),
        pytest.param([(1.0, PROGRESS), (0.5, CLOSED)], (CRASHED, None), 1.5, id="the-worker-dies"),
    ],
)
def test_the_limit_counts_from_the_last_message(
    script: list[tuple[float, Message]], reply: tuple[str, object], stopped_at: float
) -> None:
    pipe = Timeline(script)
    assert await_reply(pipe, timeout=2.0) == reply
    assert pipe.now == pytest.approx(stopped_at)


@pytest.mark.parametrize(
    ("script", "total", "reply", "stopped_at"),
    [
        pytest.param(
            [*progress_every(1.5, 40), (1.5, ("ok", DOCUMENT))],
            30.0,
            (TOO_LONG, None),
            30.0,
            id="progress-forever-stops-at-the-total",
        ),
        pytest.param(
            [*progress_every(1.5, 4), (1.5, ("ok", DOCUMENT))],
            30.0,
            ("ok", DOCUMENT),
            7.5,
            id="done-within-the-total",
        ),
        pytest.param([], 1.0, (TOO_LONG, None), 1.0, id="a-total-shorter-than-the-silence"),
        pytest.param([], 5.0, (TIMED_OUT, None), 2.0, id="silence-first"),
    ],
)
def test_the_whole_read_has_a_limit_too(
    script: list[tuple[float, Message]],
    total: float,
    reply: tuple[str, object],
    stopped_at: float,
) -> None:
    pipe = Timeline(script)
    assert await_reply(pipe, timeout=2.0, total=total, clock=lambda: pipe.now) == reply
    assert pipe.now == pytest.approx(stopped_at)


@pytest.mark.parametrize(
    ("script", "reason"),
    [
        ([(3.0, ("ok", DOCUMENT))], "no progress for 2 s while reading (time limit)"),
        ([(1.0, PROGRESS), (1.0, CLOSED)], "the reader crashed on this file"),
        ([(1.0, ("error", "encrypted, password required"))], "encrypted, password required"),
    ],
)
def test_the_loader_reports_why_a_file_was_not_read(
    monkeypatch: pytest.MonkeyPatch, script: list[tuple[float, Message]], reason: str
) -> None:
    pipe = Timeline(script)
    loader = TimedLoader(LoadOptions(), timeout=2.0)
    monkeypatch.setattr(loader, "_worker", lambda: pipe)
    with pytest.raises(LoadError) as info:
        loader.load(Path("docs/a.pdf"))
    assert (info.value.path, info.value.reason) == ("docs/a.pdf", reason)
    assert pipe.sent == [("docs/a.pdf", LoadOptions())]


def test_a_long_read_with_progress_returns_the_document(monkeypatch: pytest.MonkeyPatch) -> None:
    pipe = Timeline([*progress_every(1.0, 600), (1.0, ("ok", DOCUMENT))])
    loader = TimedLoader(LoadOptions(), timeout=2.0)
    monkeypatch.setattr(loader, "_worker", lambda: pipe)
    assert loader.load(Path("a.csv")) == DOCUMENT
    assert pipe.now == pytest.approx(601.0)


# ------------------------------------------------------------------------- the worker


class Requests:
    """The worker's end of the pipe: hands out scripted requests, records what is sent."""

    def __init__(self, *requests: object) -> None:
        self.requests = deque(requests)
        self.sent: list[tuple[str, object]] = []

    def send(self, obj: Any) -> None:
        self.sent.append(obj)

    def poll(self, timeout: float | None = 0.0) -> bool:
        return bool(self.requests)

    def recv(self) -> Any:
        if not self.requests:
            raise EOFError
        return self.requests.popleft()


@pytest.fixture
def no_progress_hook() -> Iterator[None]:
    """:func:`serve` installs a progress hook in the process it runs in; remove it after."""
    yield
    set_progress_hook(None)


def test_the_worker_reports_progress_while_reading_rows(
    tmp_path: Path, no_progress_hook: None
) -> None:
    table = tmp_path / "table.csv"
    table.write_text("番号,氏名\n" + "".join(f"{i},社員{i}\n" for i in range(50)), "utf-8")
    pipe = Requests((str(table), LoadOptions()), None)
    serve(pipe)
    statuses = [status for status, _ in pipe.sent]
    assert statuses[:2] == ["ready", "progress"]  # the first report always goes through
    assert set(statuses[2:-1]) <= {"progress"}
    assert statuses[-1] == "ok"
    document = pipe.sent[-1][1]
    assert isinstance(document, Document) and "社員49" in document.parts[-1].text


def test_the_worker_answers_each_request_and_survives_errors(
    tmp_path: Path, no_progress_hook: None
) -> None:
    fine = tmp_path / "fine.md"
    fine.write_text("# 規程\n\n本文。\n", encoding="utf-8")
    pipe = Requests(
        (str(tmp_path / "notes.xyz"), LoadOptions()),
        (str(tmp_path / "missing.md"), LoadOptions()),
        (str(fine), LoadOptions()),
    )
    serve(pipe)  # ends when the pipe closes
    ready, unsupported, missing, loaded = pipe.sent
    assert ready == ("ready", None)
    assert unsupported == ("error", "unsupported file type .xyz")
    assert missing[0] == "error" and missing[1]
    assert loaded[0] == "ok" and isinstance(loaded[1], Document)
    assert loaded[1].title == "規程"


def test_load_error_pickles() -> None:
    error = pickle.loads(pickle.dumps(LoadError("a.pdf", "encrypted, password required")))
    assert (error.path, error.reason) == ("a.pdf", "encrypted, password required")


def test_without_any_limit_files_load_in_process(tmp_path: Path) -> None:
    fine = tmp_path / "fine.txt"
    fine.write_text("本文。\n", encoding="utf-8")
    loader = TimedLoader(LoadOptions(max_loader_memory=None), timeout=None)
    assert loader.load(fine).parts[0].text.strip() == "本文。"
    loader.close()


# ------------------------------------------------------------------- a real worker process


@pytest.mark.slow
def test_a_file_that_hangs_the_reader_is_stopped_and_the_next_one_loads(tmp_path: Path) -> None:
    stuck = tmp_path / "stuck.txt"
    os.mkfifo(stuck)  # reading blocks forever: nobody writes
    fine = tmp_path / "fine.md"
    fine.write_text("# 規程\n\n本文。\n", encoding="utf-8")
    with TimedLoader(LoadOptions(), timeout=2.0) as loader:
        with pytest.raises(LoadError, match="time limit"):
            loader.load(stuck)
        document = loader.load(fine)
    assert document.title == "規程"


@pytest.mark.slow
def test_errors_cross_the_process_boundary(tmp_path: Path) -> None:
    broken = tmp_path / "broken.txt"
    broken.write_bytes(b"\x00\x01\x02\xff" * 50)
    with TimedLoader(LoadOptions(), timeout=30.0) as loader, pytest.raises(LoadError) as info:
        loader.load(broken)
    assert info.value.path == str(broken)
    assert info.value.reason


@pytest.mark.slow
def test_progress_crosses_the_process_boundary(tmp_path: Path) -> None:
    table = tmp_path / "table.csv"
    table.write_text("番号,氏名\n" + "".join(f"{i},社員{i}\n" for i in range(50)), "utf-8")
    parent, worker = start_worker(None)  # the worker as TimedLoader starts it
    try:
        parent.send((str(table), LoadOptions()))
        received: list[tuple[str, object]] = []
        while not received or received[-1][0] in {"ready", "progress"}:
            assert parent.poll(120), "the worker sent nothing for two minutes"
            received.append(parent.recv())
        parent.send(None)
        assert worker.wait(timeout=30) == 0
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()
        parent.close()
    assert [status for status, _ in received[:2]] == ["ready", "progress"]
    assert received[-1][0] == "ok" and isinstance(received[-1][1], Document)


# --------------------------------------------------------------------- the memory ceiling

MIB = 1024 * 1024


@pytest.mark.parametrize(
    ("size", "text"),
    [(2 * 1024 * MIB, "2 GiB"), (1536 * MIB, "1.5 GiB"), (300 * MIB, "300 MiB"), (MIB, "1 MiB")],
)
def test_memory_sizes_read_as_people_say_them(size: int, text: str) -> None:
    assert describe_bytes(size) == text


def test_a_file_that_runs_out_of_memory_is_reported_with_the_ceiling(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pipe = Timeline([(1.0, PROGRESS), (1.0, (OUT_OF_MEMORY, None))])
    loader = TimedLoader(LoadOptions(max_loader_memory=300 * MIB), timeout=None)
    monkeypatch.setattr(loader, "_worker", lambda: pipe)
    with pytest.raises(LoadError) as info:
        loader.load(Path("docs/huge.docx"))
    assert info.value.reason == (
        "needs more than 300 MiB of memory while reading (limit SHIRABE_LIMITS__MAX_LOADER_MEMORY)"
    )


@pytest.mark.parametrize(
    ("returncode", "peak", "reason"),
    [
        (None, None, CRASH_REASON),
        (-11, 80 * MIB, f"{CRASH_REASON} (SIGSEGV)"),
        (-6, 290 * MIB, memory_reason(300 * MIB)),  # an abort at the ceiling: out of memory
        (-9, 100 * MIB, "the reader was killed while reading (out of memory on this machine?)"),
        (1, 10 * MIB, CRASH_REASON),
    ],
    ids=["unknown", "segfault", "abort-near-the-ceiling", "killed-by-the-system", "exit-1"],
)
def test_why_a_worker_died(returncode: int | None, peak: int | None, reason: str) -> None:
    assert crash_reason(returncode, peak, 300 * MIB) == reason


def _failing_load(exc: BaseException) -> Any:
    def load(path: Path, options: LoadOptions) -> Document:
        raise exc

    return load


def _wrapped_memory_error() -> LoadError:
    try:
        raise MemoryError
    except MemoryError as cause:
        error = LoadError("big.docx", "corrupt or unreadable Word file (MemoryError)")
        error.__cause__ = cause
        return error


@pytest.mark.parametrize(
    "exc", [MemoryError(), _wrapped_memory_error()], ids=["raised", "wrapped-by-the-loader"]
)
def test_the_worker_reports_running_out_of_memory_and_stops(
    monkeypatch: pytest.MonkeyPatch, no_progress_hook: None, exc: BaseException
) -> None:
    monkeypatch.setattr("shirabe.loaders.worker.load_file", _failing_load(exc))
    pipe = Requests(("big.docx", LoadOptions()), ("next.md", LoadOptions()))
    serve(pipe)
    assert pipe.sent == [("ready", None), (OUT_OF_MEMORY, None)]
    assert len(pipe.requests) == 1  # the next file goes to a fresh worker
