"""`shirabe tokens create --expires` and the expiry `tokens list` shows (in-process, on a real
accounts file; no model)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from typer.testing import CliRunner

from shirabe.cli.app import app

runner = CliRunner()


def days_from_now(stamp: str) -> float:
    return (datetime.fromisoformat(stamp) - datetime.now(UTC)) / timedelta(days=1)


def test_a_token_made_to_expire_says_so(tmp_path: Path) -> None:
    home = ["--index", str(tmp_path / "index")]
    assert runner.invoke(app, ["users", "add", "hana", *home]).exit_code == 0
    made = runner.invoke(app, ["tokens", "create", "hana", "--expires", "90d", *home])
    assert made.exit_code == 0, made.output
    assert "expires 20" in made.stderr and made.stdout.strip().startswith("shb_")
    assert runner.invoke(app, ["tokens", "create", "hana", "--label", "pc", *home]).exit_code == 0
    listed = runner.invoke(app, ["tokens", "list", "--json", *home])
    expiring, lasting = json.loads(listed.stdout)
    assert round(days_from_now(expiring["expires_at"])) == 90
    assert lasting["expires_at"] is None
    table = runner.invoke(app, ["tokens", "list", *home], env={"COLUMNS": "200"})
    assert "expires" in table.stdout and "never" in table.stdout
    assert expiring["expires_at"] in table.stdout
    for unit in ("12h", "2w"):
        made = runner.invoke(app, ["tokens", "create", "hana", "--expires", unit, *home])
        assert made.exit_code == 0, made.output
    listed = runner.invoke(app, ["tokens", "list", "--json", *home])
    stamps = [t["expires_at"] for t in json.loads(listed.stdout)]
    assert [round(days_from_now(s), 1) for s in stamps[2:]] == [0.5, 14.0]
    wrong = runner.invoke(app, ["tokens", "create", "hana", "--expires", "3 months", *home])
    assert wrong.exit_code == 2 and "12h, 90d or 8w" in wrong.output


def test_the_site_lifetime_is_the_default_and_the_longest(tmp_path: Path) -> None:
    home = ["--index", str(tmp_path / "index")]
    env = {"SHIRABE_SERVER__TOKEN_LIFETIME": "30d"}
    assert runner.invoke(app, ["users", "add", "hana", *home]).exit_code == 0
    made = runner.invoke(app, ["tokens", "create", "hana", *home], env=env)
    assert made.exit_code == 0, made.output
    shorter = runner.invoke(app, ["tokens", "create", "hana", "--expires", "1w", *home], env=env)
    assert shorter.exit_code == 0, shorter.output
    longer = runner.invoke(app, ["tokens", "create", "hana", "--expires", "60d", *home], env=env)
    assert longer.exit_code == 2 and "60d is longer than" in longer.output
    assert "SHIRABE_SERVER__TOKEN_LIFETIME (30d)" in longer.output
    listed = json.loads(runner.invoke(app, ["tokens", "list", "--json", *home]).stdout)
    assert [round(days_from_now(t["expires_at"])) for t in listed] == [30, 7]
