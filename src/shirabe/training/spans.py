"""Training the short-answer span model of the learned answer stage.

The spans of the lines the line model ranks best (:mod:`shirabe.answering.spans`) are
learned from: a span whose text is a gold answer is positive. The span threshold is chosen on
a development set, for the best mean character F1 against the gold answers.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from shirabe.answering import features, spans, stage
from shirabe.answering.learned import AnswerModel, forest_from_lightgbm
from shirabe.evaluation.squad import nfkc
from shirabe.settings import TokenizerSettings
from shirabe.tokenizers.registry import make_tokenizer
from shirabe.training.lines import LINE_PARAMS, Example, importance, train_booster

SPAN_PARAMS: dict[str, Any] = {**LINE_PARAMS, "num_leaves": 31, "min_data_in_leaf": 20}
SPAN_ROUNDS = 300
SPAN_LINES = stage.SPAN_LINES


def span_training_set(
    examples: Sequence[Example],
    answers: Mapping[str, Sequence[str]],
    line_model: Callable[[np.ndarray], np.ndarray],
    words_of: Callable[[str], list[features.Word]],
) -> tuple[np.ndarray, np.ndarray]:
    """The spans of the best lines (by ``line_model``) of answerable questions, a span
    whose text is a gold answer (``answers`` by question id: a SQuAD question's, or the
    answer an evaluation case expects) positive."""
    rows: list[list[float]] = []
    labels: list[float] = []
    for e in examples:
        if not e.own or e.swapped or not e.labels.any() or not e.lines or e.qid not in answers:
            continue
        golds = {_spaceless(a) for a in answers[e.qid]}
        scores = line_model(e.rows.astype(np.float64))
        for rank, i in enumerate(np.argsort(-scores)[:SPAN_LINES]):
            words = words_of(e.lines[int(i)])
            found = spans.spans(words)
            rows += spans.span_features(e.question, words, found, float(scores[i]), rank)
            labels += [float(_spaceless(s.text) in golds) for s in found]
    width = len(spans.SPAN_FEATURES)
    return np.asarray(rows, dtype=np.float64).reshape(-1, width), np.asarray(labels)


def fit_spans(
    examples: Sequence[Example],
    answers: Mapping[str, Sequence[str]],
    spec: Mapping[str, Any],
    words_of: Callable[[str], list[features.Word]],
    *,
    seed: int = 7,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The span model (its forest) trained on the spans of the lines that ``spec``'s line
    model ranks best, with its report."""
    model = AnswerModel.of({**spec, "span": None}, "training")

    def line_model(rows: np.ndarray) -> np.ndarray:
        return np.asarray(model.line_scores(rows.tolist()), dtype=np.float64)

    x, y = span_training_set(examples, answers, line_model, words_of)
    booster = train_booster(x, y, {**SPAN_PARAMS, "seed": seed}, SPAN_ROUNDS)
    report = {
        "span_rows": int(x.shape[0]),
        "span_positives": int(y.sum()),
        "span_importance": importance(booster, spans.SPAN_FEATURES),
    }
    return forest_from_lightgbm(booster.dump_model()), report


def _spaceless(text: str) -> str:
    """NFKC without spaces: a span of a name written apart (例田 太郎) is the answer written
    together."""
    return "".join(nfkc(text).split())


def char_f1(predicted: str, gold: str) -> float:
    """Character-level F1 (JSQuAD's measure for Japanese), spaces ignored."""
    p = [ch for ch in predicted if not ch.isspace()]
    g = [ch for ch in gold if not ch.isspace()]
    common = sum((Counter(p) & Counter(g)).values())
    if not p or not g or not common:
        return 0.0
    precision, recall = common / len(p), common / len(g)
    return 2 * precision * recall / (precision + recall)


SPAN_PRECISION = 0.75
"""The share of shown short answers that must be exactly a gold answer on the development
set: a wrong figure or name put first misleads more than none."""


def choose_span_threshold(
    model: AnswerModel,
    examples: Sequence[Example],
    answers: Mapping[str, Sequence[str]],
    words_of: Callable[[str], list[features.Word]],
) -> tuple[float, dict[str, dict[str, float]]]:
    """The span probability from which a span is put first as the short answer: the lowest
    at which at least ``SPAN_PRECISION`` of the spans shown are exactly a gold answer. Also,
    at each threshold tried, the share of questions shown one, that exact-match share, and
    the mean character F1 of the short answer (the best line where none is shown)."""
    cases: list[tuple[float, bool, float, float]] = []  # p, exact, F1 of span, F1 of line
    for e in examples:
        if not e.lines or e.qid not in answers:
            continue
        golds = [nfkc(a) for a in answers[e.qid]]
        scores = model.line_scores(e.rows.astype(np.float64).tolist())
        span, p = stage.best_span(model, e.question, e.lines, scores, words_of)
        line = nfkc(e.lines[int(np.argmax(scores))])
        text = nfkc(span)
        cases.append(
            (
                p if span else -1.0,
                _spaceless(text) in {_spaceless(g) for g in golds},
                max(char_f1(text, g) for g in golds),
                max(char_f1(line, g) for g in golds),
            )
        )
    n = max(len(cases), 1)
    table: dict[str, dict[str, float]] = {}
    for t in [round(t / 20, 2) for t in range(1, 20)]:
        shown = [c for c in cases if c[0] >= t]
        table[str(t)] = {
            "shown": len(shown) / n,
            "exact": sum(c[1] for c in shown) / max(len(shown), 1),
            "f1": sum(c[2] if c[0] >= t else c[3] for c in cases) / n,
        }
    fit = [float(t) for t, row in table.items() if row["exact"] >= SPAN_PRECISION]
    return (min(fit) if fit else 1.0), table


def add_span_model(
    spec: dict[str, Any],
    train: Sequence[Example],
    choose_on: Sequence[Example],
    answers: Mapping[str, Sequence[str]],
    tokenizer: TokenizerSettings,
) -> dict[str, Any]:
    """Trains the span model over ``spec``'s line model on ``train``, chooses its threshold
    on the answerable questions of ``choose_on``, and puts both in ``spec``; the report, with
    the figures at each threshold tried."""
    words_of = make_tokenizer(tokenizer).words
    forest, report = fit_spans(train, answers, spec, words_of)
    spec["span"] = forest
    spec["features"]["span"] = list(spans.SPAN_FEATURES)
    answerable = [e for e in choose_on if e.own and not e.swapped]
    threshold, table = choose_span_threshold(
        AnswerModel.of(spec, "training"), answerable, answers, words_of
    )
    spec["span_threshold"] = threshold
    return {**report, "span_threshold": threshold, "span_by_threshold": table}
