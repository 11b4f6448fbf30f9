"""The bundled server's search extensions against the store's own SQL, on one database: chunk
BM25 by pg_textsearch's BM25 index (Block-Max WAND top-k) and chunk vectors by pgvectorscale's
StreamingDiskANN (with label filtering, meant for access filters), each timed beside the
PostgreSQL store's search on the same questions, unfiltered and with 10%, 50% and 90% of the
documents readable.

    python bench/pg_extensions.py --database postgresql://… --size 100000 [--reuse URL]
        [--prepare-only]

Without ``--reuse`` the corpus, vectors and access map of bench/scale.py (``means`` vectors) are
ingested into a new database, which is kept and printed for the next run (``--prepare-only``
stops after building, so the timings can run later on a quiet machine). It first times
``Shirabe.search`` as bench/scale.py does (query embedding included). The extensions get
their own tables copied from the store's (nothing of the store changes), so both answer over the
same chunks:
- BM25: the store scores weighted query terms, which pg_textsearch cannot take; it gives the
  candidates instead, which the store then scores exactly (as its own impact-ordered candidates
  are), and the final top 10 are compared with the store's. Each term is written as one ASCII
  word (a hash of it), so that PostgreSQL's text parser keeps every term whole (ERR-107, 9.2kg);
- vectors: the DiskANN top 10 under ``labels && readable`` against the store's HNSW search, both
  against the exact top 10 computed here.
The server must preload pg_textsearch (scripts/postgres.sh does).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import psycopg

from shirabe.engine import Shirabe
from shirabe.records import Filters
from shirabe.settings import IngestSettings, Settings, StoreSettings
from shirabe.stores.postgres.schema import temporary_database
from shirabe.stores.postgres.store import PostgresStore

from common import CACHE, percentile, write_result
from scale import (
    QUERIES,
    READABLE,
    bench_embedder,
    readable,
    sentences_and_questions,
    timed_cases,
    write_access_map,
    write_corpus,
)

K = 10
CANDIDATES = 300
"""BM25 candidates taken from pg_textsearch and scored exactly by the store (its own
impact-ordered candidate search takes as many)."""


def word(term: str) -> str:
    """A term as one lower-case ASCII word the text parser keeps whole."""
    return "t" + hashlib.blake2b(term.encode(), digest_size=8).hexdigest()


def group_number(path: str) -> int:
    """The department scale.write_access_map gives a corpus file (the last digit of its
    number)."""
    return int(Path(path).stem[-1])


def timed(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, float]:
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t0


def summary(seconds: Sequence[float]) -> dict[str, float]:
    return {
        "p50_ms": round(1000 * percentile(seconds, 50), 1),
        "p95_ms": round(1000 * percentile(seconds, 95), 1),
    }


def build(server: str, size: int) -> str:
    """A kept database holding bench/scale.py's corpus of ``size`` chunks."""
    sentences, _questions = sentences_and_questions()
    work = CACHE / f"pg-extensions-{size}"
    corpus = work / "corpus"
    write_corpus(corpus, size, sentences)
    access = write_access_map(work / "access.yaml")
    with temporary_database(server, "shirabe_ext", keep=True) as url:
        settings = Settings(
            home=work / "home",
            store=StoreSettings(database_url=url),
            ingest=IngestSettings(section_summaries=False, access_map=access),
        )
        shutil.rmtree(settings.home, ignore_errors=True)
        app = Shirabe(settings, embedder=bench_embedder("means", sentences))
        seconds = timed(app.ingest, [corpus])[1]
        assert isinstance(app.store, PostgresStore)
        app.store.optimize()
        print(f"built {app.status().chunks} chunks in {seconds:.1f} s: {url}", flush=True)
        app.close()
    return url


BM25_INDEX = (
    "CREATE INDEX ext_terms_bm25 ON ext_terms USING bm25 (words) "
    "WITH (text_config = 'simple', k1 = 1.2, b = 0.75)"
)
DISKANN_INDEX = (
    "CREATE INDEX ext_vectors_diskann ON ext_vectors "
    "USING diskann (embedding vector_cosine_ops, labels)"
)


def seconds(conn: Any, sql: str) -> float:
    return round(timed(conn.execute, sql)[1], 1)


def prepare(conn: Any) -> dict[str, float]:
    """The extensions' tables and indexes, copied from the store's; seconds and sizes."""
    out: dict[str, float] = {}
    conn.execute("CREATE EXTENSION IF NOT EXISTS pg_textsearch")
    conn.execute("CREATE EXTENSION IF NOT EXISTS vectorscale CASCADE")
    conn.execute("SET maintenance_work_mem = '2GB'")
    exists = conn.execute("SELECT to_regclass('ext_terms') IS NOT NULL").fetchone()[0]
    if not exists:
        t0 = time.perf_counter()
        conn.execute("CREATE TABLE ext_terms (id bigint PRIMARY KEY, source_id bigint, words text)")
        rows = conn.execute("SELECT id, source_id, tokens FROM chunks").fetchall()
        with conn.cursor().copy("COPY ext_terms (id, source_id, words) FROM STDIN") as copy:
            for cid, source_id, tokens in rows:
                copy.write_row((cid, source_id, " ".join(word(t) for t in tokens.split())))
        out["bm25_copy_seconds"] = round(time.perf_counter() - t0, 1)
        out["bm25_index_seconds"] = seconds(conn, BM25_INDEX)
        t0 = time.perf_counter()
        dim = conn.execute("SELECT vector_dims(embedding) FROM chunk_vectors LIMIT 1").fetchone()[0]
        conn.execute(
            f"CREATE TABLE ext_vectors (chunk_id bigint PRIMARY KEY, "
            f"embedding vector({dim}), labels smallint[])"
        )
        sources = dict(conn.execute("SELECT id, path FROM sources").fetchall())
        conn.execute(
            "INSERT INTO ext_vectors "
            "SELECT v.chunk_id, v.embedding::vector, ARRAY[g.label]::smallint[] "
            "FROM chunk_vectors v JOIN unnest(%s::bigint[], %s::smallint[]) AS g (id, label) "
            "ON g.id = v.source_id",
            (list(sources), [group_number(p) for p in sources.values()]),
        )
        out["diskann_copy_seconds"] = round(time.perf_counter() - t0, 1)
        out["diskann_index_seconds"] = seconds(conn, DISKANN_INDEX)
        conn.execute("ANALYZE ext_terms")
        conn.execute("ANALYZE ext_vectors")
    for name in ("ext_terms_bm25", "ext_vectors_diskann"):
        size = conn.execute("SELECT pg_relation_size(%s)", (name,)).fetchone()[0]
        out[f"{name}_mb"] = round(size / 2**20, 1)
    for name in ("term_blocks", "term_blocks_by_term", "chunk_vectors_hnsw"):
        found = conn.execute("SELECT to_regclass(%s)", (name,)).fetchone()[0]
        if found is not None:
            size = conn.execute("SELECT pg_total_relation_size(%s)", (name,)).fetchone()[0]
            out[f"{name}_mb"] = round(size / 2**20, 1)
    return out


def readable_sources(conn: Any, percent: int | None) -> list[int] | None:
    if percent is None:
        return None
    rows = conn.execute("SELECT id, path FROM sources").fetchall()
    return [i for i, p in rows if group_number(p) < percent // 10]


def compare_bm25(
    app: Shirabe, store: PostgresStore, conn: Any, questions: Sequence[str], percent: int | None
) -> dict[str, float]:
    """The store's chunk BM25 top 10 and pg_textsearch's candidates scored by the store."""
    filters: Filters | None = readable(percent) if percent else None
    allowed = readable_sources(conn, percent)
    where = "" if allowed is None else "WHERE source_id = ANY(%s) "
    sql = (
        f"SELECT id FROM ext_terms {where}"
        "ORDER BY words <@> to_bm25query(%s, 'ext_terms_bm25') LIMIT %s"
    )
    own, ext, cands, same, full = [], [], [], [], 0
    for q in questions:
        weights = app.searcher.query(q).term_weights
        theirs, s_own = timed(store.search_lexical, weights, K, filters)
        text = " ".join(word(t) for t in weights)
        params: list[Any] = ([] if allowed is None else [allowed]) + [text, CANDIDATES]
        t0 = time.perf_counter()
        ids = [r[0] for r in conn.execute(sql, params).fetchall()]
        cands.append(time.perf_counter() - t0)
        mine = store.search_lexical(weights, K, filters, within=ids) if ids else []
        own.append(s_own)
        ext.append(time.perf_counter() - t0)
        a, b = {h.chunk_id for h in theirs}, {h.chunk_id for h in mine}
        same.append(len(a & b) / max(len(a), 1))
        full += len(mine) == min(K, len(theirs)) or len(mine) == K
    return {
        **{f"store_{k}": v for k, v in summary(own).items()},
        **{f"pg_textsearch_{k}": v for k, v in summary(ext).items()},
        **{f"pg_textsearch_candidates_{k}": v for k, v in summary(cands).items()},
        "top10_agreement": round(float(np.mean(same)), 4),
        "full_top10_share": round(full / len(questions), 3),
    }


def exact_tops(
    conn: Any, vectors: Sequence[np.ndarray], allowed: list[int] | None
) -> list[set[int]]:
    where = "" if allowed is None else " WHERE source_id = ANY(%s)"
    rows = conn.execute(
        f"SELECT chunk_id, embedding::text FROM chunk_vectors{where}",
        [] if allowed is None else [allowed],
    ).fetchall()
    ids = np.asarray([r[0] for r in rows], dtype=np.int64)
    matrix = np.vstack([np.asarray(json.loads(r[1]), dtype=np.float32) for r in rows])
    tops = []
    for q in vectors:
        scores = matrix @ q
        tops.append({int(ids[i]) for i in np.argpartition(-scores, K)[:K]})
    return tops


def compare_dense(
    store: PostgresStore, conn: Any, vectors: Sequence[np.ndarray], percent: int | None
) -> dict[str, float]:
    """The store's vector search and DiskANN's, each against the exact top 10."""
    filters: Filters | None = readable(percent) if percent else None
    allowed = readable_sources(conn, percent)
    truth = exact_tops(conn, vectors, allowed)
    labels = None if percent is None else list(range(percent // 10))
    where = "" if labels is None else "WHERE labels && %s::smallint[] "
    dim = len(vectors[0])
    sql = (
        f"SELECT chunk_id FROM ext_vectors {where}"
        f"ORDER BY embedding <=> %s::vector({dim}) LIMIT {K}"
    )
    own, ext, r_own, r_ext = [], [], [], []
    for q, t in zip(vectors, truth, strict=True):
        hits, seconds = timed(store.search_dense, q, K, filters)
        own.append(seconds)
        r_own.append(len({h.chunk_id for h in hits} & t) / K)
        literal = "[" + ",".join(f"{x:.7g}" for x in q) + "]"
        params: list[Any] = ([] if labels is None else [labels]) + [literal]
        t0 = time.perf_counter()
        rows = conn.execute(sql, params).fetchall()
        ext.append(time.perf_counter() - t0)
        r_ext.append(len({r[0] for r in rows} & t) / K)
    return {
        **{f"store_{k}": v for k, v in summary(own).items()},
        **{f"diskann_{k}": v for k, v in summary(ext).items()},
        "store_recall@10": round(float(np.mean(r_own)), 4),
        "diskann_recall@10": round(float(np.mean(r_ext)), 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database", required=True, help="postgresql://… of the server")
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--reuse", help="the URL of a database an earlier run built and kept")
    parser.add_argument(
        "--prepare-only", action="store_true", help="build and index, time nothing (run again)"
    )
    parser.add_argument("--only", choices=("search", "extensions"), help="one part of the timings")
    args = parser.parse_args()
    url = args.reuse or build(args.database, args.size)
    sentences, questions = sentences_and_questions()
    work = CACHE / f"pg-extensions-{args.size}"
    settings = Settings(
        home=work / "home",
        store=StoreSettings(database_url=url),
        ingest=IngestSettings(
            section_summaries=False, access_map=write_access_map(work / "access.yaml")
        ),
    )
    app = Shirabe(settings, embedder=bench_embedder("means", sentences))
    store = app.store
    assert isinstance(store, PostgresStore)
    results: dict[str, Any] = {"database": url.rsplit("/", 1)[-1], "size": args.size}
    with psycopg.connect(url, autocommit=True) as conn:
        results["build"] = prepare(conn)
        print(f"prepared: {json.dumps(results['build'])}", flush=True)
        if args.prepare_only:
            return
        # the store as a user meets it first: Shirabe.search, query embedding included
        if args.only != "extensions":
            results["search"] = timed_cases(app, questions)
            print(f"search: {json.dumps(results['search'])}", flush=True)
        cases: list[int | None] = [] if args.only == "search" else [None, *READABLE]
        sample = random.Random(5).sample(questions, QUERIES * (1 + len(READABLE)))
        app.search("ウォームアップ", k=K)
        for i, percent in enumerate(cases):
            name = "unfiltered" if percent is None else f"{percent}pct_readable"
            part = sample[i * QUERIES : (i + 1) * QUERIES]
            vectors = [app.embedder.embed_query(q) for q in part]
            results[f"bm25_{name}"] = compare_bm25(app, store, conn, part, percent)
            print(f"bm25 {name}: {json.dumps(results[f'bm25_{name}'])}", flush=True)
            results[f"dense_{name}"] = compare_dense(store, conn, vectors, percent)
            print(f"dense {name}: {json.dumps(results[f'dense_{name}'])}", flush=True)
    app.close()
    suffix = f"-{args.only}" if args.only else ""
    print(f"wrote {write_result(f'pg-extensions-{args.size}{suffix}', results)}")


if __name__ == "__main__":
    main()
