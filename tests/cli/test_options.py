"""Options shared by several commands are declared once (option groups) and mean the same
everywhere; checked on the real Typer application, without running a command."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import typer
from typer.main import get_command
from typer.testing import CliRunner

from shirabe.cli import app
from shirabe.cli.options import ModelOptions, RetrievalOptions, ScopeOptions, with_options

RETRIEVAL = [
    "--top-k",
    "--path",
    "--meta",
    "--category",
    "--as-user",
    "--retriever",
    "--understand",
]
MODEL = ["--generator", "--llm-preset", "--llm-base-url", "--llm-model"]


def options(command: str) -> list[str]:
    """The command's options, by their first name, in --help order."""
    group: Any = get_command(app)
    found = group.commands[command]
    return [p.opts[0] for p in found.params if p.param_type_name == "option"]


@pytest.mark.parametrize("command", ["ask", "chat", "batch"])
def test_answering_commands_take_the_same_retrieval_filter_and_model_options(
    command: str,
) -> None:
    found = options(command)
    assert [o for o in found if o in RETRIEVAL + MODEL] == RETRIEVAL + MODEL


def test_search_and_eval_take_what_applies_to_them() -> None:
    assert [o for o in options("search") if o in RETRIEVAL + MODEL] == RETRIEVAL
    assert [o for o in options("eval") if o in RETRIEVAL + MODEL] == [
        "--top-k",
        "--retriever",
        "--understand",
        *MODEL,
    ]
    assert [o for o in options("serve") if o in RETRIEVAL + MODEL] == MODEL


def test_a_group_expands_in_place_and_reaches_the_command_built() -> None:
    seen: list[object] = []
    demo = typer.Typer(add_completion=False)

    @demo.command()
    @with_options
    def run(first: str = "a", *, scope: ScopeOptions, last: str = "z", model: ModelOptions) -> None:
        seen.extend([first, scope, last, model])

    command = get_command(demo)
    names = [p.name for p in command.params]
    assert names == [
        "first",
        "path",
        "meta",
        "category",
        "as_user",
        "last",
        *("generator", "llm_preset", "llm_base_url", "llm_model"),
    ]
    args = ["--path", "人事/*", "--category", "人事", "--category", "経理", "--llm-model", "x.gguf"]
    result = CliRunner().invoke(demo, args)
    assert result.exit_code == 0, result.output
    assert seen[0] == "a" and seen[2] == "z"
    assert seen[1] == ScopeOptions(path="人事/*", category=["人事", "経理"])
    assert isinstance(seen[3], ModelOptions)
    assert seen[3].settings() == {
        "generator": "llama",
        "llm_model_path": Path("x.gguf"),
    }


def test_retrieval_options_become_settings() -> None:
    assert RetrievalOptions(retriever="bm25", understand=["keywords,decompose"]).settings() == {
        "retriever": "bm25",
        "keyword_extraction": True,
        "decompose": True,
    }
