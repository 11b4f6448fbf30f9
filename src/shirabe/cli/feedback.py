"""The ``feedback`` command group: 👍 / 👎 given on answers, and their export as eval cases."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Literal

import typer
from rich.markup import escape
from rich.table import Table

from shirabe.cli.options import IndexOption, JsonOption, errors, make_settings, opened
from shirabe.cli.render import err, out
from shirabe.evaluation.feedback import export_cases, first_line
from shirabe.records import Feedback

RatingOption = Annotated[
    str | None, typer.Option("--rating", help="Only 'up' or only 'down'.", show_default=False)
]


def _given(index: Path | None, rating: str | None) -> list[Feedback]:
    if rating not in (None, "up", "down"):
        err.print(f"[bold red]error:[/] --rating must be 'up' or 'down', not {escape(rating)!r}")
        raise typer.Exit(2)
    chosen: Literal["up", "down"] | None = rating  # type: ignore[assignment]
    with errors(), opened(make_settings(index=index), indexed=False) as shirabe:
        return shirabe.conversations.feedback(rating=chosen)


def feedback_list(
    index: IndexOption = None, rating: RatingOption = None, json_out: JsonOption = False
) -> None:
    """Feedback given on answers, oldest first: who, when, the question and the comment."""
    given = _given(index, rating)
    if json_out:
        rows = [
            {
                "id": f.id,
                "rating": f.rating,
                "owner": f.owner,
                "at": f.at,
                "question": f.turn.question,
                "answer": f.turn.answer,
                "refused": f.turn.refused,
                "comment": f.comment,
            }
            for f in given
        ]
        out.print_json(json.dumps(rows, ensure_ascii=False))
        return
    table = Table("id", "", "when", "who", "question", "answer", "comment", box=None)
    for f in given:
        answer = "(refused)" if f.turn.refused else first_line(f.turn.answer)
        table.add_row(
            str(f.id),
            "👍" if f.rating == "up" else "👎",
            f.at[:16],
            escape(f.owner.removeprefix("user:")[:20]),
            escape(f.turn.question),
            escape(answer),
            escape(f.comment),
        )
    out.print(table)


def feedback_export(
    out_file: Annotated[
        Path | None, typer.Option("--out", help="Write the cases here (default: standard output).")
    ] = None,
    index: IndexOption = None,
    rating: RatingOption = None,
) -> None:
    """Write feedback as evaluation cases that `shirabe eval` reads: a 👍 answer must come
    back, a 👎 one must not."""
    given = _given(index, rating)
    if not given:
        err.print("no feedback to export")
        raise typer.Exit(1)
    text = export_cases(given)
    if out_file is None:
        typer.echo(text, nl=False)
        return
    try:
        out_file.write_text(text, encoding="utf-8")
    except OSError as exc:
        err.print(
            f"[bold red]error:[/] {escape(str(out_file))}: {escape(exc.strerror or str(exc))}"
        )
        raise typer.Exit(1) from exc
    err.print(f"wrote {len(given)} case(s) to {escape(str(out_file))}")
