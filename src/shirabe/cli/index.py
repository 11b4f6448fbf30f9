"""Commands that build and look after the index: ingest, worker, remove, status, migrate,
root, audit."""

from __future__ import annotations

import json
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from shirabe.cli.options import IndexOption, JsonOption, errors, make_settings, opened
from shirabe.cli.progress import ingest_with_progress, move_root_with_progress
from shirabe.cli.render import display_path, err, out, print_report, report_json
from shirabe.records import AuditQuery, IngestEvent, IngestReport


def ingest(
    paths: Annotated[list[Path], typer.Argument(help="Files or folders to index.")],
    index: IndexOption = None,
    json_out: JsonOption = False,
    chunk_size: Annotated[int | None, typer.Option(help="SHIRABE_INGEST__CHUNK_SIZE")] = None,
    chunk_overlap: Annotated[int | None, typer.Option(help="SHIRABE_INGEST__CHUNK_OVERLAP")] = None,
    workers: Annotated[
        int,
        typer.Option(
            min=0,
            help="Read and embed the files in this many worker processes (PostgreSQL); "
            "`shirabe worker` on other machines joins them.",
        ),
    ] = 0,
) -> None:
    """Index files and folders; unchanged files are skipped, deleted ones removed."""
    settings = {"index": index, "chunk_size": chunk_size, "chunk_overlap": chunk_overlap}
    with errors(), opened(make_settings(**settings), indexed=False) as shirabe:
        if json_out or not out.is_terminal:
            report = shirabe.ingest(paths, workers=workers)
        else:
            report = ingest_with_progress(shirabe, paths, workers)
    _reported(report, json_out)


def worker(
    index: IndexOption = None,
    wait: Annotated[
        bool, typer.Option("--wait", help="Wait for new runs instead of stopping when idle.")
    ] = False,
    json_out: JsonOption = False,
) -> None:
    """Take files from the ingest runs in the database (PostgreSQL) and read, embed and write
    them, until no run has files left. Run it on any machine that reaches the database and
    sees the documents at the same paths as the `shirabe ingest --workers` that opened them,
    with the same settings. A file that fails is the run's to report: the worker exits 1
    only when it cannot go on."""

    def told(event: IngestEvent) -> None:
        if event.result is not None and not json_out:
            f = event.result
            err.print(f"{f.outcome} {escape(display_path(f.path))}", highlight=False)

    with errors(), opened(make_settings(index=index), indexed=False) as shirabe:
        report = shirabe.work(wait=wait, progress=told)
    _reported(report, json_out, fail=False)


def _reported(report: IngestReport, json_out: bool, *, fail: bool = True) -> None:
    """The report printed (as JSON, failures also on stderr); with ``fail``, the command
    fails when a file did."""
    if json_out:
        out.print_json(json.dumps(report_json(report), ensure_ascii=False))
        for f in report.failures:
            err.print(f"failed {f.path}: {f.reason}", markup=False, highlight=False)
    else:
        print_report(report)
    if fail and report.failures:
        raise typer.Exit(1)


def remove(
    path: Annotated[
        Path | None, typer.Argument(help="A file or folder to drop from the index.")
    ] = None,
    failed: Annotated[
        bool, typer.Option("--failed", help="Drop failed entries: PATH's, or every one.")
    ] = False,
    index: IndexOption = None,
) -> None:
    """Remove a file (or every file under a folder) from the index; an upload's file too.
    With --failed, the entries of files that failed to be read (the admin page's 失敗を削除)."""
    if path is None and not failed:
        raise typer.BadParameter("give a file or folder, or --failed", param_hint="PATH")
    with errors(), opened(make_settings(index=index), indexed=False) as shirabe:
        if failed:
            key = shirabe.root.key_of(path) if path is not None else None
            removed = len(shirabe.remove_failed(key))
        else:
            assert path is not None
            removed = shirabe.remove(path)
    if removed == 0 and not failed:
        err.print(f"[red]not in the index:[/] {escape(str(path))}")
        raise typer.Exit(1)
    out.print(f"removed {removed} file(s)")


def status(index: IndexOption = None, json_out: JsonOption = False) -> None:
    """Files, chunks, model, index size, last ingest and failed files."""
    with errors(), opened(make_settings(index=index), indexed=False) as shirabe:
        info = shirabe.status()
    if json_out:
        out.print_json(json.dumps(asdict(info), ensure_ascii=False, default=str))
        return
    table = Table(show_header=False, box=None)
    table.add_row("index", escape(info.home))
    table.add_row("files", str(info.files))
    table.add_row("chunks", str(info.chunks))
    model = f"{info.embedding_model} ({info.embedding_dim} dims)" if info.embedding_model else "—"
    table.add_row("model", escape(model))
    table.add_row("size", f"{info.index_bytes / 1_048_576:.1f} MiB")
    if info.last_ingest:
        li = info.last_ingest
        table.add_row(
            "last ingest",
            f"{li['finished_at']}  +{li['added']} ~{li['updated']} -{li['removed']} "
            f"={li['unchanged']} !{li['failed']}",
        )
    else:
        table.add_row("last ingest", "—")
    table.add_row("failed", str(len(info.failed)))
    out.print(table)
    for f in info.failed:
        out.print(f"  [red]✗[/] {escape(display_path(f.path))}: {escape(f.error or '')}")


def migrate(
    index: IndexOption = None,
    database: Annotated[
        str | None,
        typer.Option(
            "--database", help="postgresql://… (SHIRABE_STORE__DATABASE_URL).", show_default=False
        ),
    ] = None,
    embeddings_from: Annotated[
        Path | None,
        typer.Option(
            "--embeddings-from",
            help="An embedded index directory whose embedding cache to copy into the database "
            "(moving to PostgreSQL without embedding everything again).",
            show_default=False,
        ),
    ] = None,
    json_out: JsonOption = False,
) -> None:
    """Bring the index's schema up to date: the numbered migrations not yet applied.

    Every command also does this when it opens the index; run it on its own before starting
    servers after an upgrade."""
    with (
        errors(),
        opened(make_settings(index=index, database_url=database), indexed=False) as shirabe,
    ):
        done = shirabe.migrate(embeddings_from=embeddings_from)
    applied, latest, copied = done.applied, done.version, done.embeddings
    if json_out:
        out.print_json(json.dumps({"applied": applied, "version": latest, "embeddings": copied}))
        return
    if applied:
        out.print(f"applied migrations {', '.join(map(str, applied))}; schema version {latest}")
    else:
        out.print(f"schema version {latest}: up to date")
    if embeddings_from is not None:
        out.print(f"copied {copied:,} cached embeddings from {escape(str(embeddings_from))}")


def root(
    folder: Annotated[
        Path | None,
        typer.Argument(
            help="The new document root (omit to show the current one).", show_default=False
        ),
    ] = None,
    index: IndexOption = None,
    json_out: JsonOption = False,
) -> None:
    """Show or move the document root: the folder whose layout gives every document its key,
    category and readers (the access map's globs are relative to it). Moving it re-ingests
    the new root and drops documents outside it; it is kept in the audit log."""
    with errors(), opened(make_settings(index=index), indexed=False) as shirabe:
        if folder is None:
            current = shirabe.root.path
            out.print(escape(str(current)) if current else "— (set by the first ingest)")
            return
        report = (
            shirabe.move_root(folder)
            if json_out or not out.is_terminal
            else move_root_with_progress(shirabe, folder)
        )
    if json_out:
        out.print_json(json.dumps(report_json(report), ensure_ascii=False))
    else:
        print_report(report)
    if report.failures:
        raise typer.Exit(1)


def audit(
    index: IndexOption = None,
    limit: Annotated[int, typer.Option(help="How many entries, newest first.")] = 50,
    actor: Annotated[str | None, typer.Option(help="Only entries whose actor holds this.")] = None,
    action: Annotated[
        str | None, typer.Option(help="Only this action (delete, user_add, access_map, ...).")
    ] = None,
    path: Annotated[
        str | None, typer.Option("--path", help="Only entries whose document or user holds this.")
    ] = None,
    since: Annotated[
        datetime | None, typer.Option(help="Only entries at or after this local time.")
    ] = None,
    until: Annotated[datetime | None, typer.Option(help="Only entries before this local time.")] = (
        None
    ),
    json_out: JsonOption = False,
) -> None:
    """Who uploaded, replaced, deleted or changed the readers of a document, who changed users,
    tokens or the access map, and when."""
    query = AuditQuery(
        actor=actor,
        action=action,
        path=path,
        since=since.astimezone() if since else None,
        until=until.astimezone() if until else None,
    )
    with errors(), opened(make_settings(index=index), indexed=False) as shirabe:
        entries = shirabe.audit_log(limit=limit, query=query)
    if json_out:
        out.print_json(json.dumps([asdict(e) for e in entries], ensure_ascii=False))
        return
    table = Table("when", "who", "what", "document", "detail", box=None)
    for e in entries:
        table.add_row(
            *(escape(v) for v in (e.at, e.actor, e.action, display_path(e.path), e.detail))
        )
    out.print(table)
