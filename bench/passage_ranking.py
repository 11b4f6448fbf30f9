"""Does a learned passage ranking (LambdaMART) lift the fused order's top passage?

    python bench/passage_ranking.py

Reads the features bench/answerer.py collects and caches (run it first): JaQuAD train's
questions (every fifth article) for training, JSQuAD valid's for development. Each retrieved
passage of a question asked over the whole index is described by its retrievers' ranks and
scores (as fused), how much of the question its headings and text cover, and the best of its
lines' features and line-model scores. LightGBM's lambdarank objective is trained on JaQuAD;
printed is the share of JSQuAD valid questions whose first passage is the gold one, in the
fused order and in the learned one, over the questions whose gold paragraph is retrieved with a
line holding the answer (the ones where the order among the retrieved passages can matter).
Results also go to bench/results/passage_ranking.json.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import lightgbm as lgb
import numpy as np
import numpy.typing as npt

from shirabe.answering import features
from shirabe.answering.learned import AnswerModel, load_model
from shirabe.training.lines import Example

from common import CACHE, write_result

PASSAGE = (
    "hit_index",
    "fused_ratio",
    "rank_bm25",
    "rank_bm25_sentence",
    "rank_dense",
    "rank_dense_sentence",
    "dense_passage",
    "dense_best_sentence",
    "bm25_ratio",
    "bm25_sentence_ratio",
    "cover_passage",
    "cover_headings",
    "is_summary",
    "is_record",
)
"""Line features that are the passage's own (the same for each of its lines)."""
BEST_OF_LINES = (
    "dense",
    "lexical",
    "cover_line",
    "cover_all",
    "uncovered_weight",
    "holds_kind",
    "fits_figure",
)
"""Line features taken at their largest over the passage's lines."""
PARAMS = (
    {"num_leaves": 7, "rounds": 100},
    {"num_leaves": 15, "rounds": 200},
    {"num_leaves": 31, "rounds": 300},
)

Groups = tuple[npt.NDArray[np.float64], npt.NDArray[np.int8], list[int]]


def passages(examples: list[Example], model: AnswerModel) -> Groups:
    """One row per retrieved passage, labelled 1 for the question's own paragraph, grouped
    by question (only questions whose own paragraph has a line holding the answer)."""
    names = features.LINE_FEATURES
    own = [names.index(n) for n in PASSAGE]
    best = [names.index(n) for n in BEST_OF_LINES]
    at = names.index("hit_index")
    rows: list[list[float]] = []
    labels: list[int] = []
    sizes: list[int] = []
    for e in examples:
        if not e.own or e.swapped or e.apart or not len(e.rows) or not e.labels.sum():
            continue
        hits = e.rows[:, at].astype(int)
        gold = set(hits[e.labels == 1].tolist())
        scores = model.lines.raw(e.rows.astype(np.float64))
        kept = sorted(set(hits.tolist()))
        for h in kept:
            mine = hits == h
            lines = e.rows[mine]
            rows.append(
                [
                    *lines[0, own],
                    *lines[:, best].max(axis=0),
                    float(scores[mine].max()),
                    float(scores[mine].max() - scores.max()),
                ]
            )
            labels.append(int(h in gold))
        sizes.append(len(kept))
    return np.asarray(rows, np.float64), np.asarray(labels, np.int8), sizes


def first_is_gold(scores: npt.NDArray[np.float64], groups: Groups) -> float:
    """Share of questions whose highest-scored passage is the gold one."""
    _rows, labels, sizes = groups
    start = hit = 0
    for n in sizes:
        hit += int(labels[start + int(np.argmax(scores[start : start + n]))])
        start += n
    return hit / len(sizes)


def load(name: str) -> list[Example]:
    path = CACHE / "answerer" / f"{name}.pkl"
    if not path.exists():
        raise SystemExit(f"no {path}: run bench/answerer.py first")
    with Path(path).open("rb") as f:
        examples: list[Example] = pickle.load(f)  # written by bench/answerer.py
    return examples


def main() -> None:
    model = load_model()
    train = passages(load("jaquad"), model)
    dev = passages(load("jsquad"), model)
    fused = first_is_gold(-dev[0][:, 0], dev)  # hit_index: the fused order
    result: dict[str, object] = {"questions_dev": len(dev[2]), "fused_top1_dev": fused}
    print(f"JSQuAD valid (dev), {len(dev[2])} questions: fused order top passage {fused:.4f}")
    for p in PARAMS:
        booster = lgb.train(
            {
                "objective": "lambdarank",
                "num_leaves": p["num_leaves"],
                "learning_rate": 0.05,
                "min_data_in_leaf": 50,
                "verbosity": -1,
                "num_threads": 2,
                "seed": 7,
                "deterministic": True,
            },
            lgb.Dataset(train[0], train[1], group=train[2]),
            p["rounds"],
        )
        learned = first_is_gold(np.asarray(booster.predict(dev[0]), np.float64), dev)
        result[f"lambdamart_{p['num_leaves']}_{p['rounds']}_top1_dev"] = learned
        print(f"LambdaMART {p['num_leaves']} leaves, {p['rounds']} rounds: {learned:.4f}")
    write_result("passage_ranking", result)


if __name__ == "__main__":
    main()
