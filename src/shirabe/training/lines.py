"""Training the learned answer stage from SQuAD-format questions over an index of their
paragraphs.

Each question is asked twice over the same index:
- as it is: the candidates of its retrieved passages, where a line of its own paragraph that
  holds a gold answer is a positive line; the question is answerable when one does;
- without its own paragraph (NoMIRACL's way of making unanswerable questions): the
  passages retrieved when its paragraph's chunks are left out do not answer it. A question
  whose gold answer is also written in one of those passages is left out of training, since
  that passage may answer it after all.

The line model (LightGBM, binary) learns which line holds the answer. The question model
learns from the line model's scores and the features of the best line whether any line
answers; its line scores come from line models trained on the other half of the articles
(cross-fitting), so that it learns from scores like those of questions the line model has
not seen. Its output is calibrated (isotonic) on cross-fitted scores as well. The refusal
threshold is chosen on a development set: the lowest probability at which at most
``max_false_refusals`` of its answerable questions are refused.
"""

from __future__ import annotations

import logging
import random
import time
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import numpy.typing as npt

from shirabe.answering import features, stage
from shirabe.answering.extractive import ExtractiveGenerator
from shirabe.answering.learned import FORMAT, forest_from_lightgbm
from shirabe.evaluation.cases import Case
from shirabe.evaluation.squad import SquadQuestion, nfkc, read_squad, write_corpus
from shirabe.records import Hit
from shirabe.retrieval.hits import hits_for
from shirabe.retrieval.query import Query
from shirabe.text.terms import is_code
from shirabe.training.figures import auc

if TYPE_CHECKING:
    from shirabe.engine import Shirabe
    from shirabe.settings import Settings

logger = logging.getLogger(__name__)

CANDIDATES = 100
"""How many chunks each retriever returns before fusion, as when answering."""

Rows = npt.NDArray[np.float32]


@dataclass(slots=True)
class Example:
    """One question asked over one set of passages, with its candidate lines described."""

    qid: str
    half: str
    article: int
    own: bool
    """Asked over the whole index (True), or with its own paragraph left out (False)."""
    apart: bool = False
    """Asked without any paragraph of its article (whatever is retrieved is about something
    else, often sharing none of its words)."""
    swapped: str = ""
    """For a near miss made from the question: the question with one of its nouns replaced
    by a noun of another article that its paragraph lacks (asked over the whole index)."""
    rows: Rows = field(
        default_factory=lambda: np.zeros((0, len(features.LINE_FEATURES)), np.float32)
    )
    labels: npt.NDArray[np.int8] = field(default_factory=lambda: np.zeros(0, np.int8))
    """1 for a line of the question's own paragraph that holds a gold answer."""
    holds_answer: bool = False
    """Some line (of any passage) holds a gold answer string."""
    gold_retrieved: bool = False
    question: features.Question = field(
        default_factory=lambda: features.Question("", (), None, negated=False)
    )
    lines: list[str] = field(default_factory=list)
    """The lines' texts (kept for reports and for labelling evaluation cases)."""
    verdict: int | None = None
    """Whether the question is answerable, when a person said so (evaluation cases)."""


@dataclass
class _Asker:
    """Asks a question over the index as answering does, and describes its candidates."""

    app: Shirabe
    corpus_prefix: str
    keep_lines: bool

    def __post_init__(self) -> None:
        self._last: tuple[str, Query, list[Hit]] | None = None
        # Candidates are read as the extractive answerer reads them (no model needed).
        self.extractive = ExtractiveGenerator(
            store=self.app.store, embedder_name=self.app.embedder.name
        )

    def own_paragraph(self, q: SquadQuestion, hit: Hit) -> bool:
        return hit.chunk.source.removeprefix(self.corpus_prefix) == q.paragraph

    def own_article(self, q: SquadQuestion, hit: Hit) -> bool:
        article = q.paragraph.rsplit("/", 1)[0] + "/"
        return hit.chunk.source.removeprefix(self.corpus_prefix).startswith(article)

    def _retrieved(self, text: str) -> tuple[Query, list[Hit]]:
        """The question's query and every fused hit (read once per text)."""
        if self._last is None or self._last[0] != text:
            app = self.app
            retriever = app.retriever
            query = app.searcher.query(text)
            rankings = retriever.rankings(query, CANDIDATES)  # type: ignore[attr-defined]
            fused = retriever.fuse(rankings, CANDIDATES)  # type: ignore[attr-defined]
            self._last = (text, query, hits_for(app.store, fused, rankings))
        return self._last[1], self._last[2]

    def example(
        self, q: SquadQuestion, text: str, *, own: bool, swapped: str = "", apart: bool = False
    ) -> Example:
        """``text`` asked over the index (``own``), or over it without ``q``'s paragraph, or
        without every paragraph of ``q``'s article (``apart``)."""
        query, hits = self._retrieved(text)
        if own:
            chosen = hits
        elif apart:
            chosen = [h for h in hits if not self.own_article(q, h)]
        else:
            chosen = [h for h in hits if not self.own_paragraph(q, h)]
        chosen = chosen[: self.app.settings.retrieval.top_k]
        candidates = self.extractive.candidates(query, chosen)
        qf, _lines, rows = stage.describe(query, chosen, candidates)
        answers = [nfkc(a) for a in q.answers]
        holding = [any(a in nfkc(c.text) for a in answers) for c in candidates]
        labels = [
            int(held and not swapped and self.own_paragraph(q, chosen[c.hit_index]))
            for c, held in zip(candidates, holding, strict=True)
        ]
        return Example(
            qid=q.qid,
            half=q.half,
            article=q.article,
            own=own,
            swapped=swapped,
            apart=apart,
            rows=np.asarray(rows, dtype=np.float32).reshape(-1, len(features.LINE_FEATURES)),
            labels=np.asarray(labels, dtype=np.int8),
            holds_answer=any(holding),
            gold_retrieved=any(self.own_paragraph(q, h) for h in chosen),
            question=qf,
            lines=[c.text for c in candidates] if self.keep_lines or not q.paragraph else [],
        )


def collect(
    app: Shirabe,
    questions: Sequence[SquadQuestion],
    corpus_prefix: str,
    *,
    progress: Callable[[int, int], None] | None = None,
    keep_lines: bool = False,
    near_misses: float = 0.5,
    seed: int = 7,
) -> list[Example]:
    """Three examples of every question (as it is, without its own paragraph, and without
    every paragraph of its article) and, for a share ``near_misses`` of them, a near miss
    (:func:`swap`)."""
    asker = _Asker(app, corpus_prefix, keep_lines)
    rng = random.Random(seed)
    pool = noun_pool(app, questions)
    out: list[Example] = []
    for n, q in enumerate(questions):
        out.append(asker.example(q, q.text, own=True))
        out.append(asker.example(q, q.text, own=False))
        out.append(asker.example(q, q.text, own=False, apart=True))
        if near_misses > 0 and rng.random() < near_misses:
            paragraph = (Path(corpus_prefix) / q.paragraph).read_text(encoding="utf-8")
            swapped = swap(app.searcher.query(q.text).words(), paragraph, pool, rng)
            if swapped:
                out.append(asker.example(q, swapped, own=True, swapped=swapped))
        if progress is not None:
            progress(n + 1, len(questions))
    return out


def noun_pool(app: Shirabe, questions: Sequence[SquadQuestion]) -> list[tuple[int, str]]:
    """The content nouns of the questions (weight 2 or more, no codes or numbers), each with
    its article, to swap into near misses."""
    pool: dict[str, int] = {}
    for q in questions:
        for word in app.searcher.query(q.text).words():
            noun = features.weight_of(word) >= 2.0 and word[2][:2] != ("名詞", "数詞")
            if noun and not is_code(nfkc(word[0]).lower()):
                pool.setdefault(word[0], q.article)
    return [(article, noun) for noun, article in pool.items()]


def swap(
    words: Sequence[features.Word],
    paragraph: str,
    pool: Sequence[tuple[int, str]],
    rng: random.Random,
) -> str:
    """The question with one of its nouns that its paragraph names replaced by a noun the
    paragraph lacks (from another question): a near miss, whose subject the documents cover
    while the fact asked is not written there. '' when it has no such noun."""
    surfaces = [w[0] for w in words]
    places = [
        i
        for i, w in enumerate(words)
        if features.weight_of(w) >= 2.0 and w[2][:2] != ("名詞", "数詞") and w[0] in paragraph
    ]
    if not places or not pool:
        return ""
    at = rng.choice(places)
    for _ in range(20):
        _article, noun = pool[rng.randrange(len(pool))]
        if noun not in paragraph and noun != surfaces[at]:
            return "".join([*surfaces[:at], noun, *surfaces[at + 1 :]])
    return ""


LINE_PARAMS: dict[str, Any] = {
    "objective": "binary",
    "learning_rate": 0.05,
    "num_leaves": 31,
    "min_data_in_leaf": 40,
    "feature_fraction": 0.9,
    "bagging_fraction": 0.8,
    "bagging_freq": 1,
    "lambda_l2": 1.0,
    "verbosity": -1,
    "num_threads": 2,
    "seed": 7,
    "deterministic": True,
}
LINE_ROUNDS = 300
RISING: Final = frozenset(
    {
        "best",
        "mass_top3",
        "best_cover_line",
        "best_cover_all",
        "max_cover_all",
        "best_lexical",
        "best_dense",
        "top_dense_sentence",
        "top_dense",
    }
)
"""Question features that can only make an answer more likely: a closer or better covered
best line never makes it less so (the trees must not learn otherwise from sparse corners)."""
FALLING: Final = frozenset({"best_uncovered", "min_uncovered", "codes_missing", "names_missing"})
"""Question features that can only make an answer less likely: more of the question unsaid."""
QUESTION_PARAMS: dict[str, Any] = {
    **LINE_PARAMS,
    "num_leaves": 15,
    "min_data_in_leaf": 30,
    "monotone_constraints": [
        1 if name in RISING else -1 if name in FALLING else 0 for name in features.QUESTION_FEATURES
    ],
    "monotone_constraints_method": "advanced",
}
QUESTION_ROUNDS = 200


def train_booster(rows: np.ndarray, labels: np.ndarray, params: dict[str, Any], rounds: int) -> Any:
    import lightgbm as lgb

    data = lgb.Dataset(rows, label=labels, free_raw_data=True)
    return lgb.train(params, data, num_boost_round=rounds)


def line_training_set(examples: Iterable[Example]) -> tuple[np.ndarray, np.ndarray]:
    """Every line of the examples fit to learn from: lines of questions asked over the whole
    index whose own paragraph was retrieved with a line holding the answer, and lines of
    questions asked without it (all negatives)."""
    rows: list[Rows] = []
    labels: list[npt.NDArray[np.int8]] = []
    for e in examples:
        if e.rows.shape[0] == 0:
            continue
        if e.labels.any() or not e.own or e.swapped or e.verdict == 0:
            rows.append(e.rows)
            labels.append(e.labels)
    if not rows:
        return np.zeros((0, len(features.LINE_FEATURES))), np.zeros(0)
    return np.vstack(rows).astype(np.float64), np.concatenate(labels).astype(np.float64)


def answerable_label(e: Example) -> int | None:
    """1 when a line of its own paragraph holds the answer (asked over the whole index), 0
    when asked without its paragraph (whatever is retrieved then does not answer it, even
    where the answer's words occur in it) and for a near miss; None when its own paragraph
    was not retrieved or no line of it holds the answer as written (not learned from)."""
    if e.verdict is not None:
        return e.verdict
    if e.swapped:
        return 0
    if e.own:
        return 1 if e.labels.any() else None
    return 0


def question_rows(
    examples: Sequence[Example], line_model: Callable[[np.ndarray], np.ndarray]
) -> np.ndarray:
    out = []
    for e in examples:
        rows = e.rows.astype(np.float64)
        scores = line_model(rows) if rows.shape[0] else np.zeros(0)
        out.append(features.question_features(e.question, rows.tolist(), scores.tolist()))
    return np.asarray(out, dtype=np.float64).reshape(-1, len(features.QUESTION_FEATURES))


def _probabilities(booster: Any) -> Callable[[np.ndarray], np.ndarray]:
    return lambda rows: np.asarray(booster.predict(rows), dtype=np.float64)


@dataclass(slots=True)
class Trained:
    spec: dict[str, Any]
    report: dict[str, Any]


def fit(examples: Sequence[Example], *, data: str, seed: int = 7) -> Trained:
    """Line and question models with their calibration, from ``examples`` (both halves of
    the articles); the threshold is left at 0.5 until :func:`choose_threshold`."""
    from sklearn.isotonic import IsotonicRegression

    started = time.perf_counter()
    halves = ("A", "B")
    by_half = {h: [e for e in examples if e.half == h] for h in halves}
    # Cross-fitted line scores: each half scored by the line model of the other half.
    oof_rows: list[np.ndarray] = []
    oof_examples: list[Example] = []
    for h in halves:
        other = [e for e in examples if e.half != h]
        x, y = line_training_set(other)
        booster = train_booster(x, y, {**LINE_PARAMS, "seed": seed}, LINE_ROUNDS)
        oof_rows.append(question_rows(by_half[h], _probabilities(booster)))
        oof_examples.extend(by_half[h])
    qx_all = np.vstack(oof_rows)
    labels = [answerable_label(e) for e in oof_examples]
    keep = np.asarray([lab is not None for lab in labels])
    qx = qx_all[keep]
    qy = np.asarray([lab for lab in labels if lab is not None], dtype=np.float64)
    qhalf = np.asarray(
        [e.half for e, lab in zip(oof_examples, labels, strict=True) if lab is not None]
    )
    # Cross-fitted question scores, for the calibration.
    raw = np.zeros(qy.shape[0])
    for h in halves:
        train_mask = qhalf != h
        booster = train_booster(
            qx[train_mask], qy[train_mask], {**QUESTION_PARAMS, "seed": seed}, QUESTION_ROUNDS
        )
        raw[~train_mask] = booster.predict(qx[~train_mask], raw_score=True)
    iso = IsotonicRegression(out_of_bounds="clip", y_min=0.0, y_max=1.0)
    iso.fit(raw, qy)
    # The models kept: trained on everything.
    x, y = line_training_set(examples)
    line_booster = train_booster(x, y, {**LINE_PARAMS, "seed": seed}, LINE_ROUNDS)
    question_booster = train_booster(qx, qy, {**QUESTION_PARAMS, "seed": seed}, QUESTION_ROUNDS)
    xs, ys = _calibration_points(iso)
    spec: dict[str, Any] = {
        "format": FORMAT,
        "features": {
            "line": list(features.LINE_FEATURES),
            "question": list(features.QUESTION_FEATURES),
        },
        "line": forest_from_lightgbm(line_booster.dump_model()),
        "question": forest_from_lightgbm(question_booster.dump_model()),
        "calibration": {"x": xs, "y": ys},
        "threshold": 0.5,
        "meta": {
            "data": data,
            "questions": len({e.qid for e in examples}),
            "line_rows": int(x.shape[0]),
            "line_positives": int(y.sum()),
            "question_rows": int(qy.shape[0]),
            "question_positives": int(qy.sum()),
            "line_params": {**LINE_PARAMS, "rounds": LINE_ROUNDS},
            "question_params": {**QUESTION_PARAMS, "rounds": QUESTION_ROUNDS},
        },
    }
    seconds = time.perf_counter() - started
    spec["meta"]["training_seconds"] = round(seconds, 1)
    report = {
        "seconds": seconds,
        "line_importance": importance(line_booster, features.LINE_FEATURES),
        "question_importance": importance(question_booster, features.QUESTION_FEATURES),
        "oof_auc": auc(raw, qy),
    }
    return Trained(spec, report)


def _calibration_points(iso: Any) -> tuple[list[float], list[float]]:
    xs = [round(float(v), 6) for v in iso.X_thresholds_]
    ys = [round(float(v), 6) for v in iso.y_thresholds_]
    return xs, ys


def importance(booster: Any, names: Sequence[str]) -> list[tuple[str, float]]:
    gains = booster.feature_importance(importance_type="gain")
    total = float(sum(gains)) or 1.0
    pairs = sorted(zip(names, (float(g) / total for g in gains), strict=True), key=lambda p: -p[1])
    return [(n, round(g, 4)) for n, g in pairs]


def squad_examples(
    settings: Settings,
    file: Path,
    work: Path,
    *,
    keep: Callable[[int], bool] = lambda _a: True,
    ingest: Callable[[Shirabe, list[Path]], object] | None = None,
    progress: Callable[[int, int], None] | None = None,
    keep_lines: bool = False,
) -> list[Example]:
    """The examples of a SQuAD-format file's questions, asked over an index of its
    paragraphs kept in ``work`` (an embedded index: re-runs embed nothing again); with
    ``keep_lines``, each keeps its candidate lines' text (for the span model)."""
    from shirabe.engine import Shirabe

    corpus = work / "corpus"
    questions = write_corpus(read_squad(file), corpus, keep=keep)
    local = settings.updated(
        home=work / "index", store={"database_url": None, "database_read_url": None}
    )
    with Shirabe(local) as app:
        if ingest is not None:
            ingest(app, [corpus])
        else:
            app.ingest([corpus])
        return collect(
            app, questions, str(corpus.resolve()) + "/", progress=progress, keep_lines=keep_lines
        )


def case_examples(app: Shirabe, cases: Sequence[Case]) -> tuple[list[Example], int]:
    """Examples from evaluation cases over ``app``'s index (``shirabe feedback export``): a
    case that expects an answer makes the lines holding it (in the expected file, when one
    is named) positive and the question answerable when one does; a case that expects a
    refusal makes an unanswerable question. Cases of other kinds are not used; their count
    is returned too."""
    asker = _Asker(app, "", keep_lines=False)
    out: list[Example] = []
    unused = 0
    for case in cases:
        half = "A" if zlib.crc32(case.id.encode()) % 2 == 0 else "B"
        if case.expect_refusal:
            e = asker.example(_case_question(case, half), case.question, own=True)
            out.append(_relabelled(e, [], verdict=0))
        elif case.expect_answer:
            e = asker.example(_case_question(case, half), case.question, own=True)
            wanted = [nfkc(a) for a in case.expect_answer]
            labels = [int(any(a in nfkc(t) for a in wanted)) for t in e.lines]
            out.append(_relabelled(e, labels, verdict=1 if any(labels) else None))
        else:
            unused += 1
    return out, unused


def _case_question(case: Case, half: str) -> SquadQuestion:
    return SquadQuestion(case.id, case.question, "", case.expect_answer, half, -1)


def _relabelled(e: Example, labels: Sequence[int], *, verdict: int | None) -> Example:
    e.labels = np.asarray(labels or [0] * e.rows.shape[0], dtype=np.int8)
    e.verdict = verdict
    return e


def selected_articles(file: Path, every: int) -> list[int]:
    """The numbers of every ``every``-th article of a SQuAD-format file."""
    return list(range(0, len(read_squad(file)["data"]), every))
