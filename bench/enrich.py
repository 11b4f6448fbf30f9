"""Does a chat model's questions and keywords per passage (doc2query) help retrieval?

    python bench/enrich.py --gguf FILE [--paragraphs 150] [--threads 2]

The first JSQuAD valid articles up to ``--paragraphs`` paragraphs become a corpus (one Markdown file
per paragraph, as bench/jsquad.py writes them). It is indexed twice with the bundled embedding
model: as shirabe indexes by default, and with ``SHIRABE_INGEST__ENRICH_QUESTIONS`` (the GGUF model,
run in-process by llama.cpp, writes three questions and five keywords per passage, indexed for BM25
only). Every question of those paragraphs is searched in both; prints BM25 alone and hybrid R@1 /
R@5 / MRR@10 at paragraph level, the minutes spent writing, and the seconds per passage. The
questions a model writes are kept in bench/.cache/enrich (a rerun writes nothing again). Results go
to bench/results/enrich.json.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from jsquad import (
    CANDIDATES,
    DEFAULT_FILE,
    fmt,
    paragraph_ranking,
    retrieval_metrics,
    seed_embeddings,
)
from shirabe.engine import Shirabe
from shirabe.evaluation.squad import SquadQuestion as Question, write_corpus
from shirabe.retrieval.fusion import zscore_fusion
from shirabe.retrieval.hybrid import HybridRetriever
from shirabe.settings import AnswerSettings, ChatModelSettings, IngestSettings, Settings

from common import CACHE, write_result


def subset(data: dict[str, Any], paragraphs: int) -> dict[str, Any]:
    """The first whole articles holding at least ``paragraphs`` paragraphs."""
    kept, count = [], 0
    for article in data["data"]:
        if count >= paragraphs:
            break
        kept.append(article)
        count += len(article["paragraphs"])
    return {"data": kept}


def measure(app: Shirabe, corpus: Path, questions: list[Question]) -> dict[str, dict[str, float]]:
    retriever = app.retriever
    assert isinstance(retriever, HybridRetriever)
    prefix = str(corpus.resolve()) + "/"
    sources: dict[int, str] = {}

    def source_of(cid: int) -> str:
        if cid not in sources:
            for i, chunk in app.store.get_chunks([cid]).items():
                sources[i] = chunk.source.removeprefix(prefix)
        return sources.get(cid, "?")

    bm25, hybrid = [], []
    for q in questions:
        rankings = retriever.rankings(app.searcher.query(q.text), CANDIDATES)
        fused = retriever.fuse(rankings, CANDIDATES)
        hybrid.append(paragraph_ranking([cid for cid, _ in fused], source_of))
        lexical = {
            n: [(s.chunk_id, s.score) for s in r]
            for n, r in rankings.items()
            if n in ("bm25", "bm25_sentence")
        }
        bm25.append(paragraph_ranking([cid for cid, _ in zscore_fusion(lexical)], source_of))
    gold = [q.paragraph for q in questions]
    return {"bm25": retrieval_metrics(bm25, gold), "hybrid": retrieval_metrics(hybrid, gold)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gguf", type=Path, required=True, help="the chat model (GGUF)")
    parser.add_argument("--paragraphs", type=int, default=150)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--file", type=Path, default=DEFAULT_FILE)
    args = parser.parse_args()

    data = subset(json.loads(args.file.read_text(encoding="utf-8")), args.paragraphs)
    work = CACHE / "enrich"
    corpus = work / "corpus"
    questions = write_corpus(data, corpus)
    paragraphs = sum(len(a["paragraphs"]) for a in data["data"])
    print(f"{len(data['data'])} articles, {paragraphs} paragraphs, {len(questions)} questions")

    results: dict[str, Any] = {"paragraphs": paragraphs, "questions": len(questions)}
    plain_home = work / "plain"
    with Shirabe(Settings(home=plain_home)) as plain:
        started = time.perf_counter()
        plain.ingest([corpus])
        results["plain_ingest_seconds"] = round(time.perf_counter() - started, 1)
        results["plain"] = measure(plain, corpus, questions)
    print(f"plain:    ingest {results['plain_ingest_seconds']} s")

    model = Settings(
        home=work / "enriched",
        ingest=IngestSettings(enrich_questions=True),
        answering=AnswerSettings(generator="llama"),
        chat_model=ChatModelSettings(model_path=args.gguf, threads=args.threads),
    )
    with Shirabe(model) as enriched:
        seed_embeddings(plain_home, enriched)  # the same vectors: only the writing is timed
        assert enriched.writers.enricher is not None
        before = len(
            enriched.writers.enricher.missing(
                c for _k, _d, cs in enriched.documents([corpus]) for c in cs
            )
        )
        started = time.perf_counter()
        enriched.ingest([corpus])
        seconds = time.perf_counter() - started
        results["enriched_ingest_seconds"] = round(seconds, 1)
        results["passages_written"] = before
        results["seconds_per_passage"] = enriched.writers.enricher.mean_seconds()
        results["enriched"] = measure(enriched, corpus, questions)
    print(
        f"enriched: ingest {seconds / 60:.1f} min, {before} passages written this run, "
        f"{results['seconds_per_passage']:.1f} s per passage (all runs)"
    )
    for arm in ("plain", "enriched"):
        for kind in ("bm25", "hybrid"):
            print(f"{arm:9s} {kind:7s} {fmt(results[arm][kind])}")
    write_result("enrich", results)


if __name__ == "__main__":
    main()
