"""The guard of a real `shirabe serve` process, spoken to over a socket as curl or a script
would: an unauthenticated request is answered without its body being sent at all, an oversized
one likewise, a chunked upload is cut off at the limit and nothing of it is indexed, and a
request naming another Host is refused."""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from shirabe.server.process import free_port, running

pytestmark = pytest.mark.slow

BODY_LIMIT = 64 * 1024
FILE_LIMIT = 100_000
WAIT = 30.0
"""Seconds a reply may take before the test fails (a server waiting for a body never sends)."""


@dataclass(frozen=True)
class Server:
    port: int
    token: str
    home: Path


@dataclass(frozen=True)
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    def error(self) -> dict[str, object]:
        found: dict[str, object] = json.loads(self.body)["error"]
        return found


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    base = tmp_path_factory.mktemp("guarded")
    home = base / "index"
    env = dict(
        os.environ,
        SHIRABE_SERVER__ANONYMOUS="off",
        SHIRABE_LIMITS__MAX_REQUEST_BYTES=str(BODY_LIMIT),
        SHIRABE_LIMITS__MAX_FILE_BYTES=str(FILE_LIMIT),
    )

    def cli(*args: str) -> str:
        command = [sys.executable, "-m", "shirabe", *args, "--index", str(home)]
        return subprocess.run(command, capture_output=True, text=True, check=True, env=env).stdout

    cli("users", "add", "root", "--admin")
    token = cli("tokens", "create", "root").strip()
    port = free_port()
    command = [sys.executable, "-m", "shirabe", "serve", "--index", str(home), "--port", str(port)]
    with running(command, f"http://127.0.0.1:{port}/healthz", log=base / "serve.log", env=env):
        yield Server(port, token, home)


def exchange(server: Server, head: str, body: Iterable[bytes] = ()) -> Reply:
    """Send ``head`` (the request line and headers) and as much of ``body`` as the server
    takes before it answers; its reply."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=WAIT) as sock:
        sock.sendall(head.replace("\n", "\r\n").encode() + b"\r\n")
        for chunk in body:
            if select.select([sock], [], [], 0)[0]:
                break  # answered: the rest is not sent
            try:
                sock.sendall(chunk)
            except (BrokenPipeError, ConnectionResetError):
                break
        received = b""
        while b"\r\n\r\n" not in received:
            data = sock.recv(65536)
            assert data, f"the connection closed without a reply: {received!r}"
            received += data
        top, _, rest = received.partition(b"\r\n\r\n")
        lines = top.decode("latin-1").split("\r\n")
        headers = dict(line.lower().split(": ", 1) for line in lines[1:])
        size = int(headers.get("content-length", "0"))
        while len(rest) < size:
            data = sock.recv(65536)
            if not data:
                break
            rest += data
        return Reply(int(lines[0].split()[1]), headers, rest[:size])


def post(path: str, length: int | None, *extra: str) -> str:
    sized = [f"Content-Length: {length}"] if length is not None else []
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", *sized, *extra]
    return "\n".join(lines) + "\n"


def test_a_caller_who_is_not_signed_in_is_answered_before_sending_the_body(
    server: Server,
) -> None:
    head = post("/api/ask", BODY_LIMIT - 1, "Content-Type: application/json")
    reply = exchange(server, head)  # the body is never sent
    assert reply.status == 401 and reply.error()["code"] == "unauthorized"
    wrong = post("/v1/chat/completions", 1000, "Authorization: Bearer shb_wrong")
    assert exchange(server, wrong).status == 401


def test_a_body_over_the_limit_is_refused_before_it_is_sent(server: Server) -> None:
    bearer = f"Authorization: Bearer {server.token}"
    head = post("/api/ask", 60 * 1024 * 1024, bearer, "Content-Type: application/json")
    reply = exchange(server, head)
    assert reply.status == 413 and reply.error()["code"] == "too_large"
    upload = post("/api/documents", FILE_LIMIT + BODY_LIMIT + 1, bearer)
    assert exchange(server, upload).status == 413


def test_a_chunked_upload_is_cut_off_at_the_limit(server: Server) -> None:
    boundary = "processboundary"
    head = post(
        "/api/documents",
        None,
        f"Authorization: Bearer {server.token}",
        f"Content-Type: multipart/form-data; boundary={boundary}",
        "Transfer-Encoding: chunked",
    )
    opening = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="files"; filename="huge.md"\r\n'
        "Content-Type: text/markdown\r\n\r\n# 大きな文書\n\n"
    ).encode()

    def chunks() -> Iterator[bytes]:
        for part in [opening] + [b"x" * 16384] * 400:  # 6.5 MB, never ending in time
            yield f"{len(part):x}\r\n".encode() + part + b"\r\n"

    reply = exchange(server, head, chunks())
    assert reply.status == 413 and reply.error()["code"] == "too_large"
    listed = exchange(
        server,
        "GET /api/documents HTTP/1.1\nHost: 127.0.0.1\n"
        f"Authorization: Bearer {server.token}\nConnection: close\n",
    )
    assert listed.status == 200 and json.loads(listed.body)["total"] == 0
    uploads = server.home / "uploads"
    assert not uploads.exists() or not [p for p in uploads.rglob("*") if p.is_file()]


def test_a_request_naming_another_host_is_refused(server: Server) -> None:
    reply = exchange(server, "GET /api/search?q=x HTTP/1.1\nHost: evil.example.com\n")
    assert reply.status == 421 and reply.error()["code"] == "unknown_host"
    assert reply.headers["x-content-type-options"] == "nosniff"
