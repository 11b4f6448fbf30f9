"""Reads from a streaming replica: how long an ingested file takes to become searchable there,
whether answers match the primary's, and search throughput against one server.

    scripts/postgres.sh start; scripts/postgres.sh replica-start
    python bench/replica.py --primary postgresql://…:54329/shirabe \\
        --replica postgresql://…:54330/shirabe [--chunks 5000] [--clients 1 2 4 8]

A database is created on the primary (the replica receives it by streaming replication) and
dropped afterwards. The corpus and vectors are bench/scale.py's (random unit vectors, so the
figures measure the store). Throughput is measured with N client threads each running the full
hybrid retrieval for 20 s against the primary alone; on one machine the replica shares the same
cores, so what a replica adds is its own cores, which this measures per core.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import threading
import time

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from shirabe.engine import Shirabe
from shirabe.retrieval.query import Query
from shirabe.settings import IngestSettings, Settings, StoreSettings
from shirabe.stores.postgres.schema import temporary_database

from common import CACHE, percentile, write_result
from scale import RandomEmbedder, sentences_and_questions, write_corpus

SECONDS = 20


def throughput(
    app: Shirabe, embedder: RandomEmbedder, questions: list[str], clients: int
) -> dict[str, float]:
    stop = time.monotonic() + SECONDS
    latencies: list[float] = []
    lock = threading.Lock()

    def client(seed: int) -> None:
        rng = random.Random(seed)
        while time.monotonic() < stop:
            q = rng.choice(questions)
            vector = embedder.embed_query(q)
            query = Query(q, tokenizer=app.tokenizer, embedder=embedder, vector=vector)
            t0 = time.perf_counter()
            app.retriever.retrieve(query, 10)
            with lock:
                latencies.append(time.perf_counter() - t0)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {
        "clients": clients,
        "searches_per_second": round(len(latencies) / SECONDS, 1),
        "p50_ms": round(1000 * percentile(latencies, 50), 1),
        "p95_ms": round(1000 * percentile(latencies, 95), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--primary", required=True)
    parser.add_argument("--replica", required=True)
    parser.add_argument("--chunks", type=int, default=5000)
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 2, 4, 8])
    args = parser.parse_args()
    sentences, questions = sentences_and_questions()
    work = CACHE / "replica"
    corpus = work / "corpus"
    files = write_corpus(corpus, args.chunks, sentences)
    embedder = RandomEmbedder()
    result: dict[str, object] = {"chunks": args.chunks, "cores": os.cpu_count()}
    with temporary_database(args.primary, "shirabe_replica") as primary:
        replica = make_conninfo(args.replica, dbname=str(conninfo_to_dict(primary)["dbname"]))
        for _ in range(100):  # the new database reaches the replica
            try:
                psycopg.connect(replica).close()
                break
            except psycopg.OperationalError:
                time.sleep(0.1)
        home = work / "home"
        shutil.rmtree(home, ignore_errors=True)
        writer = Shirabe(
            Settings(
                home=home,
                store=StoreSettings(database_url=primary),
                ingest=IngestSettings(section_summaries=False),
            ),
            embedder=embedder,
        )
        t0 = time.perf_counter()
        writer.ingest([corpus])
        result["ingest_seconds"] = round(time.perf_counter() - t0, 1)
        writer.store.optimize()
        reader = Shirabe(
            Settings(
                home=home,
                store=StoreSettings(database_url=primary, database_read_url=replica),
                ingest=IngestSettings(section_summaries=False),
            ),
            embedder=embedder,
        )
        # replication lag: one changed file, searched on the replica until it shows
        lags = []
        for i in range(10):
            target = files[i]
            marker = f"追記番号{i}の段落です"
            target.write_text(target.read_text("utf-8") + f"\n## 追記{i}\n\n{marker}。\n", "utf-8")
            writer.ingest([target])
            committed = time.perf_counter()
            while not any(marker in h.chunk.text for h in reader.search(marker, k=3)):
                time.sleep(0.001)
            lags.append(time.perf_counter() - committed)
        result["visible_on_replica_after_commit_ms"] = {
            "p50": round(1000 * percentile(lags, 50), 1),
            "max": round(1000 * max(lags), 1),
        }
        # the same answers from both
        rng = random.Random(5)
        sample = rng.sample(questions, 100)
        same = 0
        for q in sample:
            a = [h.chunk.id for h in writer.search(q, k=10)]
            b = [h.chunk.id for h in reader.search(q, k=10)]
            same += a == b
        result["identical_top10_of_100"] = same
        result["throughput_primary"] = [
            throughput(writer, embedder, questions, n) for n in args.clients
        ]
        reader.close()
        writer.close()
    for key, value in result.items():
        print(f"{key}: {value}")
    print(f"wrote {write_result('replica', result)}")


if __name__ == "__main__":
    main()
