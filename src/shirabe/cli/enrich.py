"""The ``enrich`` command: a chat model's questions and keywords for every passage, written
before an ingest, with the cost shown first."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

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
from shirabe.errors import ConfigurationError
from shirabe.indexing.enrich import Enricher
from shirabe.records import Chunk


@with_options
def enrich(
    folders: Annotated[list[Path], typer.Argument(help="Folders (or files) to write for.")],
    index: IndexOption = None,
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="Only count the passages and estimate the minutes."),
    ] = False,
    *,
    model: ModelOptions,
) -> None:
    """Have the chat model write likely questions and keywords for each passage (indexed for
    BM25 only; SHIRABE_ENRICH_QUESTIONS=true), then ingest. Written passages are kept, so a
    run that stops resumes; --dry-run says how many passages and about how many minutes."""
    with errors():
        settings = make_settings(model, index=index)
        if not settings.enrich_questions:
            raise ConfigurationError(
                "set SHIRABE_ENRICH_QUESTIONS=true (in the environment or .env), so that every "
                "later ingest keeps the questions too"
            )
        with opened(settings, indexed=False) as shirabe:
            enricher = shirabe.enricher
            assert enricher is not None
            with out.status("reading the files…"):
                files = list(shirabe.passages(folders))
            wanted = [c for _key, chunks in files for c in enricher.wanted(chunks)]
            missing = enricher.missing(wanted)
            per_passage = enricher.mean_seconds()
            if per_passage is None and missing:
                with out.status(f"timing {enricher.model} on one passage…"):
                    started = time.perf_counter()
                    enricher.write(missing.pop(0))
                    per_passage = time.perf_counter() - started
            minutes = len(missing) * (per_passage or 0) / 60
            out.print(
                f"{len(files)} files, {len(wanted)} passages: "
                f"{len(wanted) - len(missing)} written, {len(missing)} to write with "
                f"{escape(enricher.model)}"
                + (f" (about {minutes:.1f} minutes at {per_passage:.1f} s each)" if missing else "")
            )
            if dry_run:
                return
            write_all(enricher, missing)
            print_report(ingest_with_progress(shirabe, folders))


def write_all(enricher: Enricher, missing: list[Chunk]) -> None:
    """Write for each passage with a bar; Ctrl-C keeps what is written."""
    if not missing:
        return
    with bar() as progress:
        progress.columns = (*progress.columns[:-1], TimeRemainingColumn(), progress.columns[-1])
        task = progress.add_task("writing questions", total=len(missing), item="")
        try:
            for chunk in missing:
                progress.update(task, item=Path(chunk.source).name)
                enricher.write(chunk)
                progress.advance(task)
        except KeyboardInterrupt:
            err.print("[yellow]stopped: what was written is kept; run again to go on[/]")
            raise typer.Exit(130) from None
