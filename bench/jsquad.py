"""JSQuAD retrieval and answering benchmark.

    python bench/jsquad.py [FILE] [--fresh] [--limit N] [--sweep] [--database URL]

Every paragraph of a SQuAD-format file becomes one Markdown file (article title as heading)
ingested through the normal pipeline; every question is asked. Prints, for BM25 alone, dense
alone and hybrid: R@1/5/10, MRR@10, nDCG@10 at paragraph level (a paragraph ranks by its best
chunk); extractive answer containment (NFKC, answers at most 150 characters); refusal rate;
ingest time split into embedding and the rest; query latency p50/p95 including the query
embedding. Results also go to bench/results/jsquad.json.

The index is kept in bench/.cache/jsquad between runs (the embedding cache makes re-runs cheap);
``--fresh`` rebuilds it from scratch so the ingest timings are measured. ``--database URL``
runs the same on a PostgreSQL store in that (empty or earlier) database, seeding its embedding
cache from the embedded index when one exists (same model, so nothing is embedded twice);
results go to bench/results/jsquad-postgres.json.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shirabe.embedders.metered import MeteredEmbedder
from shirabe.embedders.registry import make_embedder
from shirabe.engine import Shirabe
from shirabe.evaluation.squad import SquadQuestion as Question, nfkc, write_corpus
from shirabe.records import Answer, ScoredId
from shirabe.retrieval.fusion import convex_fusion, reciprocal_rank_fusion, zscore_fusion
from shirabe.retrieval.hits import hits_for
from shirabe.retrieval.hybrid import HybridRetriever
from shirabe.settings import Settings
from shirabe.stores.embedded.store import EmbeddedStore
from shirabe.stores.protocol import Store
from shirabe.training.spans import char_f1

from common import CACHE, SHARED, percentile, write_result

DEFAULT_FILE = SHARED / "data" / "jsquad" / "valid-v1.3.json"
CANDIDATES = 100

Fuse = Callable[[Mapping[str, list[tuple[int, float]]]], list[tuple[int, float]]]
KS = (1, 5, 10)


@dataclass
class Tally:
    """The answering figures, question by question."""

    contained: int = 0
    first_contained: int = 0
    first_quoted: int = 0
    refused: int = 0
    exact: float = 0.0
    f1: float = 0.0
    span_exact: float = 0.0
    span_f1: float = 0.0
    lines: int = 0
    other_lines: int = 0
    refused_without: int = 0

    def add(self, answer: Answer, q: Question, prefix: str) -> bool:
        """Counts one answer; whether it holds a gold answer."""
        golds = [nfkc(a) for a in q.answers]
        ok = not answer.refused and any(a in nfkc(answer.text) for a in golds)
        first = nfkc(answer.text.split("\n", 1)[0])
        self.contained += ok
        self.refused += answer.refused
        self.first_contained += not answer.refused and any(a in first for a in golds)
        quoted = nfkc(first_quoted(answer))
        self.first_quoted += not answer.refused and any(a in quoted for a in golds)
        span = nfkc(short_span(answer))
        self.exact += max(float(span == a) for a in golds)
        self.f1 += max(char_f1(span, a) for a in golds)
        read = nfkc(reader_span(answer))
        self.span_exact += max(float(read == a) for a in golds)
        self.span_f1 += max(char_f1(read, a) for a in golds)
        if not answer.refused:
            cited = {c.number: c.source.removeprefix(prefix) for c in answer.citations}
            for number in cited_lines(answer.text):
                self.lines += 1
                self.other_lines += cited.get(number) != q.paragraph
        return ok

    def figures(self, n: int, *, without_own: bool) -> dict[str, float]:
        out = {
            "containment": self.contained / n,
            "first_line_containment": self.first_contained / n,
            "first_quoted_line_containment": self.first_quoted / n,
            "refusal_rate": self.refused / n,
            "short_exact_match": self.exact / n,
            "short_char_f1": self.f1 / n,
            "span_exact_match": self.span_exact / n,
            "span_char_f1": self.span_f1 / n,
            "lines_from_another_paragraph": self.other_lines / max(self.lines, 1),
        }
        if without_own:
            out["refused_without_own_paragraph"] = self.refused_without / n
        return out


def short_span(answer: Answer) -> str:
    """The answer's short answer, else its first line without citation markers ('' for a
    refusal): what is scored against the gold span by exact match and character F1."""
    if answer.refused:
        return ""
    if answer.short:
        return answer.short.rstrip("。").removesuffix("です")
    return re.sub(r"\[\d+\]", "", answer.text.split("\n", 1)[0])


def first_quoted(answer: Answer) -> str:
    """The answer's first line that cites a passage: its best sentence, after the short
    answer when one opens it."""
    return answer.quoted.split("\n", 1)[0]


def reader_span(answer: Answer) -> str:
    """The answer's span as a reader gives one for every question (``short_answer`` of the
    JSON, shown first or not), else what :func:`short_span` scores."""
    if answer.refused or not answer.span:
        return short_span(answer)
    return answer.span


def cited_lines(text: str) -> list[int]:
    """The citation number that closes each cited line of an answer."""
    return [int(m) for m in re.findall(r"\[(\d+)\]\s*$", text, flags=re.MULTILINE)]


def cached_index(file: Path) -> tuple[Path, list[Question], Settings]:
    """The corpus folder, questions and settings of the index this script keeps (for the
    scripts that reuse it); exits when that index has not been built yet."""
    data = json.loads(file.read_text(encoding="utf-8"))
    corpus = CACHE / "jsquad" / "corpus"
    questions = write_corpus(data, corpus)
    settings = Settings()
    settings = settings.model_copy(
        update={"home": CACHE / "jsquad" / f"index-{settings.embedder.name}"}
    )
    if not settings.home.exists():
        raise SystemExit(f"no index at {settings.home}: run bench/jsquad.py first")
    return corpus, questions, settings


def paragraph_ranking(
    ranked: Sequence[int], source_of: Callable[[int], str], limit: int = 10
) -> list[str]:
    """Chunk ids → distinct paragraphs, each at the rank of its best chunk."""
    out: list[str] = []
    for cid in ranked:
        para = source_of(cid)
        if para not in out:
            out.append(para)
            if len(out) == limit:
                break
    return out


def retrieval_metrics(rankings: Sequence[Sequence[str]], gold: Sequence[str]) -> dict[str, float]:
    """Recall@k, MRR@10 and nDCG@10 with one relevant paragraph per question."""
    n = len(gold)
    if n == 0:
        return {}
    out: dict[str, float] = {}
    for k in KS:
        out[f"R@{k}"] = sum(g in r[:k] for r, g in zip(rankings, gold, strict=True)) / n
    mrr = ndcg = 0.0
    for r, g in zip(rankings, gold, strict=True):
        if g in r[:10]:
            rank = r.index(g) + 1
            mrr += 1.0 / rank
            ndcg += 1.0 / math.log2(rank + 1)
    out["MRR@10"] = mrr / n
    out["nDCG@10"] = ndcg / n
    return out


def seed_embeddings(home: Path, app: Shirabe) -> int:
    """Copy an embedded index's embedding cache into ``app``'s store (put_embeddings)."""
    copied = 0
    for model, vectors in EmbeddedStore.embedding_cache(home):
        app.store.put_embeddings(model, vectors)
        copied += len(vectors)
    return copied


def fmt(metrics: Mapping[str, float]) -> str:
    return "  ".join(f"{k} {v:.3f}" for k, v in metrics.items())


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", nargs="?", type=Path, default=DEFAULT_FILE)
    parser.add_argument("--fresh", action="store_true", help="rebuild the index and time it")
    parser.add_argument("--limit", type=int, default=0, help="ask only the first N questions")
    parser.add_argument("--sweep", action="store_true", help="also print fusion variants")
    parser.add_argument("--database", help="postgresql://… : measure the PostgreSQL store")
    parser.add_argument(
        "--without-own",
        action="store_true",
        help="also ask each question over its hits without its own paragraph (unanswerable)",
    )
    return parser.parse_args()


def timed_ingest(app: Shirabe, embedder: MeteredEmbedder, corpus: Path) -> dict[str, Any]:
    """Ingests the corpus; its time split into embedding and the rest."""
    started = time.perf_counter()
    report = app.ingest([corpus])
    ingest_seconds = time.perf_counter() - started
    ingest: dict[str, Any] = {
        "seconds": round(ingest_seconds, 2),
        "embedding_seconds": round(embedder.passage_seconds, 2),
        "other_seconds": round(ingest_seconds - embedder.passage_seconds, 2),
        "texts_embedded": embedder.passages,
        "counts": report.counts,
    }
    if embedder.passages:
        ingest["overhead_beyond_embedding"] = round(
            (ingest_seconds - embedder.passage_seconds) / embedder.passage_seconds, 4
        )
    return ingest


def open_index(args: argparse.Namespace, corpus: Path) -> tuple[Shirabe, MeteredEmbedder, Settings]:
    """The app over this script's index (kept per embedder), its metered embedder and its
    settings; with ``--database``, a PostgreSQL index whose embedding cache is seeded from the
    embedded index when there is one."""
    work = corpus.parent
    settings = Settings()
    pooled = "-pooled" if settings.ingest.pooled_chunk_vectors else ""
    home = work / f"index-{settings.embedder.name}{pooled}"
    settings = settings.model_copy(update={"home": home})
    embedded_home = settings.home
    if args.database:
        settings = settings.updated(
            home=work / "postgres-home", store={"database_url": args.database}
        )
    if args.fresh:
        shutil.rmtree(settings.home, ignore_errors=True)
    embedder = MeteredEmbedder(make_embedder(settings.embedder))
    app = Shirabe(settings, embedder=embedder)
    if args.database and (embedded_home / "index.sqlite3").exists():
        seeded = seed_embeddings(embedded_home, app)
        print(f"embedding cache seeded from {embedded_home}: {seeded} vectors")
    return app, embedder, settings


class Sources:
    """A chunk's paragraph file, relative to the corpus folder (``prefix``); read once."""

    def __init__(self, store: Store, prefix: str) -> None:
        self.store = store
        self.prefix = prefix
        self._cache: dict[int, str] = {}

    def __call__(self, cid: int) -> str:
        if cid not in self._cache:
            for i, chunk in self.store.get_chunks([cid]).items():
                self._cache[i] = chunk.source.removeprefix(self.prefix)
        return self._cache.get(cid, "?")


@dataclass
class Asked:
    """Every question asked: what each ranker returned, a row per question, the answering
    figures, and the times of the search, the whole ask and the answering step alone."""

    tally: Tally = field(default_factory=Tally)
    per_question: list[dict[str, Any]] = field(default_factory=list)
    raw: list[dict[str, list[ScoredId]]] = field(default_factory=list)
    search: list[float] = field(default_factory=list)
    ask: list[float] = field(default_factory=list)
    answer: list[float] = field(default_factory=list)

    def latency(self) -> dict[str, float]:
        return {
            "search_p50_ms": 1000 * percentile(self.search, 50),
            "search_p95_ms": 1000 * percentile(self.search, 95),
            "ask_p50_ms": 1000 * percentile(self.ask, 50),
            "ask_p95_ms": 1000 * percentile(self.ask, 95),
            # the answering step alone, question by question (ask less its search)
            "answer_p50_ms": 1000 * percentile(self.answer, 50),
            "answer_p95_ms": 1000 * percentile(self.answer, 95),
        }


def ask_all(
    app: Shirabe,
    settings: Settings,
    questions: Sequence[Question],
    sources: Sources,
    *,
    without_own: bool,
) -> Asked:
    """Searches and answers each question, keeping each ranker's list for the fusion variants;
    with ``without_own``, also answers it over its hits without its own paragraph."""
    retriever = app.retriever
    assert isinstance(retriever, HybridRetriever)
    store = app.store
    generator = app.generator
    asked = Asked()
    for q in questions:
        t0 = time.perf_counter()
        query = app.searcher.query(q.text)
        rankings = retriever.rankings(query, CANDIDATES)
        fused = retriever.fuse(rankings, CANDIDATES)
        hits = hits_for(store, fused[: settings.retrieval.top_k * 2], rankings)
        t1 = time.perf_counter()
        answer = generator.generate(query, hits[: settings.retrieval.top_k])
        t2 = time.perf_counter()
        asked.search.append(t1 - t0)
        asked.ask.append(t2 - t0)
        asked.answer.append(t2 - t1)
        asked.raw.append(rankings)
        assert len(answer.text) <= settings.answering.max_chars, answer.text
        ok = asked.tally.add(answer, q, sources.prefix)
        if without_own:
            kept = [h for h in hits if h.chunk.source.removeprefix(sources.prefix) != q.paragraph]
            top = kept[: settings.retrieval.top_k]
            asked.tally.refused_without += generator.generate(query, top).refused
        asked.per_question.append(
            {
                "id": q.qid,
                "fused": [sources(cid) for cid, _ in fused[:10]],
                "answer": answer.text,
                "contained": ok,
                "refused": answer.refused,
                "confidence": answer.confidence,
            }
        )
    return asked


def retrieval_results(
    asked: Asked, questions: Sequence[Question], sources: Sources, *, fusion: str, sweep: bool
) -> dict[str, dict[str, float]]:
    """Paragraph-level figures of each ranker alone, of each level's pair, of the hybrid
    search as run (``fusion``), and with ``sweep`` of other fusions of the same lists."""
    gold = [q.paragraph for q in questions]
    raw = asked.raw

    def evaluate(fuse: Fuse) -> dict[str, float]:
        ranked = []
        for rankings in raw:
            pairs = {n: [(s.chunk_id, s.score) for s in r] for n, r in rankings.items()}
            ranked.append(paragraph_ranking([cid for cid, _ in fuse(pairs)], sources))
        return retrieval_metrics(ranked, gold)

    def only(*names: str) -> Fuse:
        return lambda p: zscore_fusion({n: p[n] for n in names if n in p})

    results: dict[str, dict[str, float]] = {name: evaluate(only(name)) for name in raw[0] if raw}
    results["bm25 (chunk+sentence)"] = evaluate(only("bm25", "bm25_sentence"))
    results["dense (chunk+sentence)"] = evaluate(only("dense", "dense_sentence"))
    results[f"hybrid ({fusion})"] = retrieval_metrics(
        [pq["fused"] for pq in asked.per_question], gold
    )
    if sweep:
        results["rrf k=60, all signals"] = evaluate(lambda p: reciprocal_rank_fusion(p, k=60))
        results["convex, all signals"] = evaluate(convex_fusion)
        results["zscore, bm25+dense chunk"] = evaluate(only("bm25", "dense"))
    return results


def main() -> None:
    args = arguments()

    data = json.loads(args.file.read_text(encoding="utf-8"))
    corpus = CACHE / "jsquad" / "corpus"
    questions = write_corpus(data, corpus)
    if args.limit:
        questions = questions[: args.limit]
    app, embedder, settings = open_index(args, corpus)

    ingest = timed_ingest(app, embedder, corpus)
    print(f"ingest: {ingest}")
    status = app.status()
    print(f"index: {status.files} files, {status.chunks} chunks, {settings.embedder.name}")

    sources = Sources(app.store, str(corpus.resolve()) + "/")
    asked = ask_all(app, settings, questions, sources, without_own=args.without_own)
    results = retrieval_results(
        asked, questions, sources, fusion=settings.retrieval.fusion, sweep=args.sweep
    )
    answering = asked.tally.figures(len(questions), without_own=args.without_own)
    latency = asked.latency()
    print(f"questions: {len(questions)}")
    for name, metrics in results.items():
        print(f"{name:>22}: {fmt(metrics)}")
    print(f"extractive: {fmt(answering)}")
    print(f"latency (incl. query embedding): {fmt(latency)}")
    path = write_result(
        "jsquad-postgres" if args.database else "jsquad",
        {
            "file": str(args.file),
            "questions": len(questions),
            "settings": settings.model_dump(mode="json"),
            "ingest": ingest,
            "retrieval": results,
            "answering": answering,
            "latency_ms": latency,
            "per_question": asked.per_question,
        },
    )
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
