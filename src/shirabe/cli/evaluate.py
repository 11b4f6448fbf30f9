"""Commands that measure and answer in bulk: eval, batch."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from shirabe.cli.options import (
    IndexOption,
    JsonOption,
    ModelOptions,
    OptionGroup,
    RetrievalOptions,
    ScopeOptions,
    TopKOption,
    errors,
    make_settings,
    opened,
    require_index,
    with_options,
)
from shirabe.cli.progress import batch_with_progress, eval_with_progress
from shirabe.cli.render import (
    display_path,
    out,
    print_batch,
    print_comparison,
    print_eval,
    print_failures,
)
from shirabe.errors import ShirabeError
from shirabe.evaluation import batch as batching
from shirabe.evaluation.baseline import (
    DEFAULT_TOLERANCE,
    check_baseline,
    compare,
    newly_failing,
    passed,
)
from shirabe.evaluation.cases import load_cases
from shirabe.evaluation.metrics import report
from shirabe.evaluation.run import run, run_settings

REGRESSION_EXIT = 3
BATCH_FAILED_EXIT = 3
INTERRUPTED_EXIT = 130


@dataclasses.dataclass
class BaselineOptions(OptionGroup):
    """Where an evaluation's figures are written, and the baseline they are held against."""

    out_file: Annotated[
        Path | None, typer.Option("--out", help="Write the metrics as a baseline JSON file.")
    ] = None
    against: Annotated[
        Path | None,
        typer.Option(
            "--against",
            help="Compare with a baseline JSON; exit code 3 when a metric drops beyond "
            "--tolerance (latency never gates).",
        ),
    ] = None
    tolerance: Annotated[
        float, typer.Option("--tolerance", min=0.0, help="Allowed absolute drop per metric.")
    ] = DEFAULT_TOLERANCE


@with_options
def eval_cases(
    cases_file: Annotated[
        Path, typer.Argument(help="YAML case file, e.g. eval/sample_docs.yaml.", show_default=False)
    ],
    index: IndexOption = None,
    ingest_dirs: Annotated[
        list[Path] | None,
        typer.Option("--ingest", help="Ingest this folder first (incremental; repeatable)."),
    ] = None,
    json_out: JsonOption = False,
    top_k: TopKOption = None,
    *,
    baseline_options: BaselineOptions,
    retrieval: RetrievalOptions,
    model: ModelOptions,
) -> None:
    """Score answers against a case file: retrieval hit@k and MRR of the expected source,
    answer containment, refusal precision and recall, latency p50/p95.

    Exit codes: 0 passed, 1 error, 2 invalid setting, 3 regression against --against.
    """
    with errors():
        cases = load_cases(cases_file)
        out_file, against = baseline_options.out_file, baseline_options.against
        tolerance = baseline_options.tolerance
        baseline = _read_baseline(against) if against else None
        settings = make_settings(retrieval, model, index=index, top_k=top_k)
        with opened(settings, indexed=False) as shirabe:
            if ingest_dirs:
                print_failures(shirabe.ingest(ingest_dirs))
            require_index(shirabe)
            if json_out or not out.is_terminal:
                results = run(shirabe, cases)
            else:
                results = eval_with_progress(shirabe, cases)
            settings_used = run_settings(shirabe)
        document = report(results, settings_used, show_path=display_path)
        if out_file is not None:
            _write_json(out_file, document)
    rows = compare(baseline, document, tolerance) if baseline else []
    ok = passed(rows)
    if json_out:
        payload = dict(document)
        if baseline is not None:
            payload["comparison"] = [asdict(r) for r in rows]
            payload["newly_failing"] = newly_failing(baseline, document)
            payload["passed"] = ok
        out.print_json(json.dumps(payload, ensure_ascii=False))
    else:
        print_eval(document, results)
        if baseline is not None:
            print_comparison(rows, newly_failing(baseline, document), ok, tolerance)
        if out_file is not None:
            out.print(f"[dim]baseline written to {escape(str(out_file))}[/]")
    if not ok:
        raise typer.Exit(REGRESSION_EXIT)


def _write_json(path: Path, document: dict[str, Any]) -> None:
    try:
        path.write_text(json.dumps(document, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    except OSError as exc:
        raise ShirabeError(f"cannot write {path}: {exc.strerror or exc}") from exc


def _read_baseline(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ShirabeError(f"cannot read baseline {path}: {exc.strerror or exc}") from exc
    except ValueError as exc:
        raise ShirabeError(f"{path}: not valid JSON ({exc})") from exc
    return check_baseline(data, str(path))


@dataclasses.dataclass
class BatchOutput(OptionGroup):
    """What a batch writes beside its predictions: the passages behind each answer, and a
    summary as JSON."""

    rationales_file: Annotated[
        Path | None,
        typer.Option(
            "--rationales",
            help="Also write the passages behind each answer (id, rank, file, page, sheet, "
            "row, slide, heading path, score, text).",
        ),
    ] = None
    json_out: JsonOption = False


@with_options
def batch_answer(
    questions_file: Annotated[
        Path,
        typer.Argument(
            help="CSV with a header row id,question (UTF-8, Shift_JIS or UTF-16; other "
            "columns are ignored).",
            show_default=False,
        ),
    ],
    out_file: Annotated[
        Path,
        typer.Option("--out", "-o", help="Predictions CSV (id,answer,error), UTF-8 with BOM."),
    ],
    index: IndexOption = None,
    top_k: TopKOption = None,
    *,
    output: BatchOutput,
    scope: ScopeOptions,
    retrieval: RetrievalOptions,
    model: ModelOptions,
) -> None:
    """Answer every question of a CSV file into a predictions CSV.

    Resumable: ids already answered in --out are skipped and each answer is saved as soon as it
    is written, so after Ctrl-C or a crash just run the same command again. A question that fails
    (e.g. the model server is down) gets an empty answer and an error, the run goes on, and the
    next run retries it.

    Exit codes: 0 every question answered or refused, 1 error (bad input, no index), 2 invalid
    setting, 3 some questions failed (see the error column; rerun to retry), 130 interrupted.
    """
    rationales_file, json_out = output.rationales_file, output.json_out
    with errors():
        questions = batching.read_questions(questions_file)
        settings = make_settings(retrieval, model, index=index, top_k=top_k)
        with opened(settings) as shirabe:
            filters = scope.filters(shirabe)
            args = (shirabe, questions, out_file, rationales_file)
            if json_out or not out.is_terminal:
                summary = batching.run(*args, filters=filters, show_path=display_path)
            else:
                summary = batch_with_progress(*args, filters=filters)
    if json_out:
        out.print_json(json.dumps(summary.as_dict(), ensure_ascii=False))
    else:
        print_batch(summary, out_file, rationales_file)
    if summary.interrupted:
        raise typer.Exit(INTERRUPTED_EXIT)
    if summary.failed:
        raise typer.Exit(BATCH_FAILED_EXIT)
