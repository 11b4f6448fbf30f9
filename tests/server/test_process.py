"""The API in a real uvicorn process: server-sent events over the wire, and a client that
hangs up stops the answer being written.

The model server here is a scripted stand-in that streams a long answer slowly and records
how far it got, since only it can tell whether shirabe stopped asking; real model servers are
tested in test_llm_server.py.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from shirabe.server.process import free_port, running

from tests.support import ROOT

pytestmark = pytest.mark.slow

TOKENS = 400


class SlowModel(BaseHTTPRequestHandler):
    """Streams TOKENS pieces, 20 ms apart; counts what it managed to send."""

    sent = 0
    finished = False
    hung_up = threading.Event()

    def log_message(self, *_args: Any) -> None:
        pass

    def do_GET(self) -> None:  # /v1/models
        body = json.dumps({"data": [{"id": "slow"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", 0))
        self.rfile.read(length)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        try:
            for i in range(TOKENS):
                chunk = {"choices": [{"delta": {"content": f"語{i}。"}}]}
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.flush()
                type(self).sent += 1
                time.sleep(0.02)
            self.wfile.write(b"data: [DONE]\n\n")
            type(self).finished = True
        except (BrokenPipeError, ConnectionResetError):
            type(self).hung_up.set()


@pytest.fixture
def model() -> Iterator[str]:
    SlowModel.sent, SlowModel.finished = 0, False
    SlowModel.hung_up.clear()
    server = ThreadingHTTPServer(("127.0.0.1", 0), SlowModel)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


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
        "SHIRABE_LLM_RETRIES": "0",
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
