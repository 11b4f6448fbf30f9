"""Concurrent clients asking a real server while an ingest runs.

    python bench/load.py [--clients 16] [--seconds 60] [--new-files 300]

Starts ``shirabe serve`` on a copy of sample_docs (fresh index, extractive answers), then for
``--seconds`` runs ``--clients`` concurrent clients that each ask (POST /api/ask, 3 of 4
requests) or search (GET /api/search) with questions from eval/sample_docs.yaml, one request
after another. A few seconds in, ``--new-files`` generated documents are added to the folder
and POST /api/reindex ingests them while the clients keep asking. Prints errors (any non-200
or transport error), requests/s, latency p50/p95 overall and during the ingest, and the
ingest's own time. Results also go to bench/results/load.json.
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
from pathlib import Path
from typing import Any

import httpx
import yaml

from shirabe.server.process import free_port, running

from common import ROOT, percentile, write_result

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


async def run(base: str, token: str, args: argparse.Namespace, docs: Path) -> dict[str, Any]:
    asked = questions()
    log: list[dict[str, Any]] = []
    limits = httpx.Limits(max_connections=args.clients + 2)
    async with httpx.AsyncClient(base_url=base, timeout=120, limits=limits) as http:
        started = time.monotonic()
        deadline = started + args.seconds
        clients = [
            asyncio.create_task(client(http, asked, deadline, seed, log))
            for seed in range(args.clients)
        ]
        await asyncio.sleep(min(5.0, args.seconds / 6))
        new_documents(docs / "負荷試験", args.new_files)
        ingest_started = time.monotonic()
        response = await http.post(
            "/api/reindex", headers={"Authorization": f"Bearer {token}"}, timeout=3600
        )
        ingest_ended = time.monotonic()
        reindex = response.json()
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
            "status": response.status_code,
            "seconds": round(ingest_ended - ingest_started, 1),
            "counts": reindex.get("counts"),
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--new-files", type=int, default=300)
    args = parser.parse_args()

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
        base = f"http://127.0.0.1:{port}"
        log = work / "server.log"
        try:
            with running(command, f"{base}/healthz", log=log):
                result = asyncio.run(run(base, token, args, docs))
        finally:
            errors = log.read_text(errors="replace")
            if "Traceback" in errors:
                print(f"server log:\n{errors[-3000:]}")
    for key, value in result.items():
        print(f"{key}: {value}")
    print(f"wrote {write_result('load', result)}")


if __name__ == "__main__":
    main()
