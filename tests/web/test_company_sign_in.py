"""Signing in with the company's accounts, end to end: a real OpenID Connect provider
(oidc-provider-mock) and a real ``shirabe serve`` started here, driven in headless Chromium.
A user signs in through the provider's page, asks, and reads only what their groups may; moved
to another group at the provider, they sign out, sign in again, and read what the new group
may. The page keeps no token and cannot read its session cookie; its sign-in view, with the
company's sign-in offered, is accessible and keyboard usable, light and dark, desktop and
phone."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx2
import pytest

from shirabe.server.process import free_port, running

from tests.support import ROOT
from tests.web.helpers import ask
from tests.web.test_accessibility import violations

pytestmark = [pytest.mark.slow, pytest.mark.browser]

SIGN_IN = "会社のアカウントでサインイン"
LEAVE = "有給休暇は入社後いつから付与されますか？"
PRICE = "AQ-300のメーカー希望小売価格はいくらですか？"


@dataclass(frozen=True)
class Company:
    url: str
    issuer: str

    def claims(self, subject: str, **claims: Any) -> None:
        """What the provider says of ``subject`` from now on."""
        response = httpx2.put(f"{self.issuer}/users/{subject}", json=claims, timeout=10)
        assert response.status_code == 204, response.text


@pytest.fixture(scope="module")
def company(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Company]:
    base = tmp_path_factory.mktemp("company")
    docs = base / "docs"
    shutil.copytree(ROOT / "sample_docs" / "人事", docs / "人事")
    shutil.copytree(ROOT / "sample_docs" / "製品", docs / "製品")
    (base / "access.yaml").write_text("人事/**: [hr]\n製品/**: [sales]\n", encoding="utf-8")
    (base / "groups.yaml").write_text("jinji-all: [hr]\neigyo: [sales]\n", encoding="utf-8")
    provider_port, port = free_port(), free_port()
    issuer, url = f"http://127.0.0.1:{provider_port}", f"http://127.0.0.1:{port}"
    env = dict(
        os.environ,
        SHIRABE_INGEST__ACCESS_MAP=str(base / "access.yaml"),
        SHIRABE_SERVER__ANONYMOUS="off",
        SHIRABE_SIGN_IN__OIDC_ISSUER=issuer,
        SHIRABE_SIGN_IN__OIDC_CLIENT_ID="shirabe",
        SHIRABE_SIGN_IN__REDIRECT_BASE_URL=url,
        SHIRABE_SIGN_IN__GROUP_MAP=str(base / "groups.yaml"),
        SHIRABE_OIDC_CLIENT_SECRET="the client secret",
    )
    provider = [sys.executable, "-m", "oidc_provider_mock", "--port", str(provider_port)]
    serve = [sys.executable, "-m", "shirabe", "serve", str(docs), "--index", str(base / "index"),
             "--port", str(port)]  # fmt: skip
    with (
        running(provider, f"{issuer}/.well-known/openid-configuration", log=base / "oidc.log"),
        running(serve, f"{url}/healthz", log=base / "server.log", env=env, cwd=ROOT),
    ):
        yield Company(url, issuer)


def offline(context: Any, *hosts: str) -> None:
    """Let the browser reach ``hosts`` only (the provider's page names a style sheet on a CDN:
    nothing is fetched from elsewhere)."""

    def only(route: Any) -> None:
        if urlsplit(route.request.url).hostname in hosts:
            route.continue_()
        else:
            route.abort()

    context.route("**/*", only)


def sign_in(page: Any, subject: str) -> None:
    """From the sign-in view, through the provider's page, back to the app."""
    page.get_by_role("link", name=SIGN_IN).click()
    page.wait_for_selector("input[name=sub]")
    page.fill("input[name=sub]", subject)
    page.get_by_role("button", name="Authorize").click()
    page.wait_for_selector("#app:not([hidden])")


def documents(page: Any) -> str:
    page.click("#tab-docs")
    page.wait_for_selector("#docs tr")
    shown = str(page.inner_text("#docs"))
    page.click("#tab-chat")
    return shown


def test_a_user_reads_what_their_directory_groups_may(browser: Any, company: Company) -> None:
    company.claims("sub-hana", preferred_username="hana", groups=["jinji-all"])
    context = browser.new_context(locale="ja-JP")
    offline(context, "127.0.0.1")
    page = context.new_page()
    page.set_default_timeout(60_000)
    page.goto(company.url)
    page.evaluate("() => localStorage.setItem('shirabe-token', 'shb_kept_by_an_older_page')")
    page.reload()
    page.wait_for_selector("#signin:not([hidden])")
    sign_in(page, "sub-hana")
    assert page.inner_text("#who") == "hana" and page.is_visible("#signout")
    # the page keeps no token (one an older page kept is gone), and cannot read its cookie
    assert page.evaluate("() => Object.keys(localStorage)") == ["shirabe-client"]
    assert "shirabe_session" not in page.evaluate("() => document.cookie")
    assert any(c["name"] == "shirabe_session" and c["httpOnly"] for c in context.cookies())
    # in hr: the leave rules answer, the product documents are not there
    leave = ask(page, LEAVE)
    assert "休暇規程.md" in leave.locator(".chip").first.inner_text()
    price = ask(page, PRICE)
    assert "54,780円" not in price.inner_text() and "製品" not in price.inner_text()
    listed = documents(page)
    assert "休暇規程.md" in listed and "AQ-300" not in listed
    # moved to sales at the provider: signed out and in again, the reading changes
    company.claims("sub-hana", preferred_username="hana", groups=["eigyo"])
    page.click("#signout")
    page.wait_for_selector("#signin:not([hidden])")
    assert not any(c["name"] == "shirabe_session" for c in context.cookies())
    sign_in(page, "sub-hana")
    assert page.inner_text("#who") == "hana"
    page.click("#new-chat")
    price = ask(page, PRICE)
    assert "54,780円" in price.inner_text()
    leave = ask(page, LEAVE)
    assert "休暇規程.md" not in leave.inner_text()
    listed = documents(page)
    assert "AQ-300" in listed and "休暇規程.md" not in listed
    context.close()


def test_a_sign_in_that_fails_is_said_so(browser: Any, company: Company) -> None:
    context = browser.new_context(locale="ja-JP")
    offline(context, "127.0.0.1")
    page = context.new_page()
    page.set_default_timeout(60_000)
    page.goto(company.url)
    page.get_by_role("link", name=SIGN_IN).click()
    page.wait_for_selector("input[name=sub]")
    page.get_by_role("button", name="Deny").click()  # refused at the provider
    page.wait_for_selector("#signin:not([hidden])")
    page.wait_for_function("() => document.querySelector('#signin-error').textContent.length > 0")
    assert "会社のアカウントでサインインできませんでした" in page.inner_text("#signin-error")
    assert "signin=failed" not in page.url  # said once, not again on a reload
    context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_company_sign_in_is_accessible_and_keyboard_usable(
    browser: Any, company: Company, scheme: str
) -> None:
    context = browser.new_context(locale="ja-JP", color_scheme=scheme)
    offline(context, "127.0.0.1")
    page = context.new_page()
    page.set_default_timeout(60_000)
    for width, height in ((1280, 800), (390, 844)):
        page.set_viewport_size({"width": width, "height": height})
        page.goto(company.url)
        link = page.get_by_role("link", name=SIGN_IN)
        link.wait_for()
        assert violations(page) == [], (scheme, width)
        assert page.evaluate("() => document.documentElement.scrollWidth <= innerWidth")
    link.focus()
    page.keyboard.press("Enter")
    page.wait_for_selector("input[name=sub]")
    context.close()
