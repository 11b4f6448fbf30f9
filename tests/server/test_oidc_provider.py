"""Signing in with a real OpenID Connect provider (oidc-provider-mock, started here) against the
real app in-process: the authorization request carries state, nonce and a PKCE S256 challenge;
the user is made at the first sign-in and given the groups the group map says; moved between
groups at the provider, they read differently at the next sign-in; a display name never makes
anyone another user or an admin; a state or an ID token that is not this browser's sign-in's
is refused, counted and audited; signing out ends the session on the server."""

from __future__ import annotations

import base64
import hashlib
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx2
import pytest
from fastapi.testclient import TestClient

from shirabe.engine import Shirabe
from shirabe.server.app import create_app
from shirabe.server.process import free_port, running
from shirabe.settings import ServerSettings, Settings, SignInSettings

from tests.support import HashedEmbedder

pytestmark = pytest.mark.slow

OWN = "http://127.0.0.1:8000"
FAILED = "/?signin=failed"


@dataclass
class Provider:
    issuer: str
    shirabe: Shirabe
    app: Any
    browsers: int = 0

    def claims(self, subject: str, **claims: Any) -> None:
        """Set what the provider says of ``subject`` from now on."""
        response = httpx2.put(f"{self.issuer}/users/{subject}", json=claims, timeout=10)
        assert response.status_code == 204, response.text

    def browser(self) -> TestClient:
        """A browser of its own, on a machine of its own (failed sign-ins count per address)."""
        self.browsers += 1
        address = (f"10.9.{self.browsers // 250}.{self.browsers % 250 + 1}", 40000)
        return TestClient(self.app, base_url=OWN, follow_redirects=False, client=address)


@pytest.fixture(scope="module")
def provider(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Provider]:
    base = tmp_path_factory.mktemp("oidc")
    port = free_port()
    issuer = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "oidc_provider_mock", "--port", str(port)]
    groups = base / "groups.yaml"
    groups.write_text("jinji-all: [hr]\neigyo: [sales]\n", encoding="utf-8")
    settings = Settings(
        home=base / "index",
        server=ServerSettings(anonymous="off"),
        sign_in=SignInSettings(
            oidc_issuer=issuer,
            oidc_client_id="shirabe",
            oidc_client_secret_env="SHIRABE_TEST_OIDC_SECRET",
            redirect_base_url=OWN,
            group_map=groups,
        ),
    )
    with (
        running(command, issuer + "/.well-known/openid-configuration", log=base / "oidc.log"),
        pytest.MonkeyPatch.context() as patch,
    ):
        patch.setenv("SHIRABE_TEST_OIDC_SECRET", "a client secret")
        shirabe = Shirabe(settings, embedder=HashedEmbedder())
        shirabe.accounts.add_user("root", admin=True)
        yield Provider(issuer, shirabe, create_app(shirabe))
        shirabe.close()


def login(browser: TestClient) -> str:
    """Begin a sign-in: where the page sends the browser (the provider's page)."""
    response = browser.get("/auth/login")
    assert response.status_code == 303, response.text
    return str(response.headers["location"])


def authorize(url: str, subject: str) -> str:
    """What the provider's page does when ``subject`` signs in there: where it sends the
    browser back (the callback, with a code and the state)."""
    response = httpx2.post(url, data={"sub": subject}, follow_redirects=False, timeout=30)
    assert response.status_code == 302, response.text
    back = urlsplit(response.headers["location"])
    assert f"{back.scheme}://{back.netloc}{back.path}" == OWN + "/auth/callback"
    return f"{back.path}?{back.query}"


def sign_in(provider: Provider, subject: str) -> TestClient:
    """A browser signed in as ``subject`` through the provider."""
    browser = provider.browser()
    back = browser.get(authorize(login(browser), subject))
    assert (back.status_code, back.headers["location"]) == (303, "/"), back.headers
    return browser


def query(url: str) -> dict[str, str]:
    return {key: values[0] for key, values in parse_qs(urlsplit(url).query).items()}


def whoami(browser: TestClient) -> dict[str, Any]:
    found: dict[str, Any] = browser.get("/auth/session").json()
    return found


def test_signing_in_with_the_provider(provider: Provider) -> None:
    provider.claims("sub-hana", preferred_username="hana", groups=["jinji-all", "other"])
    browser = provider.browser()
    assert whoami(browser)["oidc"] is True and whoami(browser)["user"] is None
    leaving = browser.get("/auth/login")
    sent = query(leaving.headers["location"])
    assert leaving.headers["location"].startswith(provider.issuer + "/oauth2/authorize?")
    assert (sent["response_type"], sent["client_id"]) == ("code", "shirabe")
    assert sent["redirect_uri"] == OWN + "/auth/callback"
    assert sent["scope"].split() == ["openid", "profile", "email"]
    assert len(sent["state"]) >= 40 and len(sent["nonce"]) >= 40
    flow_header = leaving.headers["set-cookie"]
    assert "HttpOnly" in flow_header and "SameSite=lax" in flow_header
    assert "Path=/auth/" in flow_header and "Max-Age=600" in flow_header
    payload = browser.cookies["shirabe_sign_in"].partition(".")[0]
    flow = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    assert (flow["state"], flow["nonce"]) == (sent["state"], sent["nonce"])
    challenge = hashlib.sha256(flow["verifier"].encode()).digest()
    assert sent["code_challenge_method"] == "S256"
    assert sent["code_challenge"] == base64.urlsafe_b64encode(challenge).decode().rstrip("=")
    assert flow["verifier"] not in leaving.headers["location"]
    back = browser.get(authorize(leaving.headers["location"], "sub-hana"))
    assert (back.status_code, back.headers["location"]) == (303, "/")
    me = whoami(browser)
    assert (me["user"], me["via"], me["admin"]) == ("hana", "session", False)
    accounts = provider.shirabe.accounts
    assert accounts.get_user("hana").groups == ("hr",)  # "other" is not in the group map
    entry = accounts.audit_log(limit=1)[0]
    assert (entry.actor, entry.action, entry.path) == ("hana", "sign_in", "/auth/callback")
    assert entry.detail == f"OpenID Connect {provider.issuer}; groups: hr; new user"
    assert "shirabe_sign_in" not in browser.cookies  # the flow is over
    assert browser.get("/api/status").json()["user"] == "hana"
    # signing out ends the session on the server: the cookie kept elsewhere signs no one in
    kept = browser.cookies["shirabe_session"]
    out = browser.delete("/api/session", headers={"X-CSRF-Token": me["csrf"]})
    assert out.json() == {"signed_out": True}
    stolen = provider.browser()
    stolen.cookies.set("shirabe_session", kept)
    assert stolen.get("/api/status").status_code == 401


def test_groups_follow_the_provider_at_the_next_sign_in(provider: Provider) -> None:
    provider.claims("sub-ken", preferred_username="ken", groups=["jinji-all"])
    first = sign_in(provider, "sub-ken")
    assert first.get("/api/status").json()["user"] == "ken"
    accounts = provider.shirabe.accounts
    assert accounts.get_user("ken").groups == ("hr",)
    # moved to sales at the provider, renamed there too: the same user, in sales from now on
    provider.claims("sub-ken", preferred_username="ken.sato", groups=["eigyo"])
    again = sign_in(provider, "sub-ken")
    assert again.get("/api/status").json()["user"] == "ken"
    assert accounts.get_user("ken").groups == ("sales",)
    detail = accounts.audit_log(limit=1)[0].detail
    assert detail == f"OpenID Connect {provider.issuer}; groups: sales; before: hr"
    # no claim makes an admin, nor does a name make anyone another user
    provider.claims("sub-x", preferred_username="root", groups=["admin"], admin=True)
    spoof = whoami(sign_in(provider, "sub-x"))
    assert spoof["user"] != "root" and spoof["user"].startswith("root-") and not spoof["admin"]


def test_a_state_that_is_not_this_browsers_sign_in_is_refused(provider: Provider) -> None:
    provider.claims("sub-mika", preferred_username="mika", groups=["jinji-all"])
    accounts = provider.shirabe.accounts
    victim = provider.browser()
    login(victim)  # the victim's browser began a sign-in of its own
    attacker = provider.browser()
    planted = authorize(login(attacker), "sub-mika")  # the attacker's own callback link
    refused = victim.get(planted)
    assert (refused.status_code, refused.headers["location"]) == (303, FAILED)
    assert "shirabe_session" not in victim.cookies and whoami(victim)["user"] is None
    entry = accounts.audit_log(limit=1)[0]
    assert entry.action == "sign_in_failed" and "(state)" in entry.detail
    # a state changed on the way back
    browser = provider.browser()
    callback = authorize(login(browser), "sub-mika")
    changed = callback.replace("state=", "state=x")
    assert browser.get(changed).headers["location"] == FAILED
    assert "(state)" in accounts.audit_log(limit=1)[0].detail
    # no sign-in begun in this browser at all (or its cookie gone)
    fresh = provider.browser()
    assert fresh.get(authorize(login(attacker), "sub-mika")).headers["location"] == FAILED
    assert "(flow)" in accounts.audit_log(limit=1)[0].detail
    assert whoami(fresh)["user"] is None


def test_an_id_token_of_another_sign_in_is_refused(provider: Provider) -> None:
    provider.claims("sub-nao", preferred_username="nao", groups=["jinji-all"])
    browser = provider.browser()
    mine = query(login(browser))  # this browser's sign-in: its state and nonce
    other = provider.browser()
    theirs = query(authorize(login(other), "sub-nao"))  # a code issued for another nonce
    swapped = "/auth/callback?" + urlencode({"code": theirs["code"], "state": mine["state"]})
    refused = browser.get(swapped)
    assert (refused.status_code, refused.headers["location"]) == (303, FAILED)
    assert whoami(browser)["user"] is None
    entry = provider.shirabe.accounts.audit_log(limit=1)[0]
    assert entry.action == "sign_in_failed" and "(nonce)" in entry.detail, entry.detail
    # the provider's refusal signs no one in either
    denied = provider.browser()
    url = login(denied)
    answer = httpx2.post(url, data={"action": "deny"}, follow_redirects=False, timeout=30)
    back = urlsplit(answer.headers["location"])
    assert "error=access_denied" in back.query
    assert denied.get(f"{back.path}?{back.query}").headers["location"] == FAILED
    assert "(provider)" in provider.shirabe.accounts.audit_log(limit=1)[0].detail


def test_without_a_provider_the_sign_in_routes_are_not_there(tmp_path: Path) -> None:
    shirabe = Shirabe(Settings(home=tmp_path / "index"), embedder=HashedEmbedder())
    browser = TestClient(create_app(shirabe), base_url=OWN, follow_redirects=False)
    assert browser.get("/auth/login").status_code == 404
    assert browser.get("/auth/callback?code=x&state=y").status_code == 404
    assert browser.get("/auth/session").json()["oidc"] is False
    shirabe.close()
