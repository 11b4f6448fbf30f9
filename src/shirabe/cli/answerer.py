"""The ``answerer`` command group: retrain the learned answer stage and compare it with the
model in use on questions neither was trained on."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer

from shirabe.cli.options import IndexOption, errors, make_settings, opened
from shirabe.cli.progress import bar, ingest_with_progress
from shirabe.cli.render import out
from shirabe.engine import Shirabe
from shirabe.evaluation.cases import load_cases
from shirabe.evaluation.squad import answers_by_question, read_squad
from shirabe.training import (
    figures,
    lines,
    load_model,
    read_model,
    spans,
    write_model,
)


@contextmanager
def _collecting(label: str) -> Iterator[Callable[[int, int], None]]:
    """A progress bar, and the callback that moves it, while questions are asked."""
    with bar() as progress:
        task = progress.add_task(label, total=None, item="")

        def show(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total)

        yield show


def answerer_train(
    squad: Annotated[
        Path, typer.Argument(help="SQuAD-format JSON of questions with answer spans.")
    ],
    out_file: Annotated[Path, typer.Option("--out", help="Where to write the model file.")],
    dev: Annotated[
        Path | None,
        typer.Option(
            "--dev",
            help="SQuAD-format development set: the refusal threshold is chosen there "
            "(default: on the held-out part of SQUAD).",
        ),
    ] = None,
    every: Annotated[
        int, typer.Option("--every", min=1, help="Use every Nth article of SQUAD.")
    ] = 1,
    cases: Annotated[
        Path | None,
        typer.Option(
            "--cases",
            help="Cases exported by `shirabe feedback export`, asked over --index and "
            "added to the training data.",
        ),
    ] = None,
    work: Annotated[
        Path,
        typer.Option("--work", help="Folder kept for the indexes of the question sets."),
    ] = Path(".shirabe-training"),
    index: IndexOption = None,
) -> None:
    """Train the answer model: which line answers, whether any does (calibrated), and which
    words of it are the short answer. One
    article in ten of SQUAD is held out; the figures of the model in use and of the new one
    on it are printed side by side."""
    with errors():
        settings = make_settings(index=index)
        selected = lines.selected_articles(squad, every)
        held = set(selected[9::10])
        kept = set(selected) - held

        def ingest(app: Shirabe, paths: list[Path]) -> object:
            return ingest_with_progress(app, paths)

        with _collecting("asking the training questions") as shown:
            examples = lines.squad_examples(
                settings,
                squad,
                work / "train",
                keep=lambda a: a in kept or a in held,
                ingest=ingest,
                progress=shown,
                keep_lines=True,
            )
        train = [e for e in examples if e.article in kept]
        held_out = [e for e in examples if e.article in held]
        unused = 0
        answers = answers_by_question(read_squad(squad))
        if dev is not None:
            answers |= answers_by_question(read_squad(dev))
        if cases is not None:
            with opened(settings) as app:
                loaded = load_cases(cases)
                from_cases, unused = lines.case_examples(app, loaded)
            answers |= {c.id: c.expect_answer for c in loaded if c.expect_answer}
            train += from_cases
            out.print(f"{len(from_cases)} feedback cases added ({unused} of other kinds unused)")
        if dev is not None:
            with _collecting("asking the development questions") as shown:
                choose_on = lines.squad_examples(
                    settings, dev, work / "dev", ingest=ingest, progress=shown, keep_lines=True
                )
        else:
            choose_on = held_out
        with out.status("training…"):
            trained = lines.fit(train, data=f"{squad.name}, every {every}th article")
        spec = trained.spec
        draft = work / "draft.json.gz"
        write_model(draft, spec)
        answerable = [e for e in choose_on if e.own and not e.swapped]
        spec["threshold"] = figures.choose_threshold(
            figures.probabilities(read_model(draft), answerable).tolist(),
            figures.MAX_FALSE_REFUSALS,
        )
        spec["meta"]["threshold_chosen_on"] = str(dev or f"{squad.name} (held-out articles)")
        with out.status("training the short answer…"):
            spans.add_span_model(spec, train, choose_on, answers, settings.tokenizer)
        write_model(out_file, spec)
        before = load_model(settings.answering.model)
        after = read_model(out_file)
        table = {
            "before": figures.evaluate(before, held_out, before.threshold),
            "after": figures.evaluate(after, held_out, after.threshold),
        }
    _print_comparison(table, trained.report, out_file)


def _print_comparison(
    table: dict[str, dict[str, Any]], report: dict[str, Any], out_file: Path
) -> None:
    out.print(f"wrote {out_file} ({out_file.stat().st_size:,} bytes)")
    out.print(f"training took {report['seconds']:.0f} s")
    out.print("held-out questions (not trained on):")
    for key in table["after"]:
        b, a = table["before"][key], table["after"][key]
        if isinstance(a, float) and not math.isnan(a):
            out.print(f"  {key:<28} {b:>8.3f} → {a:.3f}")
        else:
            out.print(f"  {key:<28} {b!s:>8} → {a}")
    top = ", ".join(f"{n} {g:.2f}" for n, g in report["question_importance"][:8])
    out.print(f"answerability, most used features: {top}")
    out.print(json.dumps({"held_out": table}, ensure_ascii=False, default=str), soft_wrap=True)
