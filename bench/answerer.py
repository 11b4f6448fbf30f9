"""Train the learned answer stage on JaQuAD, choose its threshold on JSQuAD valid, report.

    python bench/answerer.py [--every N] [--out FILE] [--refresh] [--spans-only MODEL]

- Training data: JaQuAD train (``../shared/data/jaquad/train.json``), the articles whose number
  is a multiple of ``--every`` (5: 139 articles, 5,446 questions), indexed as one Markdown
  file per paragraph in bench/.cache/jaquad (the embedding cache makes re-runs cheap); and the
  company-style cases of eval/near_miss.yaml, eval/sample_docs.yaml (over sample_docs/) and
  eval/near_miss_city.yaml (over its city office pages), each counted ``CASE_WEIGHT`` times.
  Figures on those sets for the model shipped are therefore training figures; held-out ones
  come from models trained with the cases of the other corpus only (docs/benchmarks.md).
- Development data: JSQuAD valid, the index bench/jsquad.py keeps. The refusal threshold is
  chosen there (at most 2% of its answerable questions refused by the stage), and the short
  answer's span threshold too (the lowest at which 3 in 4 of the spans shown are exactly a
  gold answer); every JSQuAD figure printed is therefore a development figure, not a
  held-out one.
- Held-out check: the JaQuAD articles not trained on (number ≡ 1 mod ``--every``) are asked over
  their own index when ``--heldout`` is given (it is indexed too, so it costs an ingest).

Each question is asked as it is and without its own paragraph (NoMIRACL's unanswerable
questions). The collected features are cached in bench/.cache/answerer (``--refresh`` reads
them again). Results go to bench/results/answerer.json; the model to ``--out``.

``--spans-only MODEL`` keeps MODEL's line and answerability models, calibration and threshold,
and trains its span model (the short answer) alone, over MODEL's line ranking: a change to the
span features then leaves every refusal as it was (results in answerer-spans.json).
"""

from __future__ import annotations

import argparse
import pickle
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from shirabe.answering.learned import read_model, read_spec, write_model
from shirabe.engine import Shirabe
from shirabe.evaluation.cases import load_cases
from shirabe.evaluation.squad import answers_by_question, read_squad, write_corpus
from shirabe.settings import Settings, TokenizerSettings
from shirabe.training import figures, lines, spans

from common import CACHE, ROOT, SHARED, revision, write_result

JAQUAD = SHARED / "data" / "jaquad" / "train.json"
JSQUAD = SHARED / "data" / "jsquad" / "valid-v1.3.json"
MODEL = ROOT / "src" / "shirabe" / "answering" / "model" / "answerer.json.gz"
MAX_FALSE_REFUSALS = figures.MAX_FALSE_REFUSALS
CASE_WEIGHT = 10
"""How many times each company-style case counts against one JaQuAD question."""
CASE_SETS = {
    "sample_docs": ("sample_docs", ["near_miss.yaml", "sample_docs.yaml"]),
    "city_office": ("eval/corpora/city_office", ["near_miss_city.yaml"]),
}


def progress(label: str) -> Callable[[int, int], None]:
    started = time.perf_counter()

    def show(done: int, total: int) -> None:
        if done % 200 == 0 or done == total:
            rate = done / max(time.perf_counter() - started, 1e-9)
            print(f"\r{label}: {done}/{total} ({rate:.1f}/s)", end="", file=sys.stderr)
            if done == total:
                print(file=sys.stderr)

    return show


def examples_of(
    name: str, file: Path, keep: Callable[[int], bool], refresh: bool
) -> list[lines.Example]:
    cached = CACHE / "answerer" / f"{name}.pkl"
    if cached.exists() and not refresh:
        with cached.open("rb") as f:
            loaded: list[lines.Example] = pickle.load(f)
        for e in loaded:  # examples cached before a field was added
            for field, default in (("verdict", None), ("swapped", ""), ("apart", False)):
                if not hasattr(e, field):
                    setattr(e, field, default)
        return loaded
    corpus = CACHE / name / "corpus"
    questions = write_corpus(read_squad(file), corpus, keep=keep)
    settings = Settings()
    settings = settings.model_copy(
        update={"home": CACHE / name / f"index-{settings.embedder.name}"}
    )
    with Shirabe(settings) as app:
        report = app.ingest([corpus])
        print(f"{name}: {report.counts}", file=sys.stderr)
        prefix = str(corpus.resolve()) + "/"
        found = lines.collect(app, questions, prefix, progress=progress(name), keep_lines=True)
    cached.parent.mkdir(parents=True, exist_ok=True)
    with cached.open("wb") as f:
        pickle.dump(found, f)
    return found


def case_examples_of(refresh: bool) -> dict[str, list[lines.Example]]:
    """The examples of the company-style eval cases, by corpus, each over its own index."""
    cached = CACHE / "answerer" / "cases.pkl"
    if cached.exists() and not refresh:
        with cached.open("rb") as f:
            loaded: dict[str, list[lines.Example]] = pickle.load(f)
        return loaded
    found: dict[str, list[lines.Example]] = {}
    for corpus, (folder, names) in CASE_SETS.items():
        settings = Settings().model_copy(update={"home": CACHE / "answerer" / f"index-{corpus}"})
        with Shirabe(settings) as app:
            app.ingest([ROOT / folder])
            cases = [c for n in names for c in load_cases(ROOT / "eval" / n) if not c.dialogue]
            found[corpus], _unused = lines.case_examples(app, cases)
    with cached.open("wb") as f:
        pickle.dump(found, f)
    return found


def case_answers(held_out: str | None) -> dict[str, tuple[str, ...]]:
    """The expected answers of the company-style cases trained on, by case id."""
    return {
        case.id: case.expect_answer
        for corpus, (_folder, names) in CASE_SETS.items()
        if corpus != held_out
        for name in names
        for case in load_cases(ROOT / "eval" / name)
        if case.expect_answer and not case.dialogue
    }


def train_spans(
    spec: dict[str, Any],
    train: list[lines.Example],
    dev: list[lines.Example],
    out: Path,
    every: int = 5,
    held_out: str | None = None,
) -> dict[str, Any]:
    """Trains the span model over ``spec``'s line model, chooses its threshold on the
    development examples, writes the model to ``out``; the span figures. The company-style
    cases in ``train`` teach it too, their expected answers taken as the spans."""
    answers = answers_by_question(read_squad(JAQUAD), lambda a: a % every == 0)
    answers |= answers_by_question(read_squad(JSQUAD)) | case_answers(held_out)
    report = spans.add_span_model(spec, train, dev, answers, TokenizerSettings())
    write_model(out, spec)
    return {
        "span_threshold": report["span_threshold"],
        "span_by_threshold_dev": report["span_by_threshold"],
        "span_rows": report["span_rows"],
        "span_positives": report["span_positives"],
        "span_importance": report["span_importance"][:15],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--every", type=int, default=5)
    parser.add_argument("--out", type=Path, default=MODEL)
    parser.add_argument("--refresh", action="store_true")
    parser.add_argument("--heldout", action="store_true")
    parser.add_argument(
        "--no-near-misses", action="store_true", help="train without the made near misses"
    )
    parser.add_argument(
        "--spans-only",
        type=Path,
        metavar="MODEL",
        help="keep MODEL's line and answerability models and threshold; train its span model",
    )
    parser.add_argument(
        "--hold-out",
        choices=sorted(CASE_SETS),
        help="train without this corpus's cases, to measure its sets held out",
    )
    args = parser.parse_args()

    every = args.every
    train = examples_of("jaquad", JAQUAD, lambda a: a % every == 0, args.refresh)
    dev = examples_of("jsquad", JSQUAD, lambda _a: True, args.refresh)
    if args.no_near_misses:
        train = [e for e in train if not e.swapped]
    cases = case_examples_of(args.refresh)
    for corpus, found in cases.items():
        if corpus != args.hold_out:
            train = train + found * CASE_WEIGHT
    started = time.perf_counter()
    if args.spans_only is not None:
        spec = read_spec(args.spans_only)
        spec["meta"]["span_commit"] = revision()
        report = train_spans(spec, train, dev, args.out, every, args.hold_out)
        figures_of_spans = {
            "commit": revision(),
            "spans_over": str(args.spans_only),
            "training_seconds": round(time.perf_counter() - started, 1),
            "model_bytes": args.out.stat().st_size,
            **report,
        }
        for key, value in figures_of_spans.items():
            print(f"{key}: {value}")
        print(f"wrote {write_result('answerer-spans', figures_of_spans)}")
        return
    data = (
        f"JaQuAD v0.1.0 train, articles a % {every} == 0; the cases of "
        + ", ".join(n for c, (_f, names) in CASE_SETS.items() if c != args.hold_out for n in names)
        + f" (each counted {CASE_WEIGHT} times)"
    )
    trained = lines.fit(train, data=data)
    spec = trained.spec
    tmp = CACHE / "answerer" / "candidate.json.gz"
    write_model(tmp, spec)
    model = read_model(tmp)
    dev_own = [e for e in dev if e.own and not e.swapped]
    threshold = figures.choose_threshold(
        figures.probabilities(model, dev_own).tolist(), MAX_FALSE_REFUSALS
    )
    spec["threshold"] = threshold
    spec["meta"]["threshold_chosen_on"] = (
        f"JSQuAD v1.3 valid: at most {MAX_FALSE_REFUSALS:.0%} of its answerable questions refused"
    )
    spec["meta"]["commit"] = revision()
    span_report = train_spans(spec, train, dev, args.out, every, args.hold_out)
    model = read_model(args.out)
    seconds = time.perf_counter() - started
    result: dict[str, Any] = {
        "commit": revision(),
        "training_seconds": round(seconds, 1),
        "model_bytes": args.out.stat().st_size,
        "threshold": threshold,
        "oof_auc_train": trained.report["oof_auc"],
        "jsquad_dev": figures.evaluate(model, dev, threshold),
        **span_report,
        "line_importance": trained.report["line_importance"][:15],
        "question_importance": trained.report["question_importance"][:15],
    }
    if args.heldout:
        held = examples_of("jaquad-heldout", JAQUAD, lambda a: a % every == 1, args.refresh)
        result["jaquad_heldout"] = figures.evaluate(model, held, threshold)
    for key, value in result.items():
        print(f"{key}: {value}")
    print(f"wrote {write_result('answerer', result)}")


if __name__ == "__main__":
    main()
