"""Scale benchmark: index build, query latency (unfiltered and under access filters) and
one-file updates of the embedded store at 10k and 100k chunks.

    python bench/scale.py [--sizes 10000 100000] [--embedder random|means|use]
        [--searches-only [--cold]]

``--searches-only`` times the searches again on the index an earlier run of the same size
left, without rebuilding it, and prints the figures without writing them.

The corpus is synthetic: JSQuAD sentences shuffled into paragraphs, 100 chunks per file. Passage
vectors are random unit vectors (default, so the figures measure the index, not a model), means
of the bundled model's vectors of the sentences a passage holds (``means``: real neighbourhoods
without embedding 100k chunks), or come from the fast Universal Sentence Encoder; the output says
which. Except with ``use``, questions are embedded by the bundled model. Query latency is that of
``Shirabe.search``: the query embedding, tokenising, all four retrievers, fusion and loading the
hit chunks. An access map gives each file one of ten groups, so readers of 1, 5 and 9 groups see
10%, 50% and 90% of the documents; each case asks its own questions, so no query vector comes
from the model's cache (except in the case that asks the unfiltered questions again on purpose).
The dense search's recall@10 is measured against the exact top 10 of the embedder's own float32
vectors, and the index's bytes are broken down by SQLite table and index and by segment array
(bench/index_bytes.py).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from shirabe.access.map import restrict
from shirabe.embedders.protocol import Embedder, Matrix, Vector
from shirabe.embedders.registry import make_embedder
from shirabe.engine import Shirabe
from shirabe.indexing.passages import chunk_embedding_text
from shirabe.records import Filters, Reader
from shirabe.settings import EmbedderSettings, IngestSettings, Settings
from shirabe.stores.embedded.store import EmbeddedStore
from shirabe.text.sentences import split_sentences

from common import CACHE, SHARED, drop_page_cache, peak_rss_mb, percentile, write_sizes
from index_bytes import embedded_bytes

CHUNKS_PER_FILE = 100
QUERIES = 300


class RandomEmbedder:
    """Deterministic random unit vectors keyed by text: measures the index, not a model."""

    name = "random-unit-384"
    dim = 384

    def _one(self, text: str) -> Vector:
        seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")
        v = np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
        out: Vector = v / np.linalg.norm(v)
        return out

    def embed_passages(self, texts: Sequence[str]) -> Matrix:
        return (
            np.vstack([self._one(t) for t in texts])
            if texts
            else np.zeros((0, self.dim), np.float32)
        )

    def embed_query(self, text: str) -> Vector:
        return self._one("q:" + text)


class RandomPassages:
    """Random unit vectors for passages (as :class:`RandomEmbedder`), a model for questions: the
    index is filled without hours of embedding, and query latency still includes the model."""

    def __init__(self, model: Embedder) -> None:
        self._random = RandomEmbedder()
        self._model = model
        self.name = f"random-passages+{model.name}"
        self.dim = 384

    def embed_passages(self, texts: Sequence[str]) -> Matrix:
        return self._random.embed_passages(texts)

    def embed_query(self, text: str) -> Vector:
        return self._model.embed_query(text)


class SentenceMeans:
    """Real vectors without embedding every chunk: each JSQuAD sentence is embedded once by the
    model (3.4k sentences, cached in bench/.cache), and a passage's vector is the normalised mean
    of the vectors of the corpus sentences it holds (a sentence cut short at the end of a
    chunk counts as the sentence it begins). Chunks then have the neighbourhoods real text
    gives them, so HNSW recall and latency mean what they would with real documents; questions
    are embedded by the model, and so is a text holding no corpus sentence (the paragraph an
    update adds)."""

    def __init__(self, model: Embedder, sentences: Sequence[str]) -> None:
        self._model = model
        self.name = f"sentence-means+{model.name}"
        self.dim = 384
        unique = sorted(set(sentences))
        digest = hashlib.blake2b("\n".join(unique).encode(), digest_size=8).hexdigest()
        path = CACHE / f"sentences-{digest}.npy"
        if path.exists():
            matrix = np.load(path)
        else:
            matrix = model.embed_passages(unique)
            path.parent.mkdir(parents=True, exist_ok=True)
            np.save(path, matrix)
        self._vectors = dict(zip(unique, matrix, strict=True))
        self._starts = {u[:12]: v for u, v in self._vectors.items()}

    def _one(self, text: str) -> Vector:
        # chunk texts are "heading\nbody", sentence texts "heading: sentence"
        body = text.split("\n", 1)[1] if "\n" in text else text.split(": ", 1)[-1]
        found = [self._vectors.get(s, self._starts.get(s[:12])) for s in split_sentences(body)]
        present = [v for v in found if v is not None]
        if not present:  # text no corpus sentence is in (an update): the model embeds it
            vector: Vector = self._model.embed_passages([text])[0]
            return vector
        mean = np.mean(present, axis=0).astype(np.float32)
        out: Vector = mean / np.linalg.norm(mean)
        return out

    def embed_passages(self, texts: Sequence[str]) -> Matrix:
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        return np.vstack([self._one(t) for t in texts])

    def embed_query(self, text: str) -> Vector:
        return self._model.embed_query(text)


EMBEDDERS = ("random", "means", "use")


def bench_embedder(kind: str, sentences: Sequence[str] = ()) -> Embedder:
    """``random``: random passage vectors, questions by the bundled model; ``means``:
    :class:`SentenceMeans` of ``sentences``; ``use``: the Universal Sentence Encoder for
    both."""
    if kind == "use":
        return make_embedder(EmbedderSettings(name="use"))
    if kind == "means":
        return SentenceMeans(make_embedder(EmbedderSettings()), sentences)
    return RandomPassages(make_embedder(EmbedderSettings()))


READABLE = (10, 50, 90)
"""Shares of the documents (percent) readable under the timed access filters."""


def write_access_map(path: Path) -> Path:
    """An access map giving each corpus file one of ten groups (d0 … d9) by the last digit of
    its number, as a company's map gives folders to departments."""
    rules = {f"*/doc????{d}.md": [f"d{d}"] for d in range(10)}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rules, indent=1), encoding="utf-8")  # JSON is YAML
    return path


def group_of(source: str) -> str:
    """The group write_access_map gives a corpus file."""
    return f"d{Path(source).stem[-1]}"


def readable(percent: int) -> Filters | None:
    """The filter a reader of ``percent`` / 10 groups searches with."""
    reader = Reader(groups=frozenset(f"d{d}" for d in range(percent // 10)))
    return restrict(None, reader)


def latencies(
    app: Shirabe, questions: Sequence[str], filters: Filters | None
) -> tuple[list[float], float]:
    """Seconds per ``app.search`` of each question (top 10), as a user's search costs, and the
    share of searches that returned a full 10 hits, all readable under ``filters``."""
    out, full = [], 0
    for q in questions:
        t0 = time.perf_counter()
        hits = app.search(q, k=10, filters=filters)
        out.append(time.perf_counter() - t0)
        allowed = filters.groups if filters is not None else None
        readable = allowed is None or all(group_of(h.chunk.source) in allowed for h in hits)
        full += len(hits) == 10 and readable
    return out, full / len(questions)


def timed_cases(app: Shirabe, questions: Sequence[str]) -> dict[str, float]:
    """p50/p95 of the query embedding alone, of searches unfiltered and at each READABLE
    share, each case with its own QUERIES questions (``questions`` holds at least 5 ×
    QUERIES), and of the unfiltered searches asked again (query vectors cached)."""
    rng = random.Random(11)
    sample = rng.sample(list(questions), QUERIES * (2 + len(READABLE)))
    app.search("ウォームアップ", k=10)
    seconds = []
    for q in sample[-QUERIES:]:  # the model alone, for reference
        t0 = time.perf_counter()
        app.embedder.embed_query(q)
        seconds.append(time.perf_counter() - t0)
    out = {
        "query_embedding_p50_ms": round(1000 * percentile(seconds, 50), 1),
        "query_embedding_p95_ms": round(1000 * percentile(seconds, 95), 1),
    }
    cases: list[tuple[str, Filters | None]] = [("query", None)]
    cases += [(f"query_{p}pct_readable", readable(p)) for p in READABLE]
    for i, (name, filters) in enumerate(cases):
        seconds, full = latencies(app, sample[i * QUERIES : (i + 1) * QUERIES], filters)
        out[f"{name}_p50_ms"] = round(1000 * percentile(seconds, 50), 1)
        out[f"{name}_p95_ms"] = round(1000 * percentile(seconds, 95), 1)
        out[f"{name}_full_top10_share"] = round(full, 3)
        if filters is None:
            # the same questions again: their vectors come from the model's cache (which holds
            # the last 1,024), so this is the search's own time, without the model
            seconds, _ = latencies(app, sample[:QUERIES], None)
            out["query_vector_cached_p50_ms"] = round(1000 * percentile(seconds, 50), 1)
            out["query_vector_cached_p95_ms"] = round(1000 * percentile(seconds, 95), 1)
    return out


def dense_recall(app: Shirabe, questions: Sequence[str], k: int = 10) -> dict[str, float]:
    """Recall@k of the store's dense search (chunk level, unfiltered) against the exact top k
    of the embedder's own float32 vectors of every chunk, for the first QUERIES questions."""
    store = app.store
    assert isinstance(store, EmbeddedStore)
    ids = store.segments.indexed_ids()
    chunks = store.get_chunks(ids.tolist())
    texts = [chunk_embedding_text(chunks[int(i)]) for i in ids]
    matrix = np.vstack(
        [app.embedder.embed_passages(texts[s : s + 5000]) for s in range(0, len(texts), 5000)]
    )
    found = []
    for q in questions[:QUERIES]:
        vector = app.embedder.embed_query(q)
        scores = matrix @ vector
        truth = {int(ids[i]) for i in np.argpartition(-scores, k)[:k]}
        hits = store.search_dense(vector, k)
        found.append(len(truth & {h.chunk_id for h in hits}) / k)
    return {f"dense_recall@{k}": round(float(np.mean(found)), 4)}


def sentences_and_questions() -> tuple[list[str], list[str]]:
    data = json.loads((SHARED / "data" / "jsquad" / "valid-v1.3.json").read_text("utf-8"))
    sentences: list[str] = []
    questions: list[str] = []
    for article in data["data"]:
        for para in article["paragraphs"]:
            body = para["context"].split(" [SEP] ", 1)[-1]
            sentences.extend(s for s in split_sentences(body) if len(s) >= 10)
            questions.extend(qa["question"] for qa in para["qas"])
    return sentences, questions


def write_corpus(folder: Path, chunks: int, sentences: list[str], seed: int = 7) -> list[Path]:
    """Files of CHUNKS_PER_FILE sections, each a heading and a paragraph of ~3 sentences."""
    rng = random.Random(seed)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    files: list[Path] = []
    for f in range(chunks // CHUNKS_PER_FILE):
        lines = [f"# 資料{f:05d}\n"]
        for c in range(CHUNKS_PER_FILE):
            body = "".join(rng.sample(sentences, 3))[:380]
            lines.append(f"## 項目{c:03d}\n\n{body}\n")
        path = folder / f"{f // 100:03d}" / f"doc{f:05d}.md"
        path.parent.mkdir(exist_ok=True)
        path.write_text("\n".join(lines), encoding="utf-8")
        files.append(path)
    return files


def run(
    size: int, embedder: Embedder, sentences: list[str], questions: list[str]
) -> dict[str, Any]:
    work = CACHE / f"scale-{size}"
    corpus = work / "corpus"
    files = write_corpus(corpus, size, sentences)
    access = write_access_map(work / "access.yaml")
    settings = Settings(
        home=work / "index", ingest=IngestSettings(section_summaries=False, access_map=access)
    )
    shutil.rmtree(settings.home, ignore_errors=True)
    app = Shirabe(settings, embedder=embedder)

    started = time.perf_counter()
    report = app.ingest([corpus])
    build = time.perf_counter() - started
    chunks = app.status().chunks
    rss_after_build = peak_rss_mb()
    print(f"built {chunks} chunks in {build:.1f} s", flush=True)

    timings = timed_cases(app, questions)
    print(f"searches: {json.dumps(timings)}", flush=True)
    recall = dense_recall(app, questions)
    print(f"recall: {json.dumps(recall)}", flush=True)

    target = files[len(files) // 2]
    target.write_text(target.read_text("utf-8") + "\n## 追記\n\n変更された段落です。\n", "utf-8")
    t0 = time.perf_counter()
    update = app.ingest([target])
    one_file = time.perf_counter() - t0
    assert update.counts["updated"] == 1, update.counts
    target.write_text(target.read_text("utf-8") + "\n## 追記2\n\n二度目の変更です。\n", "utf-8")
    t0 = time.perf_counter()
    app.ingest([corpus])
    folder_rescan = time.perf_counter() - t0
    hits = app.search("二度目の変更です", k=3)
    assert any("二度目" in h.chunk.text for h in hits), [h.chunk.text for h in hits]
    app.close()
    disk = sum(f.stat().st_size for f in settings.home.rglob("*") if f.is_file())
    sizes = embedded_bytes(settings.home)
    print(f"bytes (MB): {json.dumps(sizes)}", flush=True)
    return {
        "chunks": chunks,
        "files": report.counts["added"],
        "build_seconds": round(build, 1),
        **timings,
        **recall,
        "update_one_file_seconds": round(one_file, 3),
        "update_rescan_folder_seconds": round(folder_rescan, 3),
        "peak_rss_mb_after_build": round(rss_after_build, 0),
        "peak_rss_mb": round(peak_rss_mb(), 0),
        "disk_mb": round(disk / 2**20, 0),
        "bytes_mb": sizes,
    }


def searches_only(
    size: int, embedder: Embedder, questions: list[str], *, cold: bool = False
) -> None:
    """The timed cases again on the index an earlier run of ``size`` left (no rebuild), printed
    and not written to the results: runs differ by a few ms on a shared machine, so a figure is
    trusted only when repeated. With ``cold``, the OS page cache is emptied before the index
    is opened and that first pass is printed apart."""
    work = CACHE / f"scale-{size}"
    if not (work / "index").is_dir():
        raise SystemExit(f"no index at {work / 'index'}: run bench/scale.py --sizes {size} first")
    settings = Settings(
        home=work / "index",
        ingest=IngestSettings(section_summaries=False, access_map=work / "access.yaml"),
    )
    if cold:
        drop_page_cache()
    with Shirabe(settings, embedder=embedder) as app:
        if cold:
            first = timed_cases(app, questions)
            print(f"{size:>7} chunks first pass, cold: {json.dumps(first)}", flush=True)
        print(f"{size:>7} chunks searches: {json.dumps(timed_cases(app, questions))}", flush=True)
        print(f"{size:>7} chunks recall: {json.dumps(dense_recall(app, questions))}", flush=True)
    print(f"bytes (MB): {json.dumps(embedded_bytes(settings.home))}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--embedder", choices=EMBEDDERS, default="random")
    parser.add_argument(
        "--searches-only", action="store_true", help="time the searches on the kept indexes"
    )
    parser.add_argument(
        "--cold",
        action="store_true",
        help="with --searches-only: first time the questions with the OS page cache emptied "
        "(root), then again",
    )
    args = parser.parse_args()
    sentences, questions = sentences_and_questions()
    if args.searches_only:
        for size in args.sizes:
            searches_only(size, bench_embedder(args.embedder, sentences), questions, cold=args.cold)
        return
    results = {}
    for size in args.sizes:
        embedder = bench_embedder(args.embedder, sentences)  # a fresh query cache a size
        print(f"vectors: {embedder.name}")
        results[str(size)] = run(size, embedder, sentences, questions)
        print(f"{size:>7} chunks target: {json.dumps(results[str(size)])}", flush=True)
    path = write_sizes(f"scale-{args.embedder}", {"vectors": embedder.name}, results)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
