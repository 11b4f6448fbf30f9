"""Scale benchmark: index build, query latency and one-file updates at 10k and 100k chunks.

    python bench/scale.py [--sizes 10000 100000] [--embedder random|use]

The corpus is synthetic: JSQuAD sentences shuffled into paragraphs, 100 chunks per file. Vectors
come from random unit vectors (default, so the figures measure the index, not a model) or from
the fast Universal Sentence Encoder; the output says which. Query latency excludes the query
embedding (vectors are computed beforehand) but includes tokenising, all four retrievers, fusion
and loading the hit chunks.
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

import numpy as np

from shirabe.embedders.protocol import Embedder, Matrix, Vector
from shirabe.embedders.registry import make_embedder
from shirabe.engine import Shirabe
from shirabe.retrieval.query import Query
from shirabe.settings import Settings
from shirabe.text.sentences import split_sentences

from common import CACHE, SHARED, peak_rss_mb, percentile, write_result

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
) -> dict[str, float]:
    work = CACHE / f"scale-{size}"
    corpus = work / "corpus"
    files = write_corpus(corpus, size, sentences)
    settings = Settings(home=work / "index", section_summaries=False)
    shutil.rmtree(settings.home, ignore_errors=True)
    app = Shirabe(settings, embedder=embedder)

    started = time.perf_counter()
    report = app.ingest([corpus])
    build = time.perf_counter() - started
    chunks = app.status().chunks
    rss_after_build = peak_rss_mb()

    rng = random.Random(11)
    sample = rng.sample(questions, QUERIES)
    vectors = [embedder.embed_query(q) for q in sample]
    retriever = app.retriever
    app.search("ウォームアップ", k=10)
    latencies = []
    for q, v in zip(sample, vectors, strict=True):
        t0 = time.perf_counter()
        retriever.retrieve(Query(q, tokenizer=app.tokenizer, embedder=embedder, vector=v), 10)
        latencies.append(time.perf_counter() - t0)

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
    assert hits and "二度目" in hits[0].chunk.text
    app.close()
    return {
        "chunks": chunks,
        "files": report.counts["added"],
        "build_seconds": round(build, 1),
        "query_p50_ms": round(1000 * percentile(latencies, 50), 1),
        "query_p95_ms": round(1000 * percentile(latencies, 95), 1),
        "update_one_file_seconds": round(one_file, 3),
        "update_rescan_folder_seconds": round(folder_rescan, 3),
        "peak_rss_mb_after_build": round(rss_after_build, 0),
        "peak_rss_mb": round(peak_rss_mb(), 0),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--embedder", choices=["random", "use"], default="random")
    args = parser.parse_args()
    embedder: Embedder = (
        RandomEmbedder() if args.embedder == "random" else make_embedder(Settings(embedder="use"))
    )
    print(
        f"vectors: {embedder.name}"
        + (" (random unit vectors)" if args.embedder == "random" else "")
    )
    sentences, questions = sentences_and_questions()
    results = {}
    for size in args.sizes:
        results[str(size)] = run(size, embedder, sentences, questions)
        print(f"{size:>7} chunks target: {json.dumps(results[str(size)])}", flush=True)
    path = write_result("scale", {"embedder": embedder.name, "results": results})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
