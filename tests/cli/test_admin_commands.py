"""The account commands call what the admin page calls (in-process, a real accounts file, no
model): the last admin stays, each change is in the audit log, and ``shirabe audit`` filters
it as ``/api/audit`` does."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from shirabe.cli.app import app

runner = CliRunner()


def test_the_commands_keep_the_last_admin_and_audit_every_change(tmp_path: Path) -> None:
    home = ["--index", str(tmp_path / "index")]
    assert runner.invoke(app, ["users", "add", "root", "--admin", *home]).exit_code == 0
    assert runner.invoke(app, ["users", "add", "hana", "-g", "hr", *home]).exit_code == 0
    refused = runner.invoke(app, ["users", "remove", "root", *home])
    assert refused.exit_code == 1 and "last admin" in refused.output
    demoted = runner.invoke(app, ["users", "set", "root", "--no-admin", *home])
    assert demoted.exit_code == 1 and "last admin" in demoted.output
    assert runner.invoke(app, ["tokens", "create", "hana", "--expires", "1w", *home]).exit_code == 0
    assert runner.invoke(app, ["users", "remove", "hana", *home]).exit_code == 0
    listed = runner.invoke(app, ["audit", "--json", "--path", "hana", *home])
    entries = json.loads(listed.stdout)
    assert [e["action"] for e in entries] == ["user_remove", "token_create", "user_add"]
    assert all(e["actor"].endswith(" (local)") for e in entries)
    only = runner.invoke(app, ["audit", "--json", "--action", "user_add", *home])
    assert [e["path"] for e in json.loads(only.stdout)] == ["hana", "root"]
    later = runner.invoke(app, ["audit", "--json", "--since", "2999-01-01", *home])
    assert json.loads(later.stdout) == []
