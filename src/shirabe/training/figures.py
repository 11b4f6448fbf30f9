"""How a learned answer model does on examples it was not trained on, and the refusal
threshold chosen from its probabilities."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from shirabe.answering import features
from shirabe.answering.learned import AnswerModel

if TYPE_CHECKING:
    from shirabe.training.lines import Example


def auc(scores: np.ndarray, labels: np.ndarray) -> float:
    """ROC AUC by ranks (ties averaged)."""
    pos = labels == 1
    n_pos, n_neg = int(pos.sum()), int((~pos).sum())
    if not n_pos or not n_neg:
        return math.nan
    order = np.argsort(scores, kind="mergesort")
    ranks = np.empty(len(scores))
    sorted_scores = scores[order]
    i = 0
    while i < len(scores):
        j = i
        while j + 1 < len(scores) and sorted_scores[j + 1] == sorted_scores[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return float((ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def probabilities(model: AnswerModel, examples: Sequence[Example]) -> np.ndarray:
    """The calibrated answerability of each example, as answering computes it."""
    out = []
    for e in examples:
        rows = e.rows.astype(np.float64).tolist()
        scores = model.line_scores(rows)
        out.append(model.answerable(features.question_features(e.question, rows, scores)))
    return np.asarray(out)


MAX_FALSE_REFUSALS = 0.02
"""The share of a development set's answerable questions the stage may refuse, from which
the default refusal threshold is chosen."""


def choose_threshold(answerable: Sequence[float], max_false_refusals: float) -> float:
    """The highest threshold (rounded down to 0.001) at which at most ``max_false_refusals``
    of the answerable questions' probabilities fall below it."""
    values = np.sort(np.asarray(answerable, dtype=np.float64))
    if values.size == 0:
        return 0.0
    allowed = math.floor(max_false_refusals * values.size)
    cut = float(values[allowed]) if allowed < values.size else float(values[-1]) + 1e-3
    return math.floor(cut * 1000) / 1000


def evaluate(model: AnswerModel, examples: Sequence[Example], threshold: float) -> dict[str, Any]:
    """How a model does on examples it was not trained on: the share of answerable
    questions refused, of questions asked without their paragraph refused, of near misses
    refused, how often its best line holds the answer, and the ROC AUC of its probability
    between answerable and unanswerable questions."""
    own = [e for e in examples if e.own and not e.swapped]
    without = [e for e in examples if not e.own and not e.apart]
    apart = [e for e in examples if e.apart]
    swapped = [e for e in examples if e.swapped]
    p_own = probabilities(model, own)
    p_without = probabilities(model, without)
    p_apart = probabilities(model, apart)
    p_swapped = probabilities(model, swapped)
    chosen = 0
    for e in own:
        if e.rows.shape[0]:
            scores = model.line_scores(e.rows.astype(np.float64).tolist())
            chosen += int(e.labels[int(np.argmax(scores))] == 1)
    n = max(len(own), 1)
    return {
        "questions": len(own),
        "answerable_refused": float((p_own < threshold).mean()) if own else math.nan,
        "without_own_refused": float((p_without < threshold).mean()) if without else math.nan,
        "without_article_refused": float((p_apart < threshold).mean()) if apart else math.nan,
        "near_miss_refused": float((p_swapped < threshold).mean()) if swapped else math.nan,
        "near_misses": len(swapped),
        "best_line_holds_answer": chosen / n,
        "own_paragraph_retrieved": float(np.mean([e.gold_retrieved for e in own])) if own else 0,
        "auc": auc(
            np.concatenate([p_own, p_without, p_apart, p_swapped]),
            np.concatenate([np.ones(len(own)), np.zeros(len(without) + len(apart) + len(swapped))]),
        ),
    }
