"""The page's sessions over the real app in-process (an empty index, a hashed embedder): an API
token typed into the page becomes a session cookie with the right attributes; every change a
cookie signs in needs its CSRF token, on every route the app has; bearer tokens need none, and a
cookie signs in only the page's API; a session that expired, ended or lost its token signs no
one in; a trusted proxy's headers name the user from its addresses only."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.routing import iter_route_contexts
from fastapi.testclient import TestClient

from shirabe.engine import Shirabe
from shirabe.server.app import create_app
from shirabe.settings import ServerSettings, Settings, SignInSettings

from tests.support import HashedEmbedder

OWN = "http://127.0.0.1:8000"
CHANGES = {"POST", "PUT", "PATCH", "DELETE"}
PROXY = ("10.0.0.5", 40000)


@dataclass
class Served:
    shirabe: Shirabe
    app: FastAPI
    client: TestClient
    tokens: dict[str, str]

    def bearer(self, user: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[user]}"}

    def session(self, user: str = "hana") -> tuple[str, str]:
        """A new session of ``user``, as the page signs in: its cookie and CSRF token."""
        response = self.client.post("/api/session", headers=self.bearer(user))
        assert response.status_code == 200, response.text
        cookie = response.cookies["shirabe_session"]
        self.client.cookies.clear()
        return cookie, response.json()["csrf"]

    def from_address(self, address: tuple[str, int], base_url: str = OWN) -> TestClient:
        return TestClient(self.app, base_url=base_url, client=address)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    groups = tmp_path / "groups.yaml"
    groups.write_text("jinji-all: [hr]\neigyo: [sales]\n", encoding="utf-8")
    settings = Settings(
        home=tmp_path / "index",
        server=ServerSettings(anonymous="off"),
        sign_in=SignInSettings(proxy_addresses=["10.0.0.0/24"], group_map=groups),
    )
    shirabe = Shirabe(settings, embedder=HashedEmbedder())
    tokens = {}
    for name, admin in (("hana", False), ("root", True)):
        shirabe.accounts.add_user(name, ["hr"], admin=admin)
        tokens[name] = shirabe.accounts.create_token(name)[1]
    app = create_app(shirabe)
    with TestClient(app, base_url=OWN) as client:
        yield Served(shirabe, app, client, tokens)
    shirabe.close()


def assert_error(response: Any, status: int, code: str) -> str:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert (error["status"], error["code"]) == (status, code), error
    return str(error["message"])


def carrying(cookie: str) -> dict[str, str]:
    """The header a browser holding ``cookie`` sends."""
    return {"Cookie": f"shirabe_session={cookie}"}


def cookie_attributes(header: str) -> dict[str, str]:
    name_value, *rest = [part.strip() for part in header.split(";")]
    attributes = {"value": name_value.partition("=")[2]}
    for part in rest:
        key, _, value = part.partition("=")
        attributes[key.lower()] = value
    return attributes


def test_a_token_typed_into_the_page_becomes_a_session_cookie(served: Served) -> None:
    client = served.client
    assert client.get("/auth/session").json() == {
        "user": None, "admin": False, "via": None, "csrf": None, "expires_at": None,
        "oidc": False,
    }  # fmt: skip
    signed = client.post("/api/session", headers=served.bearer("hana"))
    assert signed.status_code == 200, signed.text
    body = signed.json()
    assert (body["user"], body["via"], len(body["csrf"])) == ("hana", "session", 64)
    assert served.tokens["hana"] not in signed.text
    cookie = cookie_attributes(signed.headers["set-cookie"])
    assert cookie["value"].startswith("shs_") and cookie["value"] not in signed.text
    assert "httponly" in cookie and cookie["samesite"].lower() == "lax" and cookie["path"] == "/"
    assert "secure" not in cookie  # served over http
    assert 12 * 3600 - 60 < int(cookie["max-age"]) <= 12 * 3600
    assert signed.headers["cache-control"] == "no-store"
    # the cookie alone signs the page in now
    assert client.get("/api/status").json()["user"] == "hana"
    again = client.get("/auth/session").json()
    assert again == body | {"oidc": False}
    entry = served.shirabe.accounts.audit_log(limit=1)[0]
    assert (entry.actor, entry.action, entry.path) == ("hana", "sign_in", "/api/session")
    # a wrong token makes no session, and counts as a failed sign-in
    client.cookies.clear()
    wrong = client.post("/api/session", headers={"Authorization": "Bearer shb_wrong"})
    assert_error(wrong, 401, "unauthorized")
    assert "set-cookie" not in wrong.headers
    assert served.shirabe.accounts.audit_log(limit=1)[0].action == "sign_in_failed"
    # over https, the cookie is sent over https only
    https = served.from_address(("127.0.0.1", 40001), "https://127.0.0.1:8443")
    secure = https.post("/api/session", headers=served.bearer("hana"))
    assert "secure" in cookie_attributes(secure.headers["set-cookie"])


def changing_routes(app: FastAPI) -> list[tuple[str, str]]:
    """Every (method, path) of the app that changes something (routers included), with its
    path parameters filled."""
    found = []
    for route in iter_route_contexts(app.routes):
        if route.path and route.methods:
            path = re.sub(r"\{[^}]+\}", "1", route.path)
            found += [(method, path) for method in sorted(route.methods & CHANGES)]
    return found


def test_every_change_a_cookie_signs_in_needs_its_csrf_token(served: Served) -> None:
    routes = changing_routes(served.app)
    page_api = [(m, p) for m, p in routes if p.startswith("/api/")]
    expected = {
        ("POST", "/api/ask"), ("POST", "/api/ask/stream"), ("POST", "/api/documents"),
        ("DELETE", "/api/documents/1"), ("POST", "/api/reindex"), ("POST", "/api/conversations"),
        ("PATCH", "/api/conversations/1"), ("DELETE", "/api/conversations/1"),
        ("POST", "/api/conversations/1/turns/1/feedback"), ("POST", "/api/session"),
        ("DELETE", "/api/session"),
    }  # fmt: skip
    assert expected <= set(page_api), set(page_api)
    client = served.client
    for method, path in page_api:
        cookie, csrf = served.session("root")
        client.cookies.set("shirabe_session", cookie)
        for wrong in (None, "0" * 64, csrf[:-1], csrf + "0", csrf.upper()):
            sent = {} if wrong is None else {"X-CSRF-Token": wrong}
            refused = client.request(method, path, headers=sent)
            message = assert_error(refused, 403, "csrf")
            assert "X-CSRF-Token" in message, (method, path)
        carried = client.request(method, path, headers={"X-CSRF-Token": csrf})
        assert carried.status_code >= 200 and carried.status_code != 401, (method, path)
        if carried.status_code == 403:
            assert carried.json()["error"]["code"] != "csrf", (method, path)
        client.cookies.clear()
    # the rest (/v1, /mcp) do not take the cookie at all
    for method, path in [(m, p) for m, p in routes if not p.startswith(("/api/", "/auth/"))]:
        cookie, csrf = served.session("root")
        sent = {"X-CSRF-Token": csrf, "Accept": "application/json, text/event-stream"}
        refused = client.request(method, path, headers=sent | carrying(cookie))
        assert_error(refused, 401, "unauthorized")


def test_a_change_refused_for_its_csrf_token_is_not_made(served: Served) -> None:
    cookie, csrf = served.session()
    client = served.client
    client.cookies.set("shirabe_session", cookie)
    made = client.post("/api/conversations", json={"title": "給与"})
    assert_error(made, 403, "csrf")
    assert served.shirabe.conversations.of("user:hana") == []
    made = client.post("/api/conversations", json={"title": "給与"}, headers={"X-CSRF-Token": csrf})
    assert made.status_code == 201, made.text
    assert [c.title for c in served.shirabe.conversations.of("user:hana")] == ["給与"]
    # a bearer token needs no CSRF token: a page of another site cannot send one
    client.cookies.clear()
    scripted = client.post("/api/conversations", json={}, headers=served.bearer("hana"))
    assert scripted.status_code == 201, scripted.text


def test_a_session_that_expired_ended_or_lost_its_token_signs_no_one_in(served: Served) -> None:
    client, accounts = served.client, served.shirabe.accounts
    cookie, _ = served.session()
    accounts.database.change("UPDATE sessions SET expires_at = '2001-01-01T00:00:00+00:00'")
    expired = client.get("/api/status", headers=carrying(cookie))
    assert assert_error(expired, 401, "unauthorized") == "expired session: sign in again"
    assert cookie_attributes(expired.headers["set-cookie"])["max-age"] == "0"  # removed
    who = client.get("/auth/session", headers=carrying(cookie))
    assert who.status_code == 200 and who.json()["user"] is None
    assert cookie_attributes(who.headers["set-cookie"])["max-age"] == "0"
    # signing out ends the session on the server: the cookie, kept elsewhere, is worth nothing
    cookie, csrf = served.session()
    client.cookies.set("shirabe_session", cookie)
    assert client.get("/api/status").status_code == 200
    out = client.delete("/api/session", headers={"X-CSRF-Token": csrf})
    assert out.status_code == 200 and out.json() == {"signed_out": True}
    assert cookie_attributes(out.headers["set-cookie"])["max-age"] == "0"
    client.cookies.clear()
    kept = client.get("/api/status", headers=carrying(cookie))
    assert assert_error(kept, 401, "unauthorized") == "ended session: sign in again"
    entry = accounts.audit_log(limit=1)[0]
    assert (entry.actor, entry.action) == ("hana", "sign_out")
    assert entry.detail == "session ended (token)"
    # revoking the token a session was made from ends the session
    cookie, _ = served.session()
    for token in accounts.list_tokens("hana"):
        accounts.revoke_token(token.id)
    revoked = client.get("/api/status", headers=carrying(cookie))
    assert "revoked" in assert_error(revoked, 401, "unauthorized")


def test_a_trusted_proxy_names_the_user_from_its_addresses_only(served: Served) -> None:
    accounts = served.shirabe.accounts
    named = {"X-Forwarded-User": "sato.hana@example.com", "X-Forwarded-Groups": "jinji-all, x"}
    proxy = served.from_address(PROXY)
    status = proxy.get("/api/status", headers=named).json()
    assert (status["user"], status["admin"]) == ("sato.hana@example.com", False)
    assert accounts.get_user("sato.hana@example.com").groups == ("hr",)
    entry = accounts.audit_log(limit=1)[0]
    assert (entry.action, entry.detail) == ("sign_in", "proxy; groups: hr; new user")
    # its changes need the CSRF token the page is given, as a cookie's do
    csrf = proxy.get("/auth/session", headers=named).json()["csrf"]
    assert_error(proxy.post("/api/conversations", json={}, headers=named), 403, "csrf")
    made = proxy.post("/api/conversations", json={}, headers=named | {"X-CSRF-Token": csrf})
    assert made.status_code == 201, made.text
    # moved in the directory: the next request reads with the new groups
    moved = named | {"X-Forwarded-Groups": "eigyo"}
    assert proxy.get("/api/status", headers=moved).json()["user"] == "sato.hana@example.com"
    assert accounts.get_user("sato.hana@example.com").groups == ("sales",)
    # no claim makes an admin: a group named like one gives nothing
    admin = {"X-Forwarded-User": "mallory", "X-Forwarded-Groups": "admin,shirabe-admins"}
    assert proxy.get("/api/status", headers=admin).json()["admin"] is False
    # from the proxy without a name: as anyone else
    assert_error(proxy.get("/api/status"), 401, "unauthorized")
    # the same headers from anywhere else are ignored
    for address in (("10.0.1.5", 40000), ("127.0.0.1", 40000), ("testclient", 50000)):
        elsewhere = served.from_address(address)
        forged = {"X-Forwarded-User": "root", "X-Forwarded-Groups": "jinji-all"}
        assert_error(elsewhere.get("/api/status", headers=forged), 401, "unauthorized")
        assert elsewhere.get("/auth/session", headers=forged).json()["user"] is None
    assert {u.name for u in accounts.list_users()} == {
        "hana", "root", "sato.hana@example.com", "mallory",
    }  # fmt: skip
