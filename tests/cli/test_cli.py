"""The command line, in-process and as a subprocess."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from shirabe.cli.app import app

pytestmark = pytest.mark.slow

runner = CliRunner()

DOC = "# 休暇規程\n\n## 申請方法\n\n有給休暇はミナモ勤怠から3営業日前までに申請する。\n"


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "休暇.md").write_text(DOC, encoding="utf-8")
    (folder / "壊れ.txt").write_bytes(b"\x00\x01\x02\xff" * 50)
    return folder


def test_ingest_ask_search_status_remove(docs: Path, tmp_path: Path) -> None:
    index = str(tmp_path / "index")
    result = runner.invoke(app, ["ingest", str(docs), "--index", index, "--json"])
    assert result.exit_code == 1  # one file failed
    report = json.loads(result.stdout)
    assert report["counts"]["added"] == 1
    assert report["counts"]["failed"] == 1
    assert "壊れ.txt" in result.stderr

    result = runner.invoke(app, ["ask", "有給休暇の申請方法は？", "--index", index, "--json"])
    assert result.exit_code == 0, result.stderr
    answer = json.loads(result.stdout)
    assert "ミナモ勤怠" in answer["answer"]
    assert answer["citations"][0]["heading_path"] == ["休暇規程", "申請方法"]

    result = runner.invoke(app, ["ask", "有給休暇の申請方法は？", "--index", index, "--explain"])
    assert result.exit_code == 0
    assert "出典" in result.stdout
    assert "bm25" in result.stdout

    result = runner.invoke(app, ["search", "ミナモ勤怠", "--index", index, "--json"])
    assert result.exit_code == 0
    hits = json.loads(result.stdout)
    assert hits[0]["ranks"]["bm25"] == 1

    result = runner.invoke(app, ["status", "--index", index, "--json"])
    status = json.loads(result.stdout)
    assert status["files"] == 1
    assert status["failed"][0]["error"]

    result = runner.invoke(app, ["remove", str(docs / "休暇.md"), "--index", index])
    assert result.exit_code == 0
    result = runner.invoke(app, ["ask", "有給休暇", "--index", index])
    assert result.exit_code == 1
    assert "empty" in result.stderr


def test_errors_go_to_stderr_with_nonzero_exit(tmp_path: Path) -> None:
    result = runner.invoke(app, ["ask", "質問", "--index", str(tmp_path / "none")])
    assert result.exit_code == 1
    assert "shirabe ingest" in result.stderr
    result = runner.invoke(app, ["ingest", str(tmp_path / "missing"), "--index", str(tmp_path)])
    assert result.exit_code == 1
    assert "no such file" in result.stderr


def test_invalid_setting_is_reported(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["search", "x", "--index", str(tmp_path), "--retriever", "nonsense"]
    )
    assert result.exit_code == 2
    assert "retriever" in result.stderr


def test_chat_loop_exits(docs: Path, tmp_path: Path) -> None:
    index = str(tmp_path / "index")
    runner.invoke(app, ["ingest", str(docs), "--index", index])
    result = runner.invoke(app, ["chat", "--index", index], input="有給休暇の申請方法は？\nexit\n")
    assert result.exit_code == 0
    assert "ミナモ勤怠" in result.stdout


def test_module_entry_point_as_subprocess(docs: Path, tmp_path: Path) -> None:
    env = {**os.environ, "SHIRABE_HOME": str(tmp_path / "index")}
    ingest = subprocess.run(
        [sys.executable, "-m", "shirabe", "ingest", str(docs)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert ingest.returncode == 1
    assert "壊れ.txt" in ingest.stderr
    ask = subprocess.run(
        [sys.executable, "-m", "shirabe", "ask", "有給休暇の申請方法は？"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert ask.returncode == 0, ask.stderr
    assert "ミナモ勤怠" in ask.stdout


def test_stream_and_model_server_errors(docs: Path, tmp_path: Path) -> None:
    index = str(tmp_path / "index")
    runner.invoke(app, ["ingest", str(docs), "--index", index])
    question = "有給休暇の申請方法は？"

    result = runner.invoke(app, ["ask", question, "--index", index, "--stream"])
    assert result.exit_code == 0, result.stderr
    assert "ミナモ勤怠" in result.stdout
    assert "出典" in result.stdout

    result = runner.invoke(app, ["ask", question, "--index", index, "--generator", "openai"])
    assert result.exit_code == 1
    assert "needs a server" in result.stderr
    assert "Traceback" not in result.output

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    env = {"SHIRABE_CHAT_MODEL__RETRIES": "0", "SHIRABE_CHAT_MODEL__MODEL": "any"}
    for extra in ([], ["--stream"]):
        args = ["ask", question, "--index", index, "--llm-base-url", url, *extra]
        result = runner.invoke(app, args, env=env)
        assert result.exit_code == 1, result.output
        assert "cannot connect" in result.stderr
        assert url in result.stderr


@pytest.mark.parametrize(
    "command", [["search", ""], ["search", "？？？"], ["ask", "' OR 1=1 --"], ["ask", "😀😀"]]
)
def test_nothing_to_search_for_is_refused_with_nonzero_exit(
    docs: Path, tmp_path: Path, command: list[str]
) -> None:
    index = str(tmp_path / "index")
    runner.invoke(app, ["ingest", str(docs), "--index", index])
    result = runner.invoke(app, [*command, "--index", index])
    assert result.exit_code == 1, result.output
    assert "nothing to search for" in result.stderr
    assert "Traceback" not in result.output


def test_root_and_audit(docs: Path, tmp_path: Path) -> None:
    index = str(tmp_path / "index")
    runner.invoke(app, ["ingest", str(docs), "--index", index])
    result = runner.invoke(app, ["root", "--index", index])
    assert result.stdout.strip() == str(docs)
    outside = tmp_path / "other"
    outside.mkdir()
    result = runner.invoke(app, ["ingest", str(outside), "--index", index])
    assert result.exit_code == 1 and "outside the index's document root" in result.stderr
    result = runner.invoke(app, ["root", str(tmp_path), "--index", index, "--json"])
    assert result.exit_code == 1  # the broken file is still a failure of the run
    result = runner.invoke(app, ["root", "--index", index])
    assert result.stdout.strip() == str(tmp_path)
    result = runner.invoke(app, ["remove", str(docs / "休暇.md"), "--index", index])
    assert result.exit_code == 0
    result = runner.invoke(app, ["audit", "--index", index, "--json"])
    entries = json.loads(result.stdout)
    assert [e["action"] for e in entries] == ["delete", "root"]
    assert entries[0]["path"] == str(docs / "休暇.md") and "(local)" in entries[0]["actor"]
