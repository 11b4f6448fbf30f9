"""The ``enrich`` command: a chat model's questions and keywords for every passage, written
before an ingest, with the cost shown first."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, TypeVar

import typer
from rich.markup import escape
from rich.progress import TimeRemainingColumn

from shirabe.cli.options import (
    IndexOption,
    ModelOptions,
    errors,
    make_settings,
    opened,
    with_options,
)
from shirabe.cli.progress import bar, ingest_with_progress
from shirabe.cli.render import err, out, print_report
from shirabe.errors import ConfigurationError, GeneratorError
from shirabe.records import BrokenPage, Chunk

T = TypeVar("T")


@with_options
def enrich(
    folders: Annotated[list[Path], typer.Argument(help="Folders (or files) to write for.")],
    index: IndexOption = None,
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="Only count what to write and estimate the minutes."),
    ] = False,
    *,
    model: ModelOptions,
) -> None:
    """Have the chat model write what an ingest indexes beside the documents, then ingest:
    likely questions and keywords for each passage (SHIRABE_INGEST__ENRICH_QUESTIONS=true) and
    clean rewrites of broken PDF pages (SHIRABE_INGEST__CLEAN_PDF_PAGES=true). What is written is
    kept, so a run that stops resumes; --dry-run says how much there is and about how many
    minutes."""
    with errors():
        settings = make_settings(model, index=index)
        if not (settings.ingest.enrich_questions or settings.ingest.clean_pdf_pages):
            raise ConfigurationError(
                "set SHIRABE_INGEST__ENRICH_QUESTIONS=true or SHIRABE_INGEST__CLEAN_PDF_PAGES=true "
                "(in the environment or .env), so that every later ingest keeps what is written too"
            )
        with opened(settings, indexed=False) as shirabe:
            enricher, cleaner = shirabe.writers.enricher, shirabe.writers.cleaner
            with out.status("reading the files…"):
                files = list(shirabe.documents(folders))
            out.print(f"{len(files)} files")
            pages: list[BrokenPage] = []
            passages: list[Chunk] = []
            if cleaner is not None:
                broken = [p for _key, doc, _chunks in files for p in cleaner.pages(doc)]
                pages = cleaner.missing(broken)
                seconds = _timed(cleaner.mean_seconds(), pages, cleaner.write, "page")
                _estimate("broken PDF pages", len(broken), pages, cleaner.model, seconds)
            if enricher is not None:
                wanted = [c for _key, _doc, chunks in files for c in enricher.wanted(chunks)]
                passages = enricher.missing(wanted)
                seconds = _timed(enricher.mean_seconds(), passages, enricher.write, "passage")
                _estimate("passages", len(wanted), passages, enricher.model, seconds)
            if dry_run:
                return
            if cleaner is not None:
                write_all("rewriting pages", pages, cleaner.write, _page_name)
            if enricher is not None:
                write_all("writing questions", passages, enricher.write, _source_name)
            print_report(ingest_with_progress(shirabe, folders))


def _timed(mean: float | None, missing: list[T], write: Callable[[T], str], what: str) -> float:
    """Seconds per item: the cache's mean so far, or one item written (and taken off
    ``missing``) while the user waits."""
    if mean is not None or not missing:
        return mean or 0.0
    with out.status(f"timing the model on one {what}…"):
        started = time.perf_counter()
        item = missing.pop(0)
        try:
            write(item)
        except GeneratorError as exc:  # asked again below, and timed by the next one
            err.print(f"[yellow]the model failed on one {what}: {escape(str(exc))}[/]")
            missing.append(item)
        return time.perf_counter() - started


def _estimate(what: str, total: int, missing: list[T], model: str, seconds: float) -> None:
    minutes = len(missing) * seconds / 60
    out.print(
        f"{total} {what}: {total - len(missing)} written, {len(missing)} to write with "
        f"{escape(model)}"
        + (f" (about {minutes:.1f} minutes at {seconds:.1f} s each)" if missing else "")
    )


def _page_name(page: BrokenPage) -> str:
    return f"{Path(page.path).name} p.{page.number}"


def _source_name(chunk: Chunk) -> str:
    return Path(chunk.source).name


def write_all(
    label: str, missing: list[T], write: Callable[[T], str], name: Callable[[T], str]
) -> None:
    """Write for each item with a bar; an item the model fails on is left for the ingest (which
    indexes it without and asks again next time); Ctrl-C keeps what is written."""
    if not missing:
        return
    failed: list[str] = []
    with bar() as progress:
        progress.columns = (*progress.columns[:-1], TimeRemainingColumn(), progress.columns[-1])
        task = progress.add_task(label, total=len(missing), item="")
        try:
            for item in missing:
                progress.update(task, item=name(item))
                try:
                    write(item)
                except GeneratorError as exc:
                    failed.append(f"{name(item)}: {exc}")
                progress.advance(task)
        except KeyboardInterrupt:
            err.print("[yellow]stopped: what was written is kept; run again to go on[/]")
            raise typer.Exit(130) from None
    if failed:
        err.print(f"[yellow]the model failed on {len(failed)} ({escape(failed[0])})[/]")
