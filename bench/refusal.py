"""Calibrates the refusal threshold on JSQuAD with held-out articles.

    python bench/refusal.py [--limit N]

Articles alternate between halves A and B (as in bench/jsquad.py, whose index this reuses).
Retrieval is restricted to half A with a path filter, applied before ranking, so questions about
half-B articles have no answer in what can be searched, while half-A questions do. For each
question the evidence score the extractive generator uses is recorded; the script prints, per
threshold, the share of answerable questions wrongly refused and of unanswerable ones rightly
refused, the ROC AUC, and the threshold that refuses at most 3% of answerable questions (the
shipped default is taken from that line).
"""

from __future__ import annotations

import argparse
import json
import random

import numpy as np

from jsquad import DEFAULT_FILE, write_corpus
from shirabe.engine import Shirabe
from shirabe.generators.extractive import evidence
from shirabe.settings import Settings
from shirabe.stores.protocol import Filters

from common import CACHE, write_result

MAX_FALSE_REFUSALS = 0.03


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
    questions = write_corpus(data, work / "corpus")
    app = Shirabe(Settings(home=work / "index", refusal_threshold=-1.0))
    app.ingest([work / "corpus"])
    only_a = Filters(path_glob=str((work / "corpus" / "A").resolve()) + "/*")
    rng = random.Random(5)
    answerable = [q for q in questions if q.half == "A"]
    unanswerable = [q for q in questions if q.half == "B"]
    rng.shuffle(answerable)
    rng.shuffle(unanswerable)
    scores: dict[str, list[float]] = {"answerable": [], "unanswerable": []}
    for label, group in (("answerable", answerable), ("unanswerable", unanswerable)):
        for q in group[: args.limit]:
            hits = app.search(q.text, filters=only_a)
            scores[label].append(evidence(hits))
    pos, neg = scores["answerable"], scores["unanswerable"]
    print(f"questions: {len(pos)} answerable, {len(neg)} unanswerable; AUC {auc(pos, neg):.3f}")
    print(f"{'threshold':>9}  {'answerable refused':>18}  {'unanswerable refused':>20}")
    table = []
    for t in np.round(np.arange(0.80, 0.92, 0.005), 3):
        fr = float(np.mean(np.asarray(pos) < t))
        tr = float(np.mean(np.asarray(neg) < t))
        table.append({"threshold": float(t), "false_refusal": fr, "true_refusal": tr})
        print(f"{t:>9.3f}  {fr:>18.3f}  {tr:>20.3f}")
    chosen = float(np.quantile(pos, MAX_FALSE_REFUSALS))
    tr = float(np.mean(np.asarray(neg) < chosen))
    print(
        f"threshold refusing {MAX_FALSE_REFUSALS:.0%} of answerable questions: {chosen:.3f} "
        f"(refuses {tr:.1%} of unanswerable ones)"
    )
    write_result(
        "refusal",
        {"auc": auc(pos, neg), "chosen": chosen, "true_refusal": tr, "table": table},
    )


if __name__ == "__main__":
    main()
