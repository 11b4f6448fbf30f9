"""What each hand-written refusal check adds to the learned answer stage, on JSQuAD valid.

    python bench/rules.py [FILE] [--every 4] [--seed 7]

Uses the index bench/jsquad.py builds and keeps in bench/.cache/jsquad (run that first). Every
``--every``-th question is asked three ways, as in training: as written (answerable), over the
index without its own paragraph (unanswerable), and, for half of them, with one of its nouns
swapped for one its paragraph lacks (a made near miss). For each ask the learned stage gives its
probability and the checks of ``ExtractiveGenerator.answering`` their reason, if any.

Printed per check (grouped by the reason it gives): the asks it alone refuses, those the
stage's probability lets through, on each of the three kinds. A check that refuses answerable
questions the stage would answer, and few unanswerable ones, costs more than it gives. These
are development data: choose here which checks to keep; report on the held-out sets.
"""

from __future__ import annotations

import argparse
import random
from collections import Counter
from pathlib import Path

from jsquad import CANDIDATES, DEFAULT_FILE, cached_index
from shirabe.answering import stage
from shirabe.answering.extractive import ExtractiveGenerator
from shirabe.engine import Shirabe
from shirabe.retrieval.hits import hits_for
from shirabe.training.lines import noun_pool, swap

from common import write_result

KINDS = ("answerable", "without own", "near miss")


def check_of(code: str, reason: str) -> str:
    """The check that gave a reason, read from the reason's shape."""
    if code in {"unknown", "kind"}:
        return code
    if reason.startswith("表には"):
        return "other row"
    if "）を示す記載が見つかりません" in reason:
        return "figure apart"  # a name, a condition or a code not next to the figure
    return "terms missing"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", nargs="?", type=Path, default=DEFAULT_FILE)
    parser.add_argument("--every", type=int, default=4, help="ask every N-th question")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    corpus, questions, settings = cached_index(args.file)
    prefix = str(corpus.resolve()) + "/"
    sample = questions[:: args.every]
    rng = random.Random(args.seed)
    alone: dict[str, Counter[str]] = {k: Counter() for k in KINDS}
    stage_refused: Counter[str] = Counter()
    asked: Counter[str] = Counter()
    with Shirabe(settings) as app:
        extractive = app.generator
        assert isinstance(extractive, ExtractiveGenerator)
        threshold = extractive.answer_threshold
        pool = noun_pool(app, sample)

        def judge(kind: str, text: str, without: str | None = None) -> None:
            query = app.searcher.query(text)
            rankings = app.retriever.rankings(query, CANDIDATES)  # type: ignore[attr-defined]
            fused = app.retriever.fuse(rankings, CANDIDATES)  # type: ignore[attr-defined]
            hits = hits_for(app.store, fused, rankings)
            if without is not None:  # the question's own paragraph left out
                hits = [h for h in hits if h.chunk.source.removeprefix(prefix) != without]
            hits = hits[: settings.retrieval.top_k]
            candidates = extractive.candidates(query, hits)
            if not candidates:
                return
            asked[kind] += 1
            judgement = stage.judge(extractive.model, query, hits, candidates)
            _ranked, found = extractive.answering(query, hits, judgement.ranked)
            if judgement.probability < threshold:
                stage_refused[kind] += 1
            elif found is not None:
                alone[kind][check_of(*found)] += 1

        for n, q in enumerate(sample):
            judge("answerable", q.text)
            judge("without own", q.text, without=q.paragraph)
            if rng.random() < 0.5:
                text = (corpus / q.paragraph).read_text(encoding="utf-8")
                swapped = swap(app.searcher.query(q.text).words(), text, pool, rng)
                if swapped:
                    judge("near miss", swapped)
            if (n + 1) % 100 == 0:
                print(f"{n + 1}/{len(sample)}", flush=True)
    print(f"threshold {threshold:.3f}; asks: " + ", ".join(f"{k} {asked[k]}" for k in KINDS))
    print(
        "refused by the stage: "
        + ", ".join(f"{k} {stage_refused[k] / asked[k]:.3f}" for k in KINDS)
    )
    checks = sorted({c for k in KINDS for c in alone[k]})
    print(f"{'refused by a check alone':26}" + "".join(f"{k:>14}" for k in KINDS))
    for check in checks:
        row = "".join(f"{alone[k][check] / asked[k]:>14.3f}" for k in KINDS)
        print(f"{check:26}{row}")
    write_result(
        "rules",
        {
            "file": str(args.file),
            "every": args.every,
            "threshold": threshold,
            "asks": dict(asked),
            "refused_by_stage": {k: stage_refused[k] / asked[k] for k in KINDS},
            "refused_by_check_alone": {
                c: {k: alone[k][c] / asked[k] for k in KINDS} for c in checks
            },
        },
    )


if __name__ == "__main__":
    main()
