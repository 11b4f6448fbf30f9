"""Commands that answer and search: ask, search, chat."""

from __future__ import annotations

import dataclasses
import json
from typing import Annotated

import typer
from rich.markup import escape

from shirabe.cli.options import (
    IndexOption,
    JsonOption,
    ModelOptions,
    OptionGroup,
    RetrievalOptions,
    ScopeOptions,
    StreamOption,
    TopKOption,
    errors,
    make_settings,
    opened,
    with_options,
)
from shirabe.cli.render import answer_json, err, out, print_answer, print_hits, stream_answer
from shirabe.errors import UnsearchableError
from shirabe.records import Turn, hit_json

_TURNS_KEPT = 6
"""Earlier turns a chat sends with each question."""

ExplainOption = Annotated[bool, typer.Option("--explain", help="Show why each passage ranked.")]


@dataclasses.dataclass
class AnswerOutput(OptionGroup):
    """How an answer is printed: as JSON, with why each passage ranked, or as it is written."""

    json_out: JsonOption = False
    explain: ExplainOption = False
    stream: StreamOption = False


@with_options
def ask(
    question: Annotated[str, typer.Argument(help="質問 (in Japanese)")],
    index: IndexOption = None,
    top_k: TopKOption = None,
    *,
    output: AnswerOutput,
    scope: ScopeOptions,
    retrieval: RetrievalOptions,
    model: ModelOptions,
) -> None:
    """Answer a question from the indexed documents, with citations."""
    json_out, explain, stream = output.json_out, output.explain, output.stream
    with errors(), opened(make_settings(retrieval, model, index=index, top_k=top_k)) as shirabe:
        filters = scope.filters(shirabe)
        if stream and not json_out:
            answer = stream_answer(shirabe, question, filters)
            if answer is None:
                raise typer.Exit(1)
            print_answer(answer, explain=explain, text=False)
            return
        answer = shirabe.ask(question, filters=filters)
    if json_out:
        out.print_json(json.dumps(answer_json(answer), ensure_ascii=False))
    else:
        print_answer(answer, explain=explain)


@with_options
def search(
    query: Annotated[str, typer.Argument(help="検索語 or question")],
    index: IndexOption = None,
    json_out: JsonOption = False,
    top_k: TopKOption = None,
    *,
    scope: ScopeOptions,
    retrieval: RetrievalOptions,
) -> None:
    """Show the ranked passages with each retriever's score and rank."""
    with errors(), opened(make_settings(retrieval, index=index, top_k=top_k)) as shirabe:
        hits = shirabe.search(query, filters=scope.filters(shirabe))
    if json_out:
        out.print_json(json.dumps([hit_json(h) for h in hits], ensure_ascii=False))
    elif not hits:
        out.print("[yellow]該当なし (no hits)[/]")
    else:
        print_hits(hits, explain=True)


@with_options
def chat(
    index: IndexOption = None,
    top_k: TopKOption = None,
    explain: ExplainOption = False,
    *,
    scope: ScopeOptions,
    retrieval: RetrievalOptions,
    model: ModelOptions,
) -> None:
    """Ask questions interactively, answers streamed as they are written; exit, quit or
    Ctrl-C to leave."""
    with errors(), opened(make_settings(retrieval, model, index=index, top_k=top_k)) as shirabe:
        filters = scope.filters(shirabe)
        out.print(
            "[bold]調べ shirabe[/] 質問をどうぞ (exit / quit / Ctrl-C で終了, new で新しい会話)"
        )
        history: list[Turn] = []
        while True:
            try:
                question = out.input("[bold cyan]質問> [/]").strip()
            except (EOFError, KeyboardInterrupt):
                out.print()
                break
            if question.lower() in {"exit", "quit", ":q", "終了"}:
                break
            if question.lower() in {"new", ":new", "新規"}:
                history.clear()
                out.print("[dim]新しい会話[/]")
                continue
            if not question:
                continue
            try:
                answer = stream_answer(shirabe, question, filters, history[-_TURNS_KEPT:])
            except KeyboardInterrupt:
                out.print()
                continue
            except UnsearchableError as exc:  # ask again; the chat goes on
                err.print(f"[yellow]{escape(str(exc))}[/]")
                continue
            if answer is not None:
                print_answer(answer, explain=explain, text=False)
                history.append(Turn(question, answer.text))
            out.print()
