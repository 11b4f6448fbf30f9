"""The API in a real uvicorn process: server-sent events over the wire, and a client that
hangs up stops the answer being written.

The model server here is the scripted stand-in of tests/slow_model.py, since only it can
tell whether shirabe stopped asking.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from shirabe.server.process import free_port, running

from tests.slow_model import TOKENS, SlowModel, slow_model
from tests.support import ROOT

pytestmark = pytest.mark.slow


@pytest.fixture
def model() -> Iterator[str]:
    with slow_model() as url:
        yield url


@pytest.fixture
def api(tmp_path: Path, model: str) -> Iterator[str]:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "規程.md").write_text(
        "# 出張規程\n\n国内出張の日当は3000円とする。\n", encoding="utf-8"
    )
    port = free_port()
    env = {
        **os.environ,
        "SHIRABE_REFUSAL_THRESHOLD": "0",
        "SHIRABE_REFUSAL_UNKNOWN_THRESHOLD": "0",
        "SHIRABE_CHAT_MODEL__RETRIES": "0",
    }
    command = [
        sys.executable, "-m", "shirabe", "serve", str(docs),
        "--index", str(tmp_path / "index"), "--port", str(port), "--anonymous", "on",
        "--llm-base-url", model, "--llm-model", "slow",
    ]  # fmt: skip
    with running(command, f"http://127.0.0.1:{port}/healthz", log=tmp_path / "server.log",
                 env=env, cwd=ROOT, timeout=120):  # fmt: skip
        yield f"http://127.0.0.1:{port}"


def read_events(lines: Iterator[str], stop_after_tokens: int | None = None) -> list[str]:
    kinds: list[str] = []
    for line in lines:
        if line.startswith("event:"):
            kinds.append(line.split(":", 1)[1].strip())
            if stop_after_tokens is not None and kinds.count("token") >= stop_after_tokens:
                break
    return kinds


def test_sse_over_the_wire_and_hanging_up_stops_the_model(api: str) -> None:
    question = {"question": "国内出張の日当はいくらですか？"}
    with httpx.Client(base_url=api, timeout=60) as client:
        with client.stream("POST", "/api/ask/stream", json=question) as response:
            assert response.status_code == 200
            kinds = read_events(response.iter_lines(), stop_after_tokens=5)
        assert kinds[0] == "hits" and kinds.count("token") == 5
        # the client is gone: shirabe must stop reading from the model soon after
        assert SlowModel.hung_up.wait(timeout=10), f"model kept streaming ({SlowModel.sent})"
        assert not SlowModel.finished and SlowModel.sent < TOKENS

        status = client.get("/api/status").json()
        assert status["files"] == 1 and status["llm"]["configured"]
