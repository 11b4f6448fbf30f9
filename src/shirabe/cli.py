"""The ``shirabe`` command: a thin face over :class:`shirabe.engine.Shirabe`."""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from shirabe import batch as batching
from shirabe import evaluation
from shirabe.access import restrict
from shirabe.accounts import User
from shirabe.engine import Shirabe
from shirabe.errors import ConfigurationError, ShirabeError
from shirabe.generators.protocol import DoneEvent, ErrorEvent, GeneratorError, TokenEvent
from shirabe.ingest import IngestEvent
from shirabe.records import Answer, Citation, Hit, IngestReport, format_locator
from shirabe.serialize import answer_json as serialize_answer
from shirabe.serialize import hit_json
from shirabe.settings import Settings
from shirabe.stores.protocol import Filters

app = typer.Typer(
    help="調べ shirabe: 日本語ドキュメントの検索と質問応答 (offline)",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)

IndexOption = Annotated[
    Path | None,
    typer.Option("--index", "-i", help="Index directory (SHIRABE_HOME).", show_default=False),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]
TopKOption = Annotated[
    int | None, typer.Option("--top-k", "-k", help="Passages to retrieve (SHIRABE_TOP_K).")
]
PathGlobOption = Annotated[
    str | None,
    typer.Option("--path", help="Only files whose path matches this glob (a folder: '人事/*')."),
]
CategoryOption = Annotated[
    list[str] | None,
    typer.Option(
        "--category", help="Only documents of this category, a top-level folder (repeatable)."
    ),
]
MetaOption = Annotated[
    list[str] | None,
    typer.Option("--meta", help="Only documents whose metadata has KEY=VALUE (repeatable)."),
]
RetrieverOption = Annotated[
    str | None, typer.Option("--retriever", help="hybrid, bm25 or dense (SHIRABE_RETRIEVER).")
]


GeneratorOption = Annotated[
    str | None,
    typer.Option(
        "--generator",
        help="extractive (default); openai: an OpenAI-compatible model server; azure: Azure "
        "OpenAI (SHIRABE_LLM_AZURE_*); llama: a GGUF file in-process.",
    ),
]
PresetOption = Annotated[
    str | None,
    typer.Option(
        "--llm-preset", help="lmstudio, ollama, llamacpp, vllm or openai (SHIRABE_LLM_PRESET)."
    ),
]
BaseUrlOption = Annotated[
    str | None, typer.Option("--llm-base-url", help="Model server URL (SHIRABE_LLM_BASE_URL).")
]
ModelOption = Annotated[
    str | None,
    typer.Option(
        "--llm-model",
        help="Model name on the server (SHIRABE_LLM_MODEL), or a .gguf file to run in-process "
        "(SHIRABE_LLM_MODEL_PATH).",
    ),
]
AsUserOption = Annotated[
    str | None,
    typer.Option(
        "--as-user", help="Answer as this user would be answered: only what their groups may read."
    ),
]
UnderstandOption = Annotated[
    list[str] | None,
    typer.Option(
        "--understand",
        help="Query understanding, repeatable: multi-query (search other wordings too), "
        "keywords (strengthen the lexical query), decompose (questions asked together, one "
        "by one; with a model, look up what the question hinges on first).",
    ),
]
UNDERSTAND_SETTINGS = {
    "multi-query": "multi_query",
    "keywords": "keyword_extraction",
    "decompose": "decompose",
}


def _understand(steps: list[str] | None) -> dict[str, bool]:
    """Settings switched on by ``--understand``; unknown names are an error naming them."""
    values: dict[str, bool] = {}
    for step in steps or []:
        for name in step.split(","):
            key = UNDERSTAND_SETTINGS.get(name.strip())
            if key is None:
                raise ShirabeError(
                    f"--understand: unknown step {name.strip()!r} "
                    f"(choose from {', '.join(UNDERSTAND_SETTINGS)})"
                )
            values[key] = True
    return values


StreamOption = Annotated[bool, typer.Option("--stream", help="Print the answer as it is written.")]


def _llm(
    generator: str | None, preset: str | None, base_url: str | None, model: str | None
) -> dict[str, Any]:
    """Settings overrides for the answer writer: a ``.gguf`` model implies ``llama``, any other
    model option ``openai``."""
    if model is not None and model.lower().endswith(".gguf"):
        return {"generator": generator or "llama", "llm_model_path": Path(model)}
    values: dict[str, Any] = {
        "generator": generator,
        "llm_preset": preset,
        "llm_base_url": base_url,
        "llm_model": model,
    }
    if generator is None and (preset or base_url or model):
        values["generator"] = "openai"
    return values


def _settings(**overrides: Any) -> Settings:
    values = {k: v for k, v in overrides.items() if v is not None}
    if "index" in values:
        values["home"] = values.pop("index")
    return Settings(**values)


def display_path(path: str) -> str:
    """Paths below the working directory are shown relative to it."""
    try:
        return os.path.relpath(path) if Path(path).is_relative_to(Path.cwd()) else path
    except ValueError:
        return path


@contextmanager
def _errors() -> Iterator[None]:
    try:
        yield
    except (ShirabeError, GeneratorError) as exc:
        err.print(f"[bold red]error:[/] {escape(str(exc))}")
        raise typer.Exit(1) from exc
    except ValidationError as exc:
        for problem in exc.errors():
            field = ".".join(str(p) for p in problem["loc"])
            err.print(f"[bold red]invalid setting[/] {field}: {escape(problem['msg'])}")
        raise typer.Exit(2) from exc


def _scope(shirabe: Shirabe, as_user: str | None, filters: Filters | None) -> Filters | None:
    """``filters`` narrowed to what ``as_user`` may read (all of it without ``--as-user``)."""
    if as_user is None:
        return filters
    return restrict(filters, shirabe.accounts.get_user(as_user).reader)


def _filters(
    path_glob: str | None, meta: list[str] | None = None, categories: list[str] | None = None
) -> Filters | None:
    metadata: dict[str, str] = {}
    for item in meta or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ShirabeError(f"--meta expects KEY=VALUE, got {item!r}")
        metadata[key.strip()] = value.strip()
    filters = Filters(
        path_glob=path_glob, metadata=metadata, categories=frozenset(categories or ())
    )
    return filters if filters else None


def citation_label(c: Citation) -> str:
    return c.label(display_path(c.source))


def _hit_json(hit: Hit) -> dict[str, Any]:
    return hit_json(hit)


def answer_json(answer: Answer) -> dict[str, Any]:
    """The answer as --json prints it: sources as stored, labels as shown in the terminal."""
    document = serialize_answer(answer)
    for item, citation in zip(document["citations"], answer.citations, strict=True):
        item["label"] = citation_label(citation)
    return document


def _print_answer(answer: Answer, *, explain: bool, text: bool = True) -> None:
    """The answer, its citations and (with ``explain``) the evidence; ``text=False`` when
    the text was already streamed."""
    style = "yellow" if answer.refused else "bold"
    if text:
        out.print(f"[{style}]{escape(answer.text)}[/]")
    if answer.citations:
        out.print()
        out.print("[dim]出典[/]")
        for c in answer.citations:
            out.print(f"  [cyan]\\[{c.number}][/] {escape(citation_label(c))}")
    if explain:
        out.print()
        for search in answer.searches:
            out.print(f"[dim]検索: {escape(search)}[/]")
        _print_hits(answer.hits, explain=True)
        timings = ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in answer.timings.items())
        out.print(f"[dim]{timings}[/]")


def _print_hits(hits: list[Hit], *, explain: bool) -> None:
    table = Table(show_lines=False, header_style="bold")
    table.add_column("#", justify="right")
    table.add_column("score", justify="right")
    signals = list(dict.fromkeys(name for hit in hits for name in hit.ranks)) if explain else []
    for name in signals:
        table.add_column(f"{name} (rank)", justify="right")
    table.add_column("source")
    table.add_column("text", overflow="fold")
    for i, hit in enumerate(hits, start=1):
        chunk = hit.chunk
        heading = [chunk.heading] if chunk.heading_path else []
        where = " › ".join([display_path(chunk.source), *heading, *format_locator(chunk.locator)])
        if chunk.is_summary:
            where += " (要約)"
        snippet = chunk.text.replace("\n", " ")
        row = [str(i), f"{hit.score:.3f}"]
        for name in signals:
            row.append(f"{hit.scores[name]:.3f} ({hit.ranks[name]})" if name in hit.ranks else "—")
        row += [escape(where), escape(snippet[:120] + ("…" if len(snippet) > 120 else ""))]
        table.add_row(*row)
    out.print(table)


def _report_json(report: IngestReport) -> dict[str, Any]:
    return {
        "counts": report.counts,
        "seconds": round(report.seconds, 3),
        "files": [asdict(f) for f in report.files],
    }


def _print_report(report: IngestReport) -> None:
    c = report.counts
    out.print(
        f"追加 added [green]{c['added']}[/] · 更新 updated [cyan]{c['updated']}[/] · "
        f"削除 removed [magenta]{c['removed']}[/] · 変更なし unchanged {c['unchanged']} · "
        f"失敗 failed [red]{c['failed']}[/]  ({report.seconds:.1f}s)"
    )
    for f in report.files:
        for warning in f.warnings:
            err.print(f"[yellow]warning[/] {escape(display_path(f.path))}: {escape(warning)}")
    for f in report.failures:
        err.print(f"[red]failed[/] {escape(display_path(f.path))}: {escape(f.reason or '')}")


@app.command()
def ingest(
    paths: Annotated[list[Path], typer.Argument(help="Files or folders to index.")],
    index: IndexOption = None,
    json_out: JsonOption = False,
    chunk_size: Annotated[int | None, typer.Option(help="SHIRABE_CHUNK_SIZE")] = None,
    chunk_overlap: Annotated[int | None, typer.Option(help="SHIRABE_CHUNK_OVERLAP")] = None,
) -> None:
    """Index files and folders; unchanged files are skipped, deleted ones removed."""
    with _errors():
        settings = _settings(index=index, chunk_size=chunk_size, chunk_overlap=chunk_overlap)
        with Shirabe(settings) as shirabe:
            if json_out or not out.is_terminal:
                report = shirabe.ingest(paths)
            else:
                report = _ingest_with_progress(shirabe, paths)
    if json_out:
        out.print_json(json.dumps(_report_json(report), ensure_ascii=False))
        for f in report.failures:
            err.print(f"failed {f.path}: {f.reason}", markup=False, highlight=False)
    else:
        _print_report(report)
    if report.failures:
        raise typer.Exit(1)


def _ingest_with_progress(shirabe: Shirabe, paths: list[Path]) -> IngestReport:
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[file]}", style="dim"),
    )
    with Progress(*columns, console=out, transient=True) as bar:
        task = bar.add_task("indexing", total=None, file="")

        def on_event(event: IngestEvent) -> None:
            if event.kind == "scan":
                bar.update(task, total=event.total)
            elif event.kind == "file" and event.result is not None:
                name = Path(event.result.path).name
                bar.update(task, completed=event.done, file=name)
            elif event.kind == "index":
                bar.update(task, description="building index", file="")

        return shirabe.ingest(paths, progress=on_event)


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="質問 (in Japanese)")],
    index: IndexOption = None,
    json_out: JsonOption = False,
    top_k: TopKOption = None,
    explain: Annotated[
        bool, typer.Option("--explain", help="Show why each passage ranked.")
    ] = False,
    path: PathGlobOption = None,
    meta: MetaOption = None,
    category: CategoryOption = None,
    as_user: AsUserOption = None,
    retriever: RetrieverOption = None,
    understand: UnderstandOption = None,
    stream: StreamOption = False,
    generator: GeneratorOption = None,
    llm_preset: PresetOption = None,
    llm_base_url: BaseUrlOption = None,
    llm_model: ModelOption = None,
) -> None:
    """Answer a question from the indexed documents, with citations."""
    with _errors():
        settings = _settings(
            index=index,
            top_k=top_k,
            retriever=retriever,
            **_llm(generator, llm_preset, llm_base_url, llm_model),
            **_understand(understand),
        )
        with Shirabe(settings) as shirabe:
            _require_index(shirabe)
            filters = _scope(shirabe, as_user, _filters(path, meta, category))
            if stream and not json_out:
                answer = _stream_answer(shirabe, question, filters)
                if answer is None:
                    raise typer.Exit(1)
                _print_answer(answer, explain=explain, text=False)
                return
            answer = shirabe.ask(question, filters=filters)
    if json_out:
        out.print_json(json.dumps(answer_json(answer), ensure_ascii=False))
    else:
        _print_answer(answer, explain=explain)


def _stream_answer(shirabe: Shirabe, question: str, filters: Filters | None) -> Answer | None:
    """Print answer text as it arrives; the finished answer, or ``None`` after an error."""
    wrote = False
    for event in shirabe.ask_stream(question, filters=filters):
        if isinstance(event, TokenEvent):
            out.print(escape(event.text), end="", markup=True, highlight=False)
            out.file.flush()
            wrote = True
        elif isinstance(event, DoneEvent):
            if wrote:
                out.print()
            return event.answer
        elif isinstance(event, ErrorEvent):
            if wrote:
                out.print()
            err.print(f"[bold red]error:[/] {escape(event.message)}")
            return None
    return None


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="検索語 or question")],
    index: IndexOption = None,
    json_out: JsonOption = False,
    top_k: TopKOption = None,
    path: PathGlobOption = None,
    meta: MetaOption = None,
    category: CategoryOption = None,
    as_user: AsUserOption = None,
    retriever: RetrieverOption = None,
    understand: UnderstandOption = None,
) -> None:
    """Show the ranked passages with each retriever's score and rank."""
    with _errors():
        settings = _settings(
            index=index, top_k=top_k, retriever=retriever, **_understand(understand)
        )
        with Shirabe(settings) as shirabe:
            _require_index(shirabe)
            hits = shirabe.search(
                query, filters=_scope(shirabe, as_user, _filters(path, meta, category))
            )
    if json_out:
        out.print_json(json.dumps([_hit_json(h) for h in hits], ensure_ascii=False))
    elif not hits:
        out.print("[yellow]該当なし (no hits)[/]")
    else:
        _print_hits(hits, explain=True)


@app.command()
def chat(
    index: IndexOption = None,
    top_k: TopKOption = None,
    explain: Annotated[bool, typer.Option("--explain")] = False,
    as_user: AsUserOption = None,
    understand: UnderstandOption = None,
    generator: GeneratorOption = None,
    llm_preset: PresetOption = None,
    llm_base_url: BaseUrlOption = None,
    llm_model: ModelOption = None,
) -> None:
    """Ask questions interactively, answers streamed as they are written; exit, quit or
    Ctrl-C to leave."""
    with _errors():
        settings = _settings(
            index=index,
            top_k=top_k,
            **_llm(generator, llm_preset, llm_base_url, llm_model),
            **_understand(understand),
        )
        with Shirabe(settings) as shirabe:
            _require_index(shirabe)
            out.print("[bold]調べ shirabe[/] 質問をどうぞ (exit / quit / Ctrl-C で終了)")
            while True:
                try:
                    question = out.input("[bold cyan]質問> [/]").strip()
                except (EOFError, KeyboardInterrupt):
                    out.print()
                    break
                if question.lower() in {"exit", "quit", ":q", "終了"}:
                    break
                if not question:
                    continue
                try:
                    answer = _stream_answer(shirabe, question, _scope(shirabe, as_user, None))
                except KeyboardInterrupt:
                    out.print()
                    continue
                if answer is not None:
                    _print_answer(answer, explain=explain, text=False)
                out.print()


@app.command()
def status(index: IndexOption = None, json_out: JsonOption = False) -> None:
    """Files, chunks, model, index size, last ingest and failed files."""
    with _errors(), Shirabe(_settings(index=index)) as shirabe:
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


@app.command()
def migrate(
    index: IndexOption = None,
    database: Annotated[
        str | None,
        typer.Option(
            "--database", help="postgresql://… (SHIRABE_DATABASE_URL).", show_default=False
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
    settings = _settings(index=index, database_url=database)
    copied = 0
    with _errors():
        if settings.database_url:
            from shirabe.stores.postgres import MIGRATIONS, PostgresStore
            from shirabe.stores.postgres import migrate as run_migrations
            from shirabe.stores.sqlite import SQLiteStore

            applied = run_migrations(settings.database_url)
            latest = len(MIGRATIONS)
            if embeddings_from is not None:
                if not (embeddings_from / "index.sqlite3").is_file():
                    raise ConfigurationError(f"{embeddings_from}: no index here (index.sqlite3)")
                store = PostgresStore(settings.database_url)
                try:
                    for model, vectors in SQLiteStore.embedding_cache(embeddings_from):
                        store.put_embeddings(model, vectors)
                        copied += len(vectors)
                finally:
                    store.close()
        else:
            if embeddings_from is not None:
                raise ConfigurationError(
                    "--embeddings-from copies into PostgreSQL: give --database or "
                    "SHIRABE_DATABASE_URL"
                )
            from shirabe.stores.sqlite import MIGRATIONS as SQLITE_MIGRATIONS
            from shirabe.stores.sqlite import SQLiteStore

            before = SQLiteStore.schema_version(settings.home)
            SQLiteStore(settings.home).close()
            latest = len(SQLITE_MIGRATIONS)
            applied = list(range(before + 1, latest + 1))
    if json_out:
        out.print_json(json.dumps({"applied": applied, "version": latest, "embeddings": copied}))
        return
    if applied:
        out.print(f"applied migrations {', '.join(map(str, applied))}; schema version {latest}")
    else:
        out.print(f"schema version {latest}: up to date")
    if embeddings_from is not None:
        out.print(f"copied {copied:,} cached embeddings from {escape(str(embeddings_from))}")


@app.command()
def remove(
    path: Annotated[Path, typer.Argument(help="A file or folder to drop from the index.")],
    index: IndexOption = None,
) -> None:
    """Remove a file (or every file under a folder) from the index."""
    with _errors(), Shirabe(_settings(index=index)) as shirabe:
        removed = shirabe.remove(path)
    if removed == 0:
        err.print(f"[red]not in the index:[/] {escape(str(path))}")
        raise typer.Exit(1)
    out.print(f"removed {removed} file(s)")


REGRESSION_EXIT = 3


@app.command("eval")
def eval_cases(
    cases_file: Annotated[
        Path, typer.Argument(help="YAML case file, e.g. eval/sample_docs.yaml.", show_default=False)
    ],
    index: IndexOption = None,
    ingest_dirs: Annotated[
        list[Path] | None,
        typer.Option("--ingest", help="Ingest this folder first (incremental; repeatable)."),
    ] = None,
    out_file: Annotated[
        Path | None, typer.Option("--out", help="Write the metrics as a baseline JSON file.")
    ] = None,
    against: Annotated[
        Path | None,
        typer.Option(
            "--against",
            help="Compare with a baseline JSON; exit code 3 when a metric drops beyond "
            "--tolerance (latency never gates).",
        ),
    ] = None,
    tolerance: Annotated[
        float, typer.Option("--tolerance", min=0.0, help="Allowed absolute drop per metric.")
    ] = evaluation.DEFAULT_TOLERANCE,
    json_out: JsonOption = False,
    top_k: TopKOption = None,
    retriever: RetrieverOption = None,
    understand: UnderstandOption = None,
    generator: GeneratorOption = None,
    llm_preset: PresetOption = None,
    llm_base_url: BaseUrlOption = None,
    llm_model: ModelOption = None,
) -> None:
    """Score answers against a case file: retrieval hit@k and MRR of the expected source,
    answer containment, refusal precision and recall, latency p50/p95.

    Exit codes: 0 passed, 1 error, 2 invalid setting, 3 regression against --against.
    """
    with _errors():
        cases = evaluation.load_cases(cases_file)
        baseline = _read_baseline(against) if against else None
        settings = _settings(
            index=index,
            top_k=top_k,
            retriever=retriever,
            **_llm(generator, llm_preset, llm_base_url, llm_model),
            **_understand(understand),
        )
        with Shirabe(settings) as shirabe:
            if ingest_dirs:
                report = shirabe.ingest(ingest_dirs)
                for f in report.failures:
                    err.print(
                        f"[red]failed[/] {escape(display_path(f.path))}: {escape(f.reason or '')}"
                    )
            _require_index(shirabe)
            if json_out or not out.is_terminal:
                results = evaluation.run(shirabe, cases)
            else:
                results = _eval_with_progress(shirabe, cases)
            document = evaluation.report(
                results, evaluation.run_settings(shirabe), show_path=display_path
            )
        if out_file is not None:
            try:
                out_file.write_text(
                    json.dumps(document, ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
                )
            except OSError as exc:
                raise ShirabeError(f"cannot write {out_file}: {exc.strerror or exc}") from exc
    rows = evaluation.compare(baseline, document, tolerance) if baseline else []
    ok = evaluation.passed(rows)
    if json_out:
        payload = dict(document)
        if baseline is not None:
            payload["comparison"] = [asdict(r) for r in rows]
            payload["newly_failing"] = evaluation.newly_failing(baseline, document)
            payload["passed"] = ok
        out.print_json(json.dumps(payload, ensure_ascii=False))
    else:
        _print_eval(document, results)
        if baseline is not None:
            _print_comparison(rows, evaluation.newly_failing(baseline, document), ok, tolerance)
        if out_file is not None:
            out.print(f"[dim]baseline written to {escape(str(out_file))}[/]")
    if not ok:
        raise typer.Exit(REGRESSION_EXIT)


BATCH_FAILED_EXIT = 3
INTERRUPTED_EXIT = 130


@app.command("batch")
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
    rationales_file: Annotated[
        Path | None,
        typer.Option(
            "--rationales",
            help="Also write the passages behind each answer (id, rank, file, page, sheet, "
            "row, slide, heading path, score, text).",
        ),
    ] = None,
    index: IndexOption = None,
    json_out: JsonOption = False,
    top_k: TopKOption = None,
    path: PathGlobOption = None,
    meta: MetaOption = None,
    category: CategoryOption = None,
    as_user: AsUserOption = None,
    retriever: RetrieverOption = None,
    understand: UnderstandOption = None,
    generator: GeneratorOption = None,
    llm_preset: PresetOption = None,
    llm_base_url: BaseUrlOption = None,
    llm_model: ModelOption = None,
) -> None:
    """Answer every question of a CSV file into a predictions CSV.

    Resumable: ids already answered in --out are skipped and each answer is saved as soon as it
    is written, so after Ctrl-C or a crash just run the same command again. A question that fails
    (e.g. the model server is down) gets an empty answer and an error, the run goes on, and the
    next run retries it.

    Exit codes: 0 every question answered or refused, 1 error (bad input, no index), 2 invalid
    setting, 3 some questions failed (see the error column; rerun to retry), 130 interrupted.
    """
    with _errors():
        questions = batching.read_questions(questions_file)
        settings = _settings(
            index=index,
            top_k=top_k,
            retriever=retriever,
            **_llm(generator, llm_preset, llm_base_url, llm_model),
            **_understand(understand),
        )
        with Shirabe(settings) as shirabe:
            _require_index(shirabe)
            filters = _scope(shirabe, as_user, _filters(path, meta, category))
            args = (shirabe, questions, out_file, rationales_file)
            if json_out or not out.is_terminal:
                summary = batching.run(*args, filters=filters, show_path=display_path)
            else:
                summary = _batch_with_progress(*args, filters=filters)
    if json_out:
        out.print_json(json.dumps(summary.as_dict(), ensure_ascii=False))
    else:
        _print_batch(summary, out_file, rationales_file)
    if summary.interrupted:
        raise typer.Exit(INTERRUPTED_EXIT)
    if summary.failed:
        raise typer.Exit(BATCH_FAILED_EXIT)


def _batch_with_progress(
    shirabe: Shirabe,
    questions: list[batching.Question],
    out_file: Path,
    rationales_file: Path | None,
    *,
    filters: Filters | None,
) -> batching.Summary:
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[question]}", style="dim"),
    )
    with Progress(*columns, console=out, transient=True) as bar:
        task = bar.add_task("answering", total=None, question="")

        def on_start(total: int) -> None:
            bar.update(task, total=total)

        def on_row(result: batching.RowResult) -> None:
            label = result.id if result.outcome != "failed" else f"{result.id} (failed)"
            bar.update(task, advance=1, question=label)

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


def _print_batch(summary: batching.Summary, out_file: Path, rationales_file: Path | None) -> None:
    per = summary.seconds_per_question
    pace = f"{per:.2f} s/question" if per is not None else "—"
    out.print(
        f"回答 answered [green]{summary.answered}[/] · 回答不能 refused [yellow]"
        f"{summary.refused}[/] · 失敗 failed [red]{summary.failed}[/] · "
        f"スキップ skipped {summary.skipped}  ({pace})"
    )
    for failure in summary.failures:
        err.print(f"[red]failed[/] {escape(failure.id)}: {escape(failure.error)}")
    written = escape(str(out_file))
    if rationales_file is not None:
        written += f", {escape(str(rationales_file))}"
    out.print(f"[dim]written to {written}[/]")
    if summary.interrupted:
        err.print(
            f"[yellow]interrupted[/]: {summary.remaining} questions left; "
            "run the same command again to continue"
        )
    elif summary.failed:
        err.print("[yellow]run the same command again to retry the failed questions[/]")


def _read_baseline(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ShirabeError(f"cannot read baseline {path}: {exc.strerror or exc}") from exc
    except ValueError as exc:
        raise ShirabeError(f"{path}: not valid JSON ({exc})") from exc
    return evaluation.check_baseline(data, str(path))


def _eval_with_progress(
    shirabe: Shirabe, cases: list[evaluation.Case]
) -> list[evaluation.CaseResult]:
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[case]}", style="dim"),
    )
    with Progress(*columns, console=out, transient=True) as bar:
        task = bar.add_task("asking", total=len(cases), case="")

        def on_case(result: evaluation.CaseResult) -> None:
            bar.update(task, advance=1, case=result.id)

        return evaluation.run(shirabe, cases, on_case=on_case)


def _figure(metric: str, value: float | None) -> str:
    if value is None:
        return "—"
    if metric.rsplit(".", 1)[-1] in evaluation.LATENCY_METRICS:
        return f"{value * 1000:.0f} ms"
    return f"{value:.3f}"


def _print_eval(document: dict[str, Any], results: list[evaluation.CaseResult]) -> None:
    metrics: dict[str, float | None] = document["metrics"]
    by_kind: dict[str, dict[str, float | None]] = document["by_kind"]
    c = document["counts"]
    table = Table(header_style="bold", title=f"{c['cases']} cases")
    table.add_column("metric")
    table.add_column("all", justify="right")
    for kind in by_kind:
        n = sum(1 for r in results if r.kind == kind)
        table.add_column(f"{kind} ({n})", justify="right")
    for metric in evaluation.METRICS:
        table.add_row(
            metric,
            _figure(metric, metrics[metric]),
            *(_figure(metric, by_kind[k][metric]) for k in by_kind),
        )
    out.print(table)
    out.print(
        f"[dim]retrieval over {c['with_source']} cases with an expected source · containment "
        f"over {c['with_answer']} answerable cases · {c['expect_refusal']} refusal cases[/]"
    )
    failing = [r for r in results if r.problems]
    shown = {c["id"]: c["problems"] for c in document["cases"]}
    if not failing:
        out.print("[green]every case passed[/]")
        return
    fails = Table(header_style="bold", title=f"{len(failing)} cases with problems")
    fails.add_column("case")
    fails.add_column("kind")
    fails.add_column("rank", justify="right")
    fails.add_column("why", overflow="fold")
    fails.add_column("answer", overflow="fold")
    for r in failing:
        snippet = r.answer.replace("\n", " ")
        snippet = snippet[:60] + ("…" if len(snippet) > 60 else "")
        why = "; ".join(shown[r.id])
        fails.add_row(
            escape(r.id),
            escape(r.kind),
            str(r.rank) if r.rank is not None else "—",
            escape(why),
            escape(snippet),
        )
    out.print(fails)


def _print_comparison(
    rows: list[evaluation.Comparison], newly: list[str], ok: bool, tolerance: float
) -> None:
    styles = {"worse": "bold red", "better": "green", "ok": "", "info": "dim", "n/a": "dim"}
    table = Table(header_style="bold", title=f"against baseline (tolerance {tolerance:g})")
    for name in ("metric", "baseline", "now", "delta", "verdict"):
        table.add_column(name, justify="left" if name in {"metric", "verdict"} else "right")
    for row in rows:
        if "." in row.metric and not row.delta:
            continue  # per-kind figures are shown only when they moved
        delta = "—"
        if row.delta is not None:
            delta = _figure(row.metric, row.delta)
            delta = delta if delta.startswith("-") else "+" + delta
        style = styles[row.verdict]
        verdict = f"[{style}]{row.verdict}[/]" if style else row.verdict
        table.add_row(
            row.metric,
            _figure(row.metric, row.baseline),
            _figure(row.metric, row.now),
            delta,
            verdict,
        )
    out.print(table)
    if newly:
        out.print(f"[yellow]newly failing cases:[/] {escape(', '.join(newly))}")
    if ok:
        out.print("[green]no regression[/]")
    else:
        worse = ", ".join(r.metric for r in rows if r.verdict == "worse")
        out.print(f"[bold red]regression:[/] {escape(worse)} dropped by more than {tolerance:g}")


def _require_index(shirabe: Shirabe) -> None:
    if shirabe.status().files == 0:
        raise ShirabeError(
            f"the index in {shirabe.settings.home} is empty; run `shirabe ingest <folder>` first"
        )


@app.command()
def serve(
    folders: Annotated[
        list[Path] | None,
        typer.Argument(help="Folders to ingest first and serve (reindex ingests them again)."),
    ] = None,
    index: IndexOption = None,
    host: Annotated[str | None, typer.Option("--host", help="Address (SHIRABE_HOST).")] = None,
    port: Annotated[int | None, typer.Option("--port", help="Port (SHIRABE_PORT).")] = None,
    anonymous: Annotated[
        str | None,
        typer.Option("--anonymous", help="off, localhost or on (SHIRABE_ANONYMOUS)."),
    ] = None,
    generator: GeneratorOption = None,
    llm_preset: PresetOption = None,
    llm_base_url: BaseUrlOption = None,
    llm_model: ModelOption = None,
) -> None:
    """Serve the HTTP API (OpenAPI at /docs)."""
    with _errors():
        settings = _settings(
            index=index,
            host=host,
            port=port,
            anonymous=anonymous,
            **_llm(generator, llm_preset, llm_base_url, llm_model),
        )
        import uvicorn

        from shirabe.server.app import create_app

        shirabe = Shirabe(settings)
        if folders:
            report = _ingest_with_progress(shirabe, folders)
            _print_report(report)
        api = create_app(shirabe, roots=folders or [])
        err.print(f"shirabe: http://{settings.host}:{settings.port}/  (API docs: /docs)")
        uvicorn.run(api, host=settings.host, port=settings.port, log_level="warning")


users_app = typer.Typer(help="Users, their groups (departments) and the admin role.")
tokens_app = typer.Typer(help="API tokens: created once, shown once, stored hashed.")
app.add_typer(users_app, name="users")
app.add_typer(tokens_app, name="tokens")

GroupOption = Annotated[
    list[str] | None, typer.Option("--group", "-g", help="A group of the user (repeatable).")
]


def _user_json(user: User) -> dict[str, Any]:
    return {"name": user.name, "groups": list(user.groups), "admin": user.admin}


@users_app.command("add")
def users_add(
    name: Annotated[str, typer.Argument(help="User name.")],
    group: GroupOption = None,
    admin: Annotated[bool, typer.Option("--admin", help="May read and manage everything.")] = False,
    index: IndexOption = None,
) -> None:
    """Add a user."""
    with _errors(), Shirabe(_settings(index=index)) as shirabe:
        user = shirabe.accounts.add_user(name, group or [], admin=admin)
    out.print(
        f"added {escape(user.name)}: groups {', '.join(user.groups) or '-'}"
        + (" (admin)" if user.admin else "")
    )


@users_app.command("set")
def users_set(
    name: Annotated[str, typer.Argument(help="User name.")],
    group: GroupOption = None,
    admin: Annotated[
        bool | None, typer.Option("--admin/--no-admin", help="Grant or take the admin role.")
    ] = None,
    index: IndexOption = None,
) -> None:
    """Replace a user's groups (with --group) or change the admin role."""
    with _errors(), Shirabe(_settings(index=index)) as shirabe:
        user = shirabe.accounts.update_user(name, groups=group, admin=admin)
    out.print_json(json.dumps(_user_json(user), ensure_ascii=False))


@users_app.command("list")
def users_list(index: IndexOption = None, json_out: JsonOption = False) -> None:
    """List users and their groups."""
    with _errors(), Shirabe(_settings(index=index)) as shirabe:
        users = shirabe.accounts.list_users()
    if json_out:
        out.print_json(json.dumps([_user_json(u) for u in users], ensure_ascii=False))
        return
    table = Table(header_style="bold")
    for column in ("user", "groups", "admin"):
        table.add_column(column)
    for u in users:
        table.add_row(escape(u.name), escape(", ".join(u.groups)), "yes" if u.admin else "")
    out.print(table)


@users_app.command("remove")
def users_remove(
    name: Annotated[str, typer.Argument(help="User name.")], index: IndexOption = None
) -> None:
    """Remove a user and revoke their tokens."""
    with _errors(), Shirabe(_settings(index=index)) as shirabe:
        shirabe.accounts.remove_user(name)
    out.print(f"removed {escape(name)}")


@tokens_app.command("create")
def tokens_create(
    user: Annotated[str, typer.Argument(help="The user the token signs in as.")],
    label: Annotated[str, typer.Option("--label", help="What the token is for.")] = "",
    index: IndexOption = None,
) -> None:
    """Create an API token; it is printed once and cannot be shown again."""
    with _errors(), Shirabe(_settings(index=index)) as shirabe:
        info, secret = shirabe.accounts.create_token(user, label)
    err.print(f"token {info.id} for {escape(user)} (store it now; it is not shown again):")
    print(secret)


@tokens_app.command("list")
def tokens_list(
    user: Annotated[str | None, typer.Argument(help="Only this user's tokens.")] = None,
    index: IndexOption = None,
    json_out: JsonOption = False,
) -> None:
    """List tokens (never their secrets)."""
    with _errors(), Shirabe(_settings(index=index)) as shirabe:
        tokens = shirabe.accounts.list_tokens(user)
    if json_out:
        out.print_json(json.dumps([asdict(t) for t in tokens], ensure_ascii=False))
        return
    table = Table(header_style="bold")
    for column in ("id", "user", "label", "created", "last used", "revoked"):
        table.add_column(column)
    for t in tokens:
        table.add_row(
            str(t.id),
            escape(t.user),
            escape(t.label),
            t.created_at,
            t.last_used_at or "",
            "yes" if t.revoked else "",
        )
    out.print(table)


@tokens_app.command("revoke")
def tokens_revoke(
    token_id: Annotated[int, typer.Argument(help="Token id (see tokens list).")],
    index: IndexOption = None,
) -> None:
    """Revoke a token: it stops working at once."""
    with _errors(), Shirabe(_settings(index=index)) as shirabe:
        shirabe.accounts.revoke_token(token_id)
    out.print(f"revoked token {token_id}")


def main() -> None:
    logging.basicConfig(
        level=os.environ.get("SHIRABE_LOG_LEVEL", "WARNING").upper(),
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    app()
