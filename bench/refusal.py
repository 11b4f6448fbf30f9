"""Calibrates the refusal thresholds on JSQuAD with held-out articles.

    python bench/refusal.py [--limit N]

Articles alternate between halves A and B (as in bench/jsquad.py, whose index this copies).
The copy keeps only half A, so questions about half-B articles have no answer in the index,
while half-A questions do. For each question the script records the evidence score of the
extractive generator (the cosine of the top hit's best sentence) and whether the question
names a code no document contains. It prints the share of answerable questions wrongly
refused and of unanswerable ones rightly refused for each threshold, the ROC AUC, and the
thresholds shipped as defaults: the lower one refuses 3% of answerable questions; the upper
one, applied only to questions naming unknown codes, adds at most 2% more.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil

import numpy as np

from jsquad import DEFAULT_FILE, write_corpus
from shirabe.answering.extractive import ExtractiveGenerator
from shirabe.engine import Shirabe
from shirabe.settings import Settings

from common import CACHE, write_result

LOW_FALSE_REFUSALS = 0.03
EXTRA_FALSE_REFUSALS = 0.02


def auc(positive: list[float], negative: list[float]) -> float:
    """Probability that an answerable question scores above an unanswerable one."""
    pos = np.asarray(positive)
    neg = np.asarray(negative)
    greater = (pos[:, None] > neg[None, :]).mean()
    ties = (pos[:, None] == neg[None, :]).mean()
    return float(greater + 0.5 * ties)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=1000, help="questions per half")
    args = parser.parse_args()
    data = json.loads(DEFAULT_FILE.read_text(encoding="utf-8"))
    work = CACHE / "jsquad"
    corpus = work / "corpus"
    questions = write_corpus(data, corpus)
    settings = Settings(refusal_threshold=-1.0)
    full = work / f"index-{settings.embedder}"
    half = work / f"index-{settings.embedder}-half-A"
    with Shirabe(settings.model_copy(update={"home": full})) as app:
        app.ingest([corpus])
    shutil.rmtree(half, ignore_errors=True)
    shutil.copytree(full, half)
    app = Shirabe(settings.model_copy(update={"home": half}))
    app.remove(corpus / "B")
    generator = app.generator
    assert isinstance(generator, ExtractiveGenerator)
    rng = random.Random(5)
    groups = {
        "answerable": [q for q in questions if q.half == "A"],
        "unanswerable": [q for q in questions if q.half == "B"],
    }
    evidence: dict[str, list[float]] = {}
    unknown: dict[str, list[bool]] = {}
    for label, group in groups.items():
        rng.shuffle(group)
        evidence[label], unknown[label] = [], []
        for q in group[: args.limit]:
            query = app.query(q.text)
            hits = app.retriever.retrieve(query, app.settings.top_k)
            evidence[label].append(generator.evidence(query, hits))
            unknown[label].append(bool(generator.unknown_codes(query, hits)))
    pos, neg = np.asarray(evidence["answerable"]), np.asarray(evidence["unanswerable"])
    pos_u, neg_u = np.asarray(unknown["answerable"]), np.asarray(unknown["unanswerable"])
    print(f"questions: {len(pos)} answerable, {len(neg)} unanswerable")
    print(f"evidence ROC AUC {auc(list(pos), list(neg)):.3f}")
    print(f"name an unknown code: answerable {pos_u.mean():.3f}, unanswerable {neg_u.mean():.3f}")
    low = float(np.quantile(pos, LOW_FALSE_REFUSALS))
    table = []
    print(f"{'upper':>6}  {'answerable refused':>18}  {'unanswerable refused':>20}")
    best_high = low
    for high in np.round(np.arange(low, 0.95, 0.005), 3):
        fr = float(np.mean((pos < low) | (pos_u & (pos < high))))
        tr = float(np.mean((neg < low) | (neg_u & (neg < high))))
        table.append({"low": low, "high": float(high), "false_refusal": fr, "true_refusal": tr})
        print(f"{high:>6.3f}  {fr:>18.3f}  {tr:>20.3f}")
        if fr <= LOW_FALSE_REFUSALS + EXTRA_FALSE_REFUSALS:
            best_high = float(high)
    fr = float(np.mean((pos < low) | (pos_u & (pos < best_high))))
    tr = float(np.mean((neg < low) | (neg_u & (neg < best_high))))
    print(
        f"chosen: low {low:.3f}, high {best_high:.3f} → answerable refused {fr:.1%}, "
        f"unanswerable refused {tr:.1%} (low alone: {np.mean(pos < low):.1%} / "
        f"{np.mean(neg < low):.1%})"
    )
    write_result(
        "refusal",
        {
            "auc": auc(list(pos), list(neg)),
            "low": low,
            "high": best_high,
            "false_refusal": fr,
            "true_refusal": tr,
            "table": table,
        },
    )


if __name__ == "__main__":
    main()
