"""The ``watch`` command: keep an index in step with folders as their files change."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from shirabe.cli.options import (
    IndexOption,
    ModelOptions,
    errors,
    make_settings,
    opened,
    with_options,
)
from shirabe.cli.progress import ingest_with_progress
from shirabe.cli.render import display_path, err, out, print_report
from shirabe.records import IngestReport

STYLES = {"added": "green", "updated": "cyan", "removed": "magenta", "failed": "red"}
NAMES = {"added": "追加", "updated": "更新", "removed": "削除", "failed": "失敗"}


def print_changes(report: IngestReport, why: str) -> None:
    """One line per file a watcher's ingest changed (unchanged files are not shown)."""
    stamp = time.strftime("%H:%M:%S")
    for f in report.files:
        if f.outcome in STYLES:
            reason = f": {escape(f.reason)}" if f.reason else ""
            out.print(
                f"[dim]{stamp}[/] [{STYLES[f.outcome]}]{NAMES[f.outcome]} {f.outcome}[/] "
                f"{escape(display_path(f.path))}{reason}",
                highlight=False,
            )
    if why == "scan" and any(f.outcome != "unchanged" for f in report.files):
        out.print(f"[dim]{stamp} (found by the periodic scan)[/]")


@with_options
def watch(
    folders: Annotated[list[Path], typer.Argument(help="Folders to ingest and follow.")],
    index: IndexOption = None,
    *,
    model: ModelOptions,
) -> None:
    """Ingest the folders, then ingest every change in them within seconds (new, edited,
    renamed and deleted files) until Ctrl-C; a full scan every SHIRABE_INGEST__WATCH_RESCAN_SECONDS
    catches what no file event reported."""
    from shirabe.watch import Watcher

    with errors(), opened(make_settings(model, index=index), indexed=False) as shirabe:
        print_report(ingest_with_progress(shirabe, folders))
        watcher = Watcher(shirabe, folders, on_report=print_changes)
        shown = ", ".join(escape(str(f)) for f in folders)
        err.print(f"[bold]watching[/] {shown}  (Ctrl-C to stop)")
        watcher.run()
        err.print("stopped watching")
