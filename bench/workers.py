"""Ingest spread over worker processes: throughput with 1, 2, … workers, and where it goes.

    python bench/workers.py --database postgresql://… [--paragraphs 200] [--workers 1 2]
        [--modes bulk incremental]

The first ``--paragraphs`` paragraphs of JSQuAD (``../shared/data/jsquad/valid-v1.3.json``)
become one Markdown file each, as bench/jsquad.py writes them. For each mode and worker count
the folder is ingested by ``shirabe ingest --workers N`` (``0``: one process, without the
queue) into a new database on the server, so every run starts with an empty embedding cache:
``bulk`` into an empty index (the search indexes and term statistics are built once at the
end, the first load of a corpus), ``incremental`` into an index that already holds one file
(every write keeps them up to date, as when files are added to an index in use). Printed, per
run: files/s and chunks/s over the whole command (process starts and model loads included)
and while the workers worked (first claim to last file); from the queue's timings of each
file, the share of the workers' time spent embedding, waiting for the writer lock and
writing; and the database's write rate, chunks written per second of write transaction (from
taking the writer lock to the commit). The write rate is where adding machines stops
helping: N machines ingest about N times one machine's chunks/s until that reaches it
(docs/scaling.md). Results also go to bench/results/workers.json.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psycopg

from shirabe.evaluation.squad import paragraphs, read_squad
from shirabe.stores.postgres.schema import migrate, temporary_database

from common import CACHE, ROOT, SHARED, revision, write_result

DEFAULT_FILE = SHARED / "data" / "jsquad" / "valid-v1.3.json"

TIMINGS = """
    SELECT count(*) AS files, coalesce(sum(chunks), 0) AS chunks,
        coalesce(sum(seconds), 0) AS seconds, coalesce(sum(embedding_seconds), 0) AS embedding,
        coalesce(sum(waiting_seconds), 0) AS waiting, coalesce(sum(writing_seconds), 0) AS writing,
        extract(epoch FROM max(f.finished_at) - (SELECT min(claimed_at) FROM queue_claims))
            AS working
    FROM queue_files f
"""


def write_paragraphs(source: Path, folder: Path, count: int) -> int:
    """The first ``count`` paragraphs of ``source`` as files in ``folder`` (made afresh)."""
    shutil.rmtree(folder, ignore_errors=True)
    written = 0
    for rel, text, _questions in itertools.islice(paragraphs(read_squad(source)), count):
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written += 1
    return written


SEED = "# 準備\n\nこの索引には、計測の前から文書が一つある。\n"
"""The file an index holds before an incremental run (its folder is the document root)."""


def ingest(corpus: Path, url: str, home: Path, workers: int) -> tuple[dict[str, Any], float]:
    """``shirabe ingest`` of ``corpus`` into ``url`` with ``workers`` (0: one process); its
    report and wall seconds."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")])
        ),
        "SHIRABE_HOME": str(home),
        "SHIRABE_STORE__DATABASE_URL": url,
    }
    command = [sys.executable, "-m", "shirabe", "ingest", str(corpus), "--json"]
    if workers:
        command += ["--workers", str(workers)]
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"ingest with {workers} workers failed:\n{done.stderr.decode()}")
    return json.loads(done.stdout), seconds


def chunks_in(url: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT count(*) FROM chunks").fetchone()
    return int(row[0]) if row else 0


def figures(url: str, report: dict[str, Any], seconds: float, before: int) -> dict[str, float]:
    """Throughput of the run that found ``before`` chunks in the index, and (with workers)
    where the workers' time went."""
    counts = report["counts"]
    files = counts["added"] + counts["updated"]
    chunks = chunks_in(url) - before
    with psycopg.connect(url) as conn:
        queued = conn.execute("SELECT to_regclass('queue_files') IS NOT NULL").fetchone()
        row = conn.execute(TIMINGS).fetchone() if queued and queued[0] else None
    out = {
        "files": files,
        "chunks": chunks,
        "seconds": round(seconds, 1),
        "files_per_second": round(files / seconds, 2),
        "chunks_per_second": round(chunks / seconds, 2),
    }
    if row is None or not row[0]:
        return out
    _n, _c, busy, embedding, waiting, writing, working = (float(v or 0) for v in row)
    return out | {
        "working_seconds": round(working, 1),
        "chunks_per_second_working": round(chunks / working, 2) if working else 0.0,
        "embedding_share": round(embedding / busy, 3),
        "waiting_share": round(waiting / busy, 3),
        "writing_share": round(writing / busy, 3),
        "other_share": round(max(0.0, busy - embedding - waiting - writing) / busy, 3),
        "write_seconds": round(writing, 2),
        "database_chunks_per_write_second": round(chunks / writing, 1) if writing else 0.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database", required=True, help="postgresql://… of the server")
    parser.add_argument("--file", type=Path, default=DEFAULT_FILE, help="SQuAD-format JSON")
    parser.add_argument("--paragraphs", type=int, default=200, help="files to ingest")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument(
        "--modes", nargs="+", choices=["bulk", "incremental"], default=["bulk", "incremental"]
    )
    args = parser.parse_args()
    work = CACHE / "workers"
    docs = work / "docs"
    count = write_paragraphs(args.file, docs / "paragraphs", args.paragraphs)
    (docs / "seed.md").write_text(SEED, encoding="utf-8")
    print(f"{count} paragraphs in {docs}", flush=True)
    results: dict[str, dict[str, float]] = {}
    for mode, workers in itertools.product(args.modes, args.workers):
        home = work / "home"
        shutil.rmtree(home, ignore_errors=True)
        with temporary_database(args.database, "shirabe_bench") as url:
            migrate(url)  # not part of any ingest's time
            if mode == "incremental":  # the seed's folder becomes the root: docs
                ingest(docs / "seed.md", url, home, 0)
            before = chunks_in(url)
            report, seconds = ingest(docs, url, home, workers)
            results[f"{mode} {workers}"] = found = figures(url, report, seconds, before)
        print(f"{mode}, workers {workers}: {json.dumps(found)}", flush=True)
    path = write_result(
        "workers",
        {
            "paragraphs": count,
            "cores": os.cpu_count(),
            "commit": revision(),
            "measured": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "results": results,
        },
    )
    print(f"written to {path}")


if __name__ == "__main__":
    main()
