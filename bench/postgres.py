"""The PostgreSQL store at scale: ingest throughput, query latency unfiltered and under access
filters, one-file updates and HNSW recall against exact search, at 10k and 100k chunks.

    python bench/postgres.py --database postgresql://… [--sizes 10000 100000] [--embedder means]
        [--searches-only URL [--cold] [--record]]

``--database`` names a server (any database on it); each size gets a database of its own,
created and dropped here. The corpus, the vectors, the access map and the timed cases are those
of bench/scale.py, so the figures compare with the embedded store's: random passage vectors
measure the store (tokenizing, writing, searching), not a model, and query latency is that of
``Shirabe.search``, query embedding by the bundled model included. Random vectors are also the
hardest case for HNSW (no clusters), so ``--embedder means`` repeats the run with vectors that
have real neighbourhoods (means of the model's sentence vectors, see bench/scale.py), and
``--embedder use`` with the Universal Sentence Encoder's. Recall@10 compares the HNSW answer of
the dense search with the exact top 10 computed here in NumPy over every stored vector, at
several ``ef_search`` values, for the first 300 questions and for a random 300 (the first ones
come from few articles). ``SHIRABE_STORE__HNSW_EF_SEARCH`` sets the value the timed searches use.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import time
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import psycopg

from shirabe.embedders.protocol import Embedder, Vector
from shirabe.engine import Shirabe
from shirabe.settings import IngestSettings, Settings, StoreSettings
from shirabe.stores.postgres.schema import temporary_database
from shirabe.stores.postgres.store import PostgresStore

from common import CACHE, drop_page_cache, peak_rss_mb, percentile, write_sizes
from scale import (
    EMBEDDERS,
    QUERIES,
    READABLE,
    bench_embedder,
    group_of,
    readable,
    sentences_and_questions,
    timed_cases,
    write_access_map,
    write_corpus,
)

EF_SEARCH = (100, 128, 200, 300, 400)


def exact_top(matrix: np.ndarray, ids: np.ndarray, q: np.ndarray, k: int) -> set[int]:
    scores = matrix @ q
    top = np.argpartition(-scores, k)[:k]
    return {int(ids[i]) for i in top}


Stored = tuple[np.ndarray, np.ndarray, np.ndarray]
"""What :func:`stored_vectors` reads (read once: at 1M chunks it takes minutes and GBs)."""


def stored_vectors(url: str) -> Stored:
    """Every chunk's id, stored vector and group (``group_of`` its file)."""
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT v.chunk_id, v.embedding::text, s.path FROM chunk_vectors v "
            "JOIN sources s ON s.id = v.source_id"
        ).fetchall()
    ids = np.asarray([r[0] for r in rows], dtype=np.int64)
    matrix = np.vstack([np.asarray(json.loads(r[1]), dtype=np.float32) for r in rows])
    return ids, matrix, np.asarray([group_of(r[2]) for r in rows])


def recall(
    store: PostgresStore, stored: Stored, queries: list[Vector], k: int = 10, name: str = ""
) -> dict[str, float]:
    """Recall@10 of the store's vector search against the exact top 10 at each ``ef_search``,
    with the median time of one vector search; ``name`` tells the question sample apart."""
    ids, matrix, _groups = stored
    truth = [exact_top(matrix, ids, q, k) for q in queries]
    out: dict[str, float] = {}
    default = store.hnsw
    for ef in EF_SEARCH:
        store.hnsw = replace(default, ef_search=ef)
        found, latencies = [], []
        for q in queries:
            t0 = time.perf_counter()
            hits = store.search_dense(q, k)
            latencies.append(time.perf_counter() - t0)
            found.append({h.chunk_id for h in hits})
        out[f"recall@10{name} ef_search={ef}"] = round(
            float(np.mean([len(f & t) / k for f, t in zip(found, truth, strict=True)])), 4
        )
        out[f"dense p50 ms{name} ef_search={ef}"] = round(1000 * percentile(latencies, 50), 1)
    store.hnsw = default
    return out


def filtered_recall(
    store: PostgresStore, stored: Stored, queries: list[Vector], k: int = 10
) -> dict[str, float]:
    """Recall@10 of the store's vector search under each READABLE share's access filter
    (``ef_search`` as set) against the exact top 10 of the readable chunks' stored vectors."""
    ids, matrix, groups = stored
    out: dict[str, float] = {}
    for percent in READABLE:
        filters = readable(percent)
        assert filters is not None and filters.groups is not None
        keep = np.isin(groups, sorted(filters.groups))
        truth = [exact_top(matrix[keep], ids[keep], q, k) for q in queries]
        found = [{h.chunk_id for h in store.search_dense(q, k, filters)} for q in queries]
        out[f"recall@10 {percent}pct_readable"] = round(
            float(np.mean([len(f & t) / k for f, t in zip(found, truth, strict=True)])), 4
        )
    return out


class Remembered:
    """An embedder whose query vectors are made once each (searches timed without the model)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner, self.name, self.dim = inner, inner.name, inner.dim
        self.seen: dict[str, Vector] = {}

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.embed_passages(texts)

    def embed_query(self, text: str) -> Vector:
        if text not in self.seen:
            self.seen[text] = self.inner.embed_query(text)
        return self.seen[text]


def searches_only(
    database: str, size: int, questions: list[str], embedder: Embedder, *, cold: bool = False
) -> dict[str, object]:
    """The timed searches and recall again, on the database an earlier ``--keep`` run of
    ``size`` chunks left (its URL): first as a user's searches (query embedding included),
    then again with every question's vector already made (the searches' own time). With
    ``cold``, the OS page cache is emptied first and the first pass is reported apart (restart
    the server before, so that its ``shared_buffers`` hold nothing either)."""
    work = CACHE / f"postgres-{size}"
    remembered = Remembered(embedder)
    settings = Settings(
        home=work / "home-searches",
        store=StoreSettings(database_url=database),
        ingest=IngestSettings(section_summaries=False, access_map=work / "access.yaml"),
    )
    app = Shirabe(settings, embedder=remembered)
    out: dict[str, object] = {"chunks": app.status().chunks}
    if cold:
        out |= cold_pass(app, questions)
        remembered.seen.clear()  # the warm pass makes its query vectors again
    out |= timed_cases(app, questions)
    out |= {f"vectors_made_{k}": v for k, v in timed_cases(app, questions).items()}
    print(f"searches: {json.dumps(out)}", flush=True)
    store = app.store
    assert isinstance(store, PostgresStore)
    out["relations_mb"] = relation_sizes(store.url)
    vectors = [remembered.embed_query(q) for q in questions[:QUERIES]]
    stored = stored_vectors(store.url)
    out |= recall(store, stored, vectors)
    out |= filtered_recall(store, stored, vectors)
    app.close()
    return out


def cold_pass(app: Shirabe, questions: list[str]) -> dict[str, float]:
    """The timed cases asked once with nothing of the index in the OS page cache, printed, their
    figures named ``cold_…``."""
    drop_page_cache()
    first = timed_cases(app, questions)
    print(f"searches, first pass from a cold cache: {json.dumps(first)}", flush=True)
    return {f"cold_{name}": value for name, value in first.items()}


def relation_sizes(url: str) -> dict[str, float]:
    """Each table's size with its indexes and TOAST, in MB, largest first (those over 1 MB); a
    partitioned table's is the sum of its partitions'."""
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT coalesce(pg_partition_root(c.oid), c.oid)::regclass::text, "
            "sum(pg_total_relation_size(c.oid))::bigint FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE c.relkind = 'r' AND n.nspname = current_schema() GROUP BY 1 ORDER BY 2 DESC"
        ).fetchall()
    return {name: round(size / 2**20, 1) for name, size in rows if size > 2**20}


def run(
    size: int,
    server: str,
    keep: bool,
    sentences: list[str],
    questions: list[str],
    embedder: Embedder,
    *,
    cold: bool = False,
    build_memory: str = StoreSettings().database_build_memory,
) -> dict[str, object]:
    work = CACHE / f"postgres-{size}"
    corpus = work / "corpus"
    files = write_corpus(corpus, size, sentences)
    access = write_access_map(work / "access.yaml")
    with temporary_database(server, "shirabe_bench", keep=keep) as url:
        settings = Settings(
            home=work / "home",
            store=StoreSettings(database_url=url, database_build_memory=build_memory),
            ingest=IngestSettings(section_summaries=False, access_map=access),
        )
        shutil.rmtree(settings.home, ignore_errors=True)
        app = Shirabe(settings, embedder=embedder)
        started = time.perf_counter()
        report = app.ingest([corpus])
        build = time.perf_counter() - started
        status = app.status()
        print(f"built {status.chunks} chunks in {build:.1f} s", flush=True)
        store = app.store
        assert isinstance(store, PostgresStore)
        store.optimize()

        timings: dict[str, float] = {}
        if cold:
            timings |= cold_pass(app, questions)
        timings |= timed_cases(app, questions)
        print(f"searches: {json.dumps(timings)}", flush=True)

        target = files[len(files) // 2]
        target.write_text(
            target.read_text("utf-8") + "\n## 追記\n\n変更された段落です。\n", "utf-8"
        )
        t0 = time.perf_counter()
        update = app.ingest([target])
        one_file = time.perf_counter() - t0
        assert update.counts["updated"] == 1, update.counts
        hits = app.search("変更された段落です", k=3)
        assert any("変更された" in h.chunk.text for h in hits), [h.chunk.text for h in hits]

        relations = relation_sizes(store.url)
        print(f"relations (MB, with indexes and TOAST): {json.dumps(relations)}", flush=True)
        vectors = [embedder.embed_query(q) for q in questions[:QUERIES]]
        stored = stored_vectors(store.url)
        recalls = recall(store, stored, vectors)
        recalls |= filtered_recall(store, stored, vectors)
        sample = random.Random(5).sample(questions, QUERIES)  # not only the first questions
        randoms = [embedder.embed_query(q) for q in sample]
        recalls |= recall(store, stored, randoms, name=" (random)")
        app.close()
    return {
        "chunks": status.chunks,
        "files": report.counts["added"],
        "build_seconds": round(build, 1),
        "ingest_chunks_per_second": round(status.chunks / build, 1),
        "database_mb": round(status.index_bytes / 1_048_576, 0),
        "relations_mb": relations,
        **timings,
        "update_one_file_seconds": round(one_file, 3),
        **recalls,
        "client_peak_rss_mb": round(peak_rss_mb(), 0),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database", required=True, help="postgresql://… of the server")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--keep", action="store_true", help="keep the databases afterwards")
    parser.add_argument("--embedder", choices=EMBEDDERS, default="random")
    parser.add_argument(
        "--cold",
        action="store_true",
        help="first time the questions with the OS page cache emptied (root), then again",
    )
    parser.add_argument(
        "--build-memory",
        default=StoreSettings().database_build_memory,
        help="maintenance_work_mem for the index builds (default: the setting's)",
    )
    parser.add_argument(
        "--searches-only",
        metavar="URL",
        help="time the searches and recall on the database an earlier --keep run of the one "
        "size given left, without building (nothing written to the results)",
    )
    parser.add_argument(
        "--record",
        action="store_true",
        help="with --searches-only: write the figures to the results as that size's, marked "
        "as searched only (no build figures), e.g. for a database migrated to the current code",
    )
    args = parser.parse_args()
    sentences, questions = sentences_and_questions()
    if args.searches_only:
        (size,) = args.sizes
        embedder = bench_embedder(args.embedder, sentences)
        found = searches_only(args.searches_only, size, questions, embedder, cold=args.cold)
        print(json.dumps(found), flush=True)
        if args.record:
            marked = {**found, "searched_only": args.searches_only.rsplit("/", 1)[-1]}
            meta = {"vectors": embedder.name}
            print(f"wrote {write_sizes(f'postgres-{args.embedder}', meta, {str(size): marked})}")
        return
    results = {}
    for size in args.sizes:
        embedder = bench_embedder(args.embedder, sentences)  # a fresh query cache a size
        print(f"vectors: {embedder.name}")
        results[str(size)] = run(
            size,
            args.database,
            args.keep,
            sentences,
            questions,
            embedder,
            cold=args.cold,
            build_memory=args.build_memory,
        )
        print(f"{size:>7} chunks target: {json.dumps(results[str(size)])}", flush=True)
    path = write_sizes(f"postgres-{args.embedder}", {"vectors": embedder.name}, results)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
