"""The commands call what the admin page calls (in-process, a real index): the last admin
stays, each change is in the audit log, ``shirabe audit`` filters it as ``/api/audit`` does,
and ``shirabe remove --failed`` removes failed entries as the page's 削除 does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
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


@pytest.mark.slow
def test_failed_entries_are_removed_as_from_the_page(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "総務").mkdir(parents=True)
    (docs / "総務" / "壊れた議事録.docx").write_bytes(b"PK\x03\x04 not really a document")
    (docs / "総務" / "壊れた集計表.xlsx").write_bytes(b"PK\x03\x04 not a workbook")
    home = ["--index", str(tmp_path / "index")]
    assert runner.invoke(app, ["ingest", str(docs), *home]).exit_code == 1  # two failures
    one = runner.invoke(
        app, ["remove", "--failed", str(docs / "総務" / "壊れた議事録.docx"), *home]
    )
    assert one.exit_code == 0 and "removed 1 file(s)" in one.output
    status = json.loads(runner.invoke(app, ["status", "--json", *home]).stdout)
    assert [Path(f["path"]).name for f in status["failed"]] == ["壊れた集計表.xlsx"]
    again = runner.invoke(
        app, ["remove", "--failed", str(docs / "総務" / "壊れた議事録.docx"), *home]
    )
    assert again.exit_code == 1 and "not a failed document" in again.output
    rest = runner.invoke(app, ["remove", "--failed", *home])
    assert rest.exit_code == 0 and "removed 1 file(s)" in rest.output
    assert json.loads(runner.invoke(app, ["status", "--json", *home]).stdout)["failed"] == []
    deleted = json.loads(
        runner.invoke(app, ["audit", "--json", "--action", "delete", *home]).stdout
    )
    assert [e["detail"] for e in deleted] == ["failed entry removed"] * 2
    assert runner.invoke(app, ["remove", *home]).exit_code == 2  # neither a path nor --failed
