"""Concurrent clients asking a real server while an ingest runs.

    python bench/load.py [--clients 16] [--seconds 60] [--new-files 300]

Starts ``shirabe serve`` on a copy of sample_docs (fresh index, extractive answers), then for
``--seconds`` runs ``--clients`` concurrent clients that each ask (POST /api/ask, 3 of 4
requests) or search (GET /api/search) with questions from eval/sample_docs.yaml, one request
after another. A few seconds in, ``--new-files`` generated documents are added to the folder
and POST /api/reindex ingests them while the clients keep asking. Prints errors (any non-200
or transport error), requests/s, latency p50/p95 overall and during the ingest, and the
ingest's own time. Results also go to bench/results/load.json.

    python bench/load.py --scaled 100000 [--database URL] [--clients 16] [--seconds 60]

serves instead the 100k-chunk index that ``bench/scale.py --embedder means`` (embedded) or
``bench/postgres.py --embedder means --keep`` (PostgreSQL, with ``--database`` its kept
database) built, through bench/scaled_server.py, to a user reading 9 of its 10 departments, with
JSQuAD questions and no ingest. Both runs print the server's resident memory after start-up
and its peak; results go to bench/results/load-scaled-STORE.json.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import yaml

from shirabe.server.process import free_port, running

from common import ROOT, percentile, write_result
from scale import sentences_and_questions

SAMPLE = ROOT / "sample_docs"
CASES = ROOT / "eval" / "sample_docs.yaml"


def questions() -> list[str]:
    data = yaml.safe_load(CASES.read_text(encoding="utf-8"))
    return [case["question"] for case in data["cases"]]


def new_documents(folder: Path, n: int) -> None:
    """``n`` generated incident notes, each a few paragraphs, in a new category."""
    rng = random.Random(7)
    systems = ["勤怠", "経費精算", "メール", "ファイルサーバー", "VPN", "基幹", "会議室予約"]
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        system = rng.choice(systems)
        text = (
            f"# 障害報告 LOAD-{i:04d}\n\n## 概要\n\n{system}システムで応答遅延が発生した。"
            f"影響は約{rng.randint(5, 300)}名。\n\n## 原因\n\n"
            f"{rng.choice(['証明書の期限切れ', 'ディスク容量の不足', '設定変更の誤り'])}。\n\n"
            f"## 対応\n\n{rng.randint(1, 5)}時間後に復旧した。再発防止策を検討する。\n"
        )
        (folder / f"LOAD-{i:04d}.md").write_text(text, encoding="utf-8")


async def client(
    http: httpx.AsyncClient, asked: list[str], deadline: float, seed: int, log: list[dict[str, Any]]
) -> None:
    rng = random.Random(seed)
    while time.monotonic() < deadline:
        question = rng.choice(asked)
        started = time.monotonic()
        try:
            if rng.random() < 0.75:
                response = await http.post("/api/ask", json={"question": question})
            else:
                response = await http.get("/api/search", params={"q": question})
            error = None if response.status_code == 200 else f"HTTP {response.status_code}"
        except httpx.HTTPError as exc:
            error = type(exc).__name__
        log.append({"start": started, "seconds": time.monotonic() - started, "error": error})


def memory_mb(pid: int) -> dict[str, float]:
    """A process's resident memory now and at its peak (Linux)."""
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            found["rss_mb" if name == "VmRSS" else "peak_rss_mb"] = int(value.split()[0]) / 1024
    return {k: round(v, 0) for k, v in found.items()}


async def run(
    base: str, token: str, args: argparse.Namespace, docs: Path | None, asked: list[str]
) -> dict[str, Any]:
    log: list[dict[str, Any]] = []
    limits = httpx.Limits(max_connections=args.clients + 2)
    # the sample run's clients are anonymous; at scale they are the user the token names
    headers = {"Authorization": f"Bearer {token}"} if docs is None else {}
    async with httpx.AsyncClient(
        base_url=base, timeout=120, limits=limits, headers=headers
    ) as http:
        started = time.monotonic()
        deadline = started + args.seconds
        clients = [
            asyncio.create_task(client(http, asked, deadline, seed, log))
            for seed in range(args.clients)
        ]
        ingest_started = ingest_ended = started
        status, reindex = None, {}
        if docs is not None:
            await asyncio.sleep(min(5.0, args.seconds / 6))
            new_documents(docs / "負荷試験", args.new_files)
            ingest_started = time.monotonic()
            response = await http.post(
                "/api/reindex", headers={"Authorization": f"Bearer {token}"}, timeout=3600
            )
            ingest_ended = time.monotonic()
            status, reindex = response.status_code, response.json()
            if response.status_code != 200:
                print(f"reindex: HTTP {response.status_code} {response.text[:500]}")
        await asyncio.gather(*clients)
    during = [r for r in log if ingest_started <= r["start"] < ingest_ended]
    asking = max(r["start"] + r["seconds"] for r in log) - started  # the clients' window
    return {
        "clients": args.clients,
        "seconds_asking": round(asking, 1),
        "requests": len(log),
        "errors": sum(r["error"] is not None for r in log),
        "error_kinds": sorted({r["error"] for r in log if r["error"]}),
        "requests_per_second": round(len(log) / asking, 1),
        "latency_p50_ms": round(1000 * percentile([r["seconds"] for r in log], 50), 1),
        "latency_p95_ms": round(1000 * percentile([r["seconds"] for r in log], 95), 1),
        "during_ingest": {
            "requests": len(during),
            "errors": sum(r["error"] is not None for r in during),
            "latency_p50_ms": round(1000 * percentile([r["seconds"] for r in during], 50), 1)
            if during
            else None,
            "latency_p95_ms": round(1000 * percentile([r["seconds"] for r in during], 95), 1)
            if during
            else None,
        },
        "ingest": {
            "status": status,
            "seconds": round(ingest_ended - ingest_started, 1),
            "counts": reindex.get("counts"),
        },
    }


def sample(args: argparse.Namespace) -> dict[str, Any]:
    """``shirabe serve`` on a copy of sample_docs, with an ingest while the clients ask."""
    with tempfile.TemporaryDirectory(prefix="shirabe-load-") as tmp:
        work = Path(tmp)
        docs = work / "sample_docs"
        shutil.copytree(SAMPLE, docs)
        index = work / "index"
        shirabe = [sys.executable, "-m", "shirabe"]
        subprocess.run([*shirabe, "ingest", str(docs), "--index", str(index), "--json"],
                       check=True, capture_output=True)  # fmt: skip
        subprocess.run([*shirabe, "users", "add", "admin", "--admin", "--index", str(index)],
                       check=True, capture_output=True)  # fmt: skip
        token = subprocess.run(
            [*shirabe, "tokens", "create", "admin", "--index", str(index)],
            check=True, capture_output=True, text=True,
        ).stdout.strip()  # fmt: skip
        port = free_port()
        command = [*shirabe, "serve", str(docs), "--index", str(index), "--port", str(port),
                   "--anonymous", "on"]  # fmt: skip
        return serve(command, port, work / "server.log", args, lambda: token, docs, questions())


def scaled(args: argparse.Namespace) -> dict[str, Any]:
    """bench/scaled_server.py on the index of bench/scale.py or bench/postgres.py."""
    _sentences, all_questions = sentences_and_questions()
    asked = random.Random(13).sample(all_questions, 1000)
    with tempfile.TemporaryDirectory(prefix="shirabe-load-") as tmp:
        work = Path(tmp)
        port = free_port()
        token = work / "token"
        command = [sys.executable, str(ROOT / "bench" / "scaled_server.py"), str(args.scaled),
                   str(port), str(token)]  # fmt: skip
        if args.database:
            command += ["--database", args.database]
        return serve(command, port, work / "server.log", args, token.read_text, None, asked)


def serve(
    command: list[str],
    port: int,
    log: Path,
    args: argparse.Namespace,
    token: Callable[[], str],
    docs: Path | None,
    asked: list[str],
) -> dict[str, Any]:
    base = f"http://127.0.0.1:{port}"
    try:
        with running(command, f"{base}/healthz", log=log, timeout=900) as process:
            started = memory_mb(process.pid)
            result = asyncio.run(run(base, token(), args, docs, asked))
            result["server_memory"] = {
                "after_start_mb": started["rss_mb"],
                **memory_mb(process.pid),
            }
    finally:
        errors = log.read_text(errors="replace")
        if "Traceback" in errors:
            print(f"server log:\n{errors[-3000:]}")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--new-files", type=int, default=300)
    parser.add_argument("--scaled", type=int, help="chunks of the bench index to serve")
    parser.add_argument("--database", help="with --scaled: bench/postgres.py's kept database")
    args = parser.parse_args()
    if args.scaled:
        result = scaled(args)
        name = f"load-scaled-{'postgres' if args.database else 'embedded'}"
    else:
        result = sample(args)
        name = "load"
    for key, value in result.items():
        print(f"{key}: {value}")
    print(f"wrote {write_result(name, result)}")


if __name__ == "__main__":
    main()
