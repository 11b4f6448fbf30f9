"""The ``shirabe`` application: its commands, registered in the order ``--help`` lists them."""

from __future__ import annotations

import logging
import sys
import warnings
from typing import TextIO

import typer
from pydantic import ValidationError
from rich.markup import escape

from shirabe.cli import (
    accounts,
    answerer,
    answers,
    config,
    enrich,
    evaluate,
    feedback,
    index,
    serve,
    watch,
)
from shirabe.cli.render import err
from shirabe.errors import ShirabeError
from shirabe.settings import Settings, SettingsDeprecationWarning

app = typer.Typer(
    help="調べ shirabe: 日本語ドキュメントの検索と質問応答 (offline)",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command()(index.ingest)
app.command()(index.worker)
app.command()(answers.ask)
app.command()(answers.search)
app.command()(answers.chat)
app.command()(enrich.enrich)
app.command()(index.status)
app.command()(index.migrate)
app.command()(index.remove)
app.command()(index.root)
app.command()(index.audit)
app.command("eval")(evaluate.eval_cases)
app.command("batch")(evaluate.batch_answer)
app.command()(serve.serve)
app.command()(serve.mcp)
app.command()(watch.watch)
app.command()(config.config)

users_app = typer.Typer(help="Users, their groups (departments) and the admin role.")
users_app.command("add")(accounts.users_add)
users_app.command("set")(accounts.users_set)
users_app.command("list")(accounts.users_list)
users_app.command("remove")(accounts.users_remove)
tokens_app = typer.Typer(help="API tokens: created once, shown once, stored hashed.")
tokens_app.command("create")(accounts.tokens_create)
tokens_app.command("list")(accounts.tokens_list)
tokens_app.command("revoke")(accounts.tokens_revoke)
feedback_app = typer.Typer(help="👍 / 👎 given on answers, and their export as eval cases.")
feedback_app.command("list")(feedback.feedback_list)
feedback_app.command("export")(feedback.feedback_export)
app.add_typer(users_app, name="users")
app.add_typer(tokens_app, name="tokens")
answerer_app = typer.Typer(help="The learned answer stage: retrain it and compare.")
answerer_app.command("train")(answerer.answerer_train)
app.add_typer(feedback_app, name="feedback")
app.add_typer(answerer_app, name="answerer")


def main() -> None:
    logging.basicConfig(
        level=log_level(), format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr
    )
    show_deprecated_settings()
    app()


def show_deprecated_settings() -> None:
    """A setting given by its old name is said once, on stderr, with its new name."""
    warnings.simplefilter("default", SettingsDeprecationWarning)
    shown = warnings.showwarning

    def show(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: TextIO | None = None,
        line: str | None = None,
    ) -> None:
        if issubclass(category, SettingsDeprecationWarning):
            err.print(f"[yellow]warning:[/] {escape(str(message))}")
        else:
            shown(message, category, filename, lineno, file, line)

    warnings.showwarning = show


def log_level() -> str:
    """The ``log_level`` setting (``SHIRABE_LOG_LEVEL``); ``WARNING`` while the settings are
    not valid (the command then says why)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the command warns of what its settings hold
        try:
            return Settings().log_level
        except (ValidationError, ShirabeError):
            return "WARNING"
