"""SIGKILL during ingest: the previous index stays usable, the next run completes exactly."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from shirabe.engine import Shirabe
from shirabe.settings import Settings
from shirabe.stores.embedded.store import EmbeddedStore

pytestmark = pytest.mark.slow

TOPICS = [
    "有給休暇",
    "経費精算",
    "障害対応",
    "製品仕様",
    "会議室予約",
    "社員証",
    "出張旅費",
    "VPN接続",
]


def make_corpus(folder: Path, version: int) -> None:
    for i, topic in enumerate(TOPICS):
        (folder / f"doc{i:02d}.md").write_text(
            f"# {topic}\n\n## 概要\n\n{topic}の規程、版{version}。担当はDOC-{i:03d}。\n\n"
            f"## 手順\n\n{topic}はシステムから申請する。承認後に確定する。期限は{i + 1}日。\n",
            encoding="utf-8",
        )


def _command(docs: Path, home: Path) -> tuple[list[str], dict[str, str]]:
    env = {**os.environ, "SHIRABE_HOME": str(home), "SHIRABE_INGEST__REFRESH_EVERY_FILES": "2"}
    return [sys.executable, "-m", "shirabe", "ingest", str(docs), "--json"], env


def ingest_process(docs: Path, home: Path) -> subprocess.Popen[bytes]:
    command, env = _command(docs, home)
    return subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def ingest(docs: Path, home: Path) -> None:
    command, env = _command(docs, home)
    done = subprocess.run(command, env=env, capture_output=True, check=False)
    assert done.returncode == 0, done.stderr.decode()


def kill_when(proc: subprocess.Popen[bytes], ready: Callable[[], bool], limit: float = 60) -> bool:
    """SIGKILL the process as soon as ``ready()``; False if it finished first."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        if ready():
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            return True
        time.sleep(0.005)
    proc.kill()
    raise AssertionError("ingest did not reach the kill point in time")


def snapshot(home: Path) -> list[tuple[str, str]]:
    with Shirabe(Settings(home=home)) as app:
        store = app.store
        assert isinstance(store, EmbeddedStore)
        store.refresh()  # what every search does first: catch up with committed files
        ids = [int(i) for i in store.segments.indexed_ids()]
        chunks = store.get_chunks(ids)
        assert len(chunks) == len(ids), "index points at chunks that are gone"
        return sorted((Path(c.source).name, c.text) for c in chunks.values())


def usable(home: Path) -> None:
    """A fresh process can open the index and search it without error."""
    with Shirabe(Settings(home=home)) as app:
        app.search("有給休暇の申請", k=3)


@pytest.fixture(scope="module")
def expected(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, str]]:
    """What a clean index of version 2 holds."""
    base = tmp_path_factory.mktemp("crash")
    make_corpus(base, 2)
    ingest(base, base / ".reference")
    return snapshot(base / ".reference")


@pytest.mark.parametrize(
    "point",
    ["start", "first-file", "half", "all-files", "after-0.8s", "after-1.6s", "after-2.4s"],
)
def test_sigkill_during_ingest(tmp_path: Path, expected: list[tuple[str, str]], point: str) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    home = tmp_path / "index"
    make_corpus(docs, 1)
    ingest(docs, home)
    before = snapshot(home)
    make_corpus(docs, 2)
    started = time.monotonic()
    predicates: dict[str, Callable[[], bool]] = {
        "start": lambda: True,
        "first-file": lambda: _updated(home) >= 1,
        "half": lambda: _updated(home) >= len(TOPICS) // 2,
        "all-files": lambda: _updated(home) >= len(TOPICS),
    }
    if point.startswith("after-"):
        delay = float(point.removeprefix("after-").removesuffix("s"))
        predicates[point] = lambda: time.monotonic() - started > delay
    killed = kill_when(ingest_process(docs, home), predicates[point])
    usable(home)
    after_kill = snapshot(home)
    # whatever was killed, each file is either wholly old or wholly new
    for name in {n for n, _ in before}:
        texts = [t for n, t in after_kill if n == name]
        versions = {("版1" in t, "版2" in t) for t in texts if "版" in t}
        assert len(versions) <= 1, f"{name} mixes versions after the kill"
    if killed and point == "start":
        assert after_kill == before
    # the next run completes; the result equals a clean index of version 2
    ingest(docs, home)
    final = snapshot(home)
    assert final == expected
    assert len(final) == len(set(final)), "duplicated chunks"
    with sqlite3.connect(home / "index.sqlite3") as conn:
        stored = conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
    assert stored == len(final)


def _updated(home: Path) -> int:
    try:
        with sqlite3.connect(home / "index.sqlite3", timeout=1) as conn:
            return int(
                conn.execute(
                    "SELECT COUNT(DISTINCT s.id) FROM sources s JOIN chunks c "
                    "ON c.source_id = s.id WHERE c.text LIKE '%版2%'"
                ).fetchone()[0]
            )
    except sqlite3.Error:
        return 0
