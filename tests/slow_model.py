"""A scripted stand-in for an OpenAI-compatible model server that streams a long answer
slowly and records how far it got: only it can tell whether shirabe stopped asking when the
asker hung up. Real model servers are tested in tests/llm."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

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


@contextmanager
def slow_model() -> Iterator[str]:
    """A fresh SlowModel serving on a free port; its base URL (``.../v1``)."""
    SlowModel.sent, SlowModel.finished = 0, False
    SlowModel.hung_up.clear()
    server = ThreadingHTTPServer(("127.0.0.1", 0), SlowModel)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
