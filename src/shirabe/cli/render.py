"""How results look in the terminal: answers, passages, ingest reports, evaluations."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from shirabe.engine import Shirabe
from shirabe.evaluation import batch as batching
from shirabe.evaluation.baseline import Comparison
from shirabe.evaluation.metrics import LATENCY_METRICS, METRICS, CaseResult
from shirabe.records import (
    Answer,
    Citation,
    DoneEvent,
    ErrorEvent,
    Filters,
    Hit,
    IngestReport,
    TokenEvent,
    Turn,
    answer_json as serialize_answer,
    format_locator,
)

out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)


def display_path(path: str) -> str:
    """Paths below the working directory are shown relative to it."""
    try:
        return os.path.relpath(path) if Path(path).is_relative_to(Path.cwd()) else path
    except ValueError:
        return path


def citation_label(c: Citation) -> str:
    return c.label(display_path(c.source))


def answer_json(answer: Answer) -> dict[str, Any]:
    """The answer as --json prints it: sources as stored, labels as shown in the terminal."""
    document = serialize_answer(answer)
    for item, citation in zip(document["citations"], answer.citations, strict=True):
        item["label"] = citation_label(citation)
    return document


def print_answer(answer: Answer, *, explain: bool, text: bool = True) -> None:
    """The answer, its citations and (with ``explain``) the evidence; ``text=False`` when
    the text was already streamed."""
    style = "yellow" if answer.refused else "bold"
    if text:
        out.print(f"[{style}]{escape(answer.text)}[/]")
    if answer.standalone:
        out.print(f"[dim]検索した質問: {escape(answer.standalone)}[/]")
    if answer.refused and answer.refusal_reason:
        out.print(f"[dim]理由: {escape(answer.refusal_reason)}[/]")
    if answer.citations:
        out.print()
        out.print("[dim]出典[/]")
        for c in answer.citations:
            out.print(f"  [cyan]\\[{c.number}][/] {escape(citation_label(c))}")
    if explain:
        out.print()
        if answer.confidence is not None:
            out.print(f"[dim]答えが文書にある確率: {answer.confidence:.0%}[/]")
            for name, effect in answer.confidence_factors:
                out.print(f"[dim]  {escape(name)} {effect:+.2f}[/]")
        for search in answer.searches:
            out.print(f"[dim]検索: {escape(search)}[/]")
        print_hits(answer.hits, explain=True)
        timings = ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in answer.timings.items())
        out.print(f"[dim]{timings}[/]")


def print_hits(hits: list[Hit], *, explain: bool) -> None:
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


def stream_answer(
    shirabe: Shirabe, question: str, filters: Filters | None, history: Sequence[Turn] = ()
) -> Answer | None:
    """Print answer text as it arrives; the finished answer, or ``None`` after an error.

    When the finished answer is not what was streamed (a model's reply that did not hold up
    against the passages, replaced by the quoted sentences or a refusal), it is printed after
    a line saying so."""
    wrote = ""
    for event in shirabe.ask_stream(question, filters=filters, history=history):
        if isinstance(event, TokenEvent):
            out.print(escape(event.text), end="", markup=True, highlight=False)
            out.file.flush()
            wrote += event.text
        elif isinstance(event, DoneEvent):
            if wrote:
                out.print()
            if wrote.strip() != event.answer.text.strip():
                if wrote:
                    out.print("[yellow]↑ 確認の結果、次の回答に置き換えます:[/]")
                style = "yellow" if event.answer.refused else None
                out.print(escape(event.answer.text), style=style, highlight=False)
            return event.answer
        elif isinstance(event, ErrorEvent):
            if wrote:
                out.print()
            err.print(f"[bold red]error:[/] {escape(event.message)}")
            return None
    return None


def report_json(report: IngestReport) -> dict[str, Any]:
    return {
        "counts": report.counts,
        "seconds": round(report.seconds, 3),
        "files": [asdict(f) for f in report.files],
    }


def print_failures(report: IngestReport) -> None:
    """The files of an ingest that failed, with their reasons, on stderr."""
    for f in report.failures:
        err.print(f"[red]failed[/] {escape(display_path(f.path))}: {escape(f.reason or '')}")


def print_report(report: IngestReport) -> None:
    c = report.counts
    out.print(
        f"追加 added [green]{c['added']}[/] · 更新 updated [cyan]{c['updated']}[/] · "
        f"削除 removed [magenta]{c['removed']}[/] · 変更なし unchanged {c['unchanged']} · "
        f"失敗 failed [red]{c['failed']}[/]  ({report.seconds:.1f}s)"
    )
    for f in report.files:
        for warning in f.warnings:
            err.print(f"[yellow]warning[/] {escape(display_path(f.path))}: {escape(warning)}")
    print_failures(report)


def print_batch(summary: batching.Summary, out_file: Path, rationales_file: Path | None) -> None:
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


def figure(metric: str, value: float | None) -> str:
    if value is None:
        return "—"
    if metric.rsplit(".", 1)[-1] in LATENCY_METRICS:
        return f"{value * 1000:.0f} ms"
    return f"{value:.3f}"


def print_eval(document: dict[str, Any], results: list[CaseResult]) -> None:
    metrics: dict[str, float | None] = document["metrics"]
    by_kind: dict[str, dict[str, float | None]] = document["by_kind"]
    c = document["counts"]
    table = Table(header_style="bold", title=f"{c['cases']} cases")
    table.add_column("metric")
    table.add_column("all", justify="right")
    for kind in by_kind:
        n = sum(1 for r in results if r.kind == kind)
        table.add_column(f"{kind} ({n})", justify="right")
    for metric in METRICS:
        table.add_row(
            metric,
            figure(metric, metrics[metric]),
            *(figure(metric, by_kind[k][metric]) for k in by_kind),
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


def print_comparison(rows: list[Comparison], newly: list[str], ok: bool, tolerance: float) -> None:
    styles = {"worse": "bold red", "better": "green", "ok": "", "info": "dim", "n/a": "dim"}
    table = Table(header_style="bold", title=f"against baseline (tolerance {tolerance:g})")
    for name in ("metric", "baseline", "now", "delta", "verdict"):
        table.add_column(name, justify="left" if name in {"metric", "verdict"} else "right")
    for row in rows:
        if "." in row.metric and not row.delta:
            continue  # per-kind figures are shown only when they moved
        delta = "—"
        if row.delta is not None:
            delta = figure(row.metric, row.delta)
            delta = delta if delta.startswith("-") else "+" + delta
        style = styles[row.verdict]
        verdict = f"[{style}]{row.verdict}[/]" if style else row.verdict
        table.add_row(
            row.metric,
            figure(row.metric, row.baseline),
            figure(row.metric, row.now),
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
