"""``shirabe ingest --workers`` as real processes with the real model on a real PostgreSQL
server: several worker processes build the very index one process builds (``index_snapshot``
says what *identical* means), each file taken by one worker once; a changed folder comes out
as it would from one process; and a worker killed with ``kill -9`` while it holds a file leaves
that file to another worker, with nothing of it written twice.

A reader installed for ``.held`` files makes the kill deterministic: the first time it reads,
it writes its worker's process id to a gate folder and waits until the test opens the gate,
so the test kills the worker while it certainly holds that file, then opens the gate.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest

from shirabe.stores.postgres.schema import temporary_database
from shirabe.stores.postgres.store import PostgresStore

from tests.indexing.index_snapshot import differences, snapshot
from tests.support import SAMPLE_DOCS, installed, shared

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

HELD_READER = '''"""A format whose reader, while the test's gate is shut, says whose worker
reads it and waits for the gate to open."""

import os
import time
from pathlib import Path

from shirabe.records import Document, Part


class HeldLoader:
    extensions = (".held",)

    def load(self, path, options):
        gate = Path(os.environ["SHIRABE_TEST_GATE"])
        if not (gate / "open").exists():
            said = gate / "reading.part"
            said.write_text(str(os.getppid()))  # this reader's parent: the worker
            said.rename(gate / "reading")
            while not (gate / "open").exists():
                time.sleep(0.05)
        text = Path(path).read_text(encoding="utf-8")
        return Document(path=str(path), parts=[Part(text)], title="保留文書")
'''

HELD = Path("00-保留") / "保留文書.held"
FIXTURES = ("text/shiftjis.txt", "text/cp932-mskanji.csv", "office/with_japanese.pptx")
BROKEN = "office/truncated62886.docx"
"""A truncated package: it fails to read, in every run, and the others still go in."""
DEADLINE = 900.0


@pytest.fixture(scope="module")
def held_format(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The ``.held`` reader, installed as a package is; its folder (for PYTHONPATH)."""
    site = tmp_path_factory.mktemp("site")
    entry = "[shirabe.loaders]\nheld = held_reader:HeldLoader\n"
    with installed(site, "held-reader", "held_reader", HELD_READER, entry):
        yield site


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample documents, a few real-world files (one broken) and the held file."""
    folder = tmp_path_factory.mktemp("corpus") / "docs"
    shutil.copytree(SAMPLE_DOCS, folder)
    for name in (*FIXTURES, BROKEN):
        target = folder / "実例" / Path(name).name
        target.parent.mkdir(exist_ok=True)
        shutil.copyfile(shared() / name, target)
    (folder / HELD).parent.mkdir()
    (folder / HELD).write_text("# 保留\n\n承認待ちの申請は三日で失効する。\n", encoding="utf-8")
    return folder


@dataclass(frozen=True)
class Built:
    """An index as built: the ingest's report by file, and the tables."""

    outcomes: set[tuple[str, str, int, str | None]]
    tables: dict[str, list[tuple[Any, ...]]]


def _copy(corpus: Path, where: Path) -> tuple[Path, Path]:
    """A copy of the corpus, and an open gate folder."""
    docs = where / "docs"
    shutil.copytree(corpus, docs)
    gate = where / "gate"
    gate.mkdir()
    (gate / "open").touch()
    return docs, gate


def _command(docs: Path, workers: int) -> list[str]:
    more = ["--workers", str(workers)] if workers else []
    return [sys.executable, "-m", "shirabe", "ingest", str(docs), "--json", *more]


def _env(site: Path, url: str, home: Path, gate: Path) -> dict[str, str]:
    path = os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))
    return {
        **os.environ,
        "PYTHONPATH": path,
        "SHIRABE_HOME": str(home),
        "SHIRABE_STORE__DATABASE_URL": url,
        "SHIRABE_TEST_GATE": str(gate),
    }


def ingest(site: Path, docs: Path, url: str, gate: Path, workers: int = 0) -> dict[str, Any]:
    """``shirabe ingest`` of ``docs`` into ``url`` as a process; its report (the broken file
    fails, so the command exits 1)."""
    env = _env(site, url, docs.parent / f"home-{workers}", gate)
    done = subprocess.run(
        _command(docs, workers), env=env, capture_output=True, timeout=DEADLINE, check=False
    )
    assert done.returncode == 1, done.stderr.decode()
    report: dict[str, Any] = json.loads(done.stdout)
    assert [Path(f["path"]).name for f in report["files"] if f["outcome"] == "failed"] == [
        Path(BROKEN).name
    ], done.stderr.decode()
    return report


def outcomes(report: dict[str, Any], docs: Path) -> set[tuple[str, str, int, str | None]]:
    """Each file's outcome, chunks and reason, its path (and in the reason) below ``docs``."""
    root = str(docs)
    return {
        (
            f["path"].replace(root, "<root>"),
            f["outcome"],
            f["chunks"],
            f["reason"] and f["reason"].replace(root, "<root>"),
        )
        for f in report["files"]
    }


def tables(url: str, docs: Path) -> dict[str, list[tuple[Any, ...]]]:
    """:func:`snapshot` with the folder's path written as ``<root>``."""
    root = str(docs)
    return {
        name: sorted(
            (
                tuple(v.replace(root, "<root>") if isinstance(v, str) else v for v in row)
                for row in rows
            ),
            key=repr,
        )
        for name, rows in snapshot(url).items()
    }


@pytest.fixture(scope="module")
def reference(
    held_format: Path,
    corpus: Path,
    module_database_url: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> Built:
    """The corpus ingested by one process, as ever."""
    docs, gate = _copy(corpus, tmp_path_factory.mktemp("reference"))
    report = ingest(held_format, docs, module_database_url, gate)
    assert report["counts"]["added"] == sum(p.is_file() for p in corpus.rglob("*")) - 1
    return Built(outcomes(report, docs), tables(module_database_url, docs))


def _claims(url: str) -> list[tuple[str, str]]:
    """Each claim of the database's queue, oldest first: the file's key and the worker."""
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT f.key, c.worker FROM queue_claims c JOIN queue_files f ON f.id = c.file_id "
            "ORDER BY c.id"
        ).fetchall()
    return [(str(key), str(worker)) for key, worker in rows]


def _same(built: Built, report: dict[str, Any], url: str, docs: Path) -> None:
    assert outcomes(report, docs) == built.outcomes
    found = tables(url, docs)
    assert differences(found, built.tables) == {}
    assert found == built.tables


def _seed(source: str, target: str) -> None:
    """``target`` migrated, with ``source``'s embedding cache (which changes no vector)."""
    PostgresStore(target).close()
    with psycopg.connect(source) as a, psycopg.connect(target) as b:
        for table in ("embedding_models", "embeddings"):
            rows = a.execute(f"SELECT * FROM {table}").fetchall()
            marks = ", ".join(["%s"] * len(rows[0]))
            b.cursor().executemany(f"INSERT INTO {table} VALUES ({marks})", rows)


def test_worker_processes_build_the_index_one_process_builds(
    held_format: Path,
    corpus: Path,
    reference: Built,
    database_url: str,
    postgres_server: str,
    tmp_path: Path,
) -> None:
    docs, gate = _copy(corpus, tmp_path)
    report = ingest(held_format, docs, database_url, gate, workers=3)
    _same(reference, report, database_url, docs)
    claims = _claims(database_url)
    assert sorted(key for key, _worker in claims) == sorted(
        f["path"] for f in report["files"] if f["outcome"] != "unchanged"
    )  # every file read was claimed once, by one worker
    # a changed folder: one file edited, one deleted; only those (and the broken one) queued
    edited, deleted = docs / "人事" / "休暇規程.md", docs / "総務" / "社内FAQ.md"
    edited.write_text(edited.read_text("utf-8") + "\n## 追記\n\n半休は午前と午後。\n", "utf-8")
    deleted.unlink()
    again = ingest(held_format, docs, database_url, gate, workers=3)
    expected = {"added": 0, "updated": 1, "removed": 1, "failed": 1}
    assert again["counts"] == expected | {"unchanged": len(reference.outcomes) - 3}
    assert sorted(key for key, _worker in _claims(database_url)[len(claims) :]) == sorted(
        [str(edited), str(docs / "実例" / Path(BROKEN).name)]
    )
    with temporary_database(postgres_server, "shirabe_test") as fresh:
        _seed(database_url, fresh)
        single = ingest(held_format, docs, fresh, gate)
        rebuilt = Built(outcomes(single, docs), tables(fresh, docs))
    assert differences(tables(database_url, docs), rebuilt.tables) == {}


def _wait_for(path: Path, process: subprocess.Popen[bytes]) -> str:
    """What ``path`` says once it exists (the process must still run)."""
    deadline = time.monotonic() + DEADLINE
    while not path.exists():
        assert process.poll() is None, "the ingest ended before the held file was read"
        assert time.monotonic() < deadline, "no worker read the held file"
        time.sleep(0.1)
    return path.read_text()


def test_a_worker_killed_holding_a_file_leaves_it_to_another(
    held_format: Path, corpus: Path, reference: Built, database_url: str, tmp_path: Path
) -> None:
    docs, gate = _copy(corpus, tmp_path)
    (gate / "open").unlink()  # the held file's reader waits
    env = _env(held_format, database_url, tmp_path / "home", gate)
    errors = tmp_path / "errors.log"
    with errors.open("wb") as said:
        ingest_process = subprocess.Popen(
            _command(docs, 2), env=env, stdout=subprocess.PIPE, stderr=said
        )
    try:
        holder = int(_wait_for(gate / "reading", ingest_process))
        os.kill(holder, signal.SIGKILL)
        (gate / "open").touch()
        stdout, _ = ingest_process.communicate(timeout=DEADLINE)
    finally:
        if ingest_process.poll() is None:
            ingest_process.kill()
    assert ingest_process.returncode == 1, errors.read_text()  # the broken file
    _same(reference, json.loads(stdout), database_url, docs)
    claims = _claims(database_url)
    killed = f"{socket.gethostname()}:{holder}"
    held = [worker for key, worker in claims if key == str(docs / HELD)]
    assert held[0] == killed and len(held) == 2 and held[1] != killed
    others = [key for key, _worker in claims if key != str(docs / HELD)]
    assert len(others) == len(set(others))  # every other file claimed once
    with psycopg.connect(database_url) as conn:
        row = conn.execute(
            "SELECT attempts, claimed_by, outcome FROM queue_files WHERE key = %s",
            (str(docs / HELD),),
        ).fetchone()
    assert row == (2, held[1], "added")
    assert "a worker was stopped (signal 9)" in errors.read_text()
