"""``shirabe config`` prints every setting, section by section, with where its value came from
(default, .env file, environment, command line), a deprecated name as such, and no secret."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from shirabe.cli import app
from shirabe.settings import SECTIONS, Settings

runner = CliRunner()


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The working folder, whose .env the settings read."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text(
        "SHIRABE_RETRIEVAL__FUSION=rrf\n"
        'SHIRABE_INGEST__PASSWORDS={"見積*.pdf": "pdf-secret"}\n'
        "SHIRABE_LLM_API_KEY=sk-key-secret\n",
        encoding="utf-8",
    )
    return tmp_path


ENV = {
    "SHIRABE_INGEST__CHUNK_SIZE": "600",
    "SHIRABE_TOP_K": "8",  # the old name of SHIRABE_RETRIEVAL__TOP_K
    "SHIRABE_STORE__DATABASE_URL": "postgresql://shirabe:db-secret@db.example/shirabe",
}


def shown(*args: str) -> dict[str, Any]:
    result = runner.invoke(app, ["config", "--json", *args], env=ENV)
    assert result.exit_code == 0, result.output
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def test_each_value_says_where_it_came_from(folder: Path) -> None:
    document = shown("--retriever", "bm25", "--index", str(folder / "index"))
    retrieval = document["retrieval"]
    assert retrieval["retriever"] == {"value": "bm25", "origin": "command line"}
    assert retrieval["fusion"] == {
        "value": "rrf",
        "origin": ".env file",
        "variable": "SHIRABE_RETRIEVAL__FUSION",
    }
    assert document["ingest"]["chunk_size"] == {
        "value": 600,
        "origin": "environment",
        "variable": "SHIRABE_INGEST__CHUNK_SIZE",
    }
    assert retrieval["top_k"] == {
        "value": 8,
        "origin": "environment",
        "variable": "SHIRABE_TOP_K",
        "deprecated": True,
        "instead": "SHIRABE_RETRIEVAL__TOP_K",
    }
    assert retrieval["candidates"] == {"value": 100, "origin": "default"}
    assert document["home"] == {"value": str(folder / "index"), "origin": "command line"}
    assert document["log_level"] == {"value": "WARNING", "origin": "default"}


def test_a_flag_wins_over_the_environment(folder: Path) -> None:
    assert shown("--top-k", "3")["retrieval"]["top_k"] == {"value": 3, "origin": "command line"}


def test_every_setting_is_listed_by_section(folder: Path) -> None:
    document = shown()
    assert list(document) == list(Settings.model_fields)
    for section, model in SECTIONS.items():
        assert list(document[section]) == list(model.model_fields), section


def test_secrets_are_not_shown(folder: Path) -> None:
    for args in (["--json"], []):
        result = runner.invoke(app, ["config", *args], env=ENV)
        assert result.exit_code == 0, result.output
        for secret in ("pdf-secret", "db-secret", "sk-key-secret"):
            assert secret not in result.output
    document = shown()
    assert document["ingest"]["passwords"]["value"] == {"見積*.pdf": "***"}
    assert (
        document["store"]["database_url"]["value"] == "postgresql://shirabe:***@db.example/shirabe"
    )


def test_the_sign_in_settings_are_shown_and_the_client_secret_is_not(folder: Path) -> None:
    env = ENV | {
        "SHIRABE_SIGN_IN__OIDC_ISSUER": "https://login.example.com/",
        "SHIRABE_SIGN_IN__OIDC_CLIENT_ID": "shirabe",
        "SHIRABE_SIGN_IN__PROXY_ADDRESSES": "10.0.0.5,10.1.0.0/16",
        "SHIRABE_OIDC_CLIENT_SECRET": "oidc-client-secret",
    }
    for args in (["--json"], []):
        result = runner.invoke(app, ["config", *args], env=env)
        assert result.exit_code == 0, result.output
        assert "oidc-client-secret" not in result.output
    sign_in = json.loads(runner.invoke(app, ["config", "--json"], env=env).stdout)["sign_in"]
    assert sign_in["oidc_issuer"] == {
        "value": "https://login.example.com",
        "origin": "environment",
        "variable": "SHIRABE_SIGN_IN__OIDC_ISSUER",
    }
    assert sign_in["proxy_addresses"]["value"] == ["10.0.0.5/32", "10.1.0.0/16"]
    assert sign_in["oidc_client_secret_env"] == {
        "value": "SHIRABE_OIDC_CLIENT_SECRET",
        "origin": "default",
    }
    assert sign_in["session_lifetime"] == {"value": "12h", "origin": "default"}


def test_the_text_lists_sections_and_origins(folder: Path) -> None:
    result = runner.invoke(app, ["config"], env=ENV)
    assert result.exit_code == 0, result.output
    lines = [" ".join(line.split()) for line in result.stdout.splitlines()]
    assert "[retrieval]" in lines and "[chat_model]" in lines
    assert "fusion rrf .env file: SHIRABE_RETRIEVAL__FUSION" in lines
    assert (
        "top_k 8 environment: SHIRABE_TOP_K (deprecated name: use SHIRABE_RETRIEVAL__TOP_K)"
        in lines
    )
    assert "chunk_size 600 environment: SHIRABE_INGEST__CHUNK_SIZE" in lines
    assert "retriever hybrid default" in lines
    assert "api_key_env SHIRABE_LLM_API_KEY default" in lines


def test_an_invalid_setting_is_reported(folder: Path) -> None:
    result = runner.invoke(app, ["config"], env={"SHIRABE_RETRIEVAL__TOP_K": "0"})
    assert result.exit_code == 2
    assert "retrieval.top_k" in result.output


@pytest.mark.slow
def test_a_command_says_once_which_old_name_to_rename(folder: Path) -> None:
    env = {**os.environ, "SHIRABE_TOP_K": "3", "SHIRABE_HOME": str(folder / "index")}
    done = subprocess.run(
        [sys.executable, "-m", "shirabe", "status"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("SHIRABE_TOP_K") == 1
    assert (
        "warning: SHIRABE_TOP_K (in the environment) is deprecated and stops working in shirabe "
        "0.3.0: use SHIRABE_RETRIEVAL__TOP_K" in " ".join(done.stderr.split())
    )
