"""Progress bars for long work: ingesting, answering a batch, evaluating."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from shirabe.cli.render import display_path, out
from shirabe.engine import Shirabe
from shirabe.evaluation import batch as batching
from shirabe.evaluation.cases import Case
from shirabe.evaluation.metrics import CaseResult
from shirabe.evaluation.run import run
from shirabe.records import Filters, IngestEvent, IngestReport, Progress as IngestProgress


@contextmanager
def bar() -> Iterator[Progress]:
    """A transient bar: description, bar, done/total, time, and the current item (``item``)."""
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[item]}", style="dim"),
    )
    with Progress(*columns, console=out, transient=True) as progress:
        yield progress


def ingest_with_progress(shirabe: Shirabe, paths: list[Path], workers: int = 0) -> IngestReport:
    return _with_progress(lambda notify: shirabe.ingest(paths, progress=notify, workers=workers))


def move_root_with_progress(shirabe: Shirabe, folder: Path) -> IngestReport:
    return _with_progress(lambda notify: shirabe.move_root(folder, notify))


def _with_progress(work: Callable[[IngestProgress], IngestReport]) -> IngestReport:
    with bar() as progress:
        task = progress.add_task("indexing", total=None, item="")

        def on_event(event: IngestEvent) -> None:
            if event.kind == "scan":
                progress.update(task, total=event.total)
            elif event.kind == "file" and event.result is not None:
                name = Path(event.result.path).name
                progress.update(task, completed=event.done, item=name)
            elif event.kind == "index":
                progress.update(task, description="building index", item="")

        return work(on_event)


def batch_with_progress(
    shirabe: Shirabe,
    questions: list[batching.Question],
    out_file: Path,
    rationales_file: Path | None,
    *,
    filters: Filters | None,
) -> batching.Summary:
    with bar() as progress:
        task = progress.add_task("answering", total=None, item="")

        def on_start(total: int) -> None:
            progress.update(task, total=total)

        def on_row(result: batching.RowResult) -> None:
            label = result.id if result.outcome != "failed" else f"{result.id} (failed)"
            progress.update(task, advance=1, item=label)

        return batching.run(
            shirabe,
            questions,
            out_file,
            rationales_file,
            filters=filters,
            show_path=display_path,
            on_start=on_start,
            on_row=on_row,
        )


def eval_with_progress(shirabe: Shirabe, cases: list[Case]) -> list[CaseResult]:
    with bar() as progress:
        task = progress.add_task("asking", total=len(cases), item="")

        def on_case(result: CaseResult) -> None:
            progress.update(task, advance=1, item=result.id)

        return run(shirabe, cases, on_case=on_case)
