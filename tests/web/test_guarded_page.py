"""In a real headless browser: the API reference (/docs) under the Content-Security-Policy it
is served with (its bundled script and the inline script that starts it run, it fetches the
schema, and the browser reports nothing the policy refused); the sign-in view says a token has
expired."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from shirabe.access.accounts import hash_token

from tests.web.helpers import cli

pytestmark = [pytest.mark.slow, pytest.mark.browser]


def test_the_api_reference_runs_under_its_policy(browser: Any, server: dict[str, str]) -> None:
    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(60_000)
    refused: list[str] = []
    page.on("console", lambda m: refused.append(m.text) if "Security Policy" in m.text else None)
    with page.expect_response(lambda r: r.url.endswith("/openapi.json")) as schema:
        response = page.goto(server["url"] + "/docs")
    assert response is not None and "'sha256-" in response.headers["content-security-policy"]
    assert schema.value.status == 200
    page.wait_for_selector("#swagger-ui .swagger-ui")  # drawn by the bundle, started inline
    page.wait_for_load_state("networkidle")
    assert refused == []
    context.close()


def test_an_expired_token_is_said_to_be_expired(browser: Any, server: dict[str, str]) -> None:
    index = str(Path(server["base"]) / "index")
    cli("users", "add", "kenji", "--index", index)
    secret = cli("tokens", "create", "kenji", "--expires", "1h", "--index", index)
    with sqlite3.connect(Path(index) / "accounts.sqlite3") as conn:  # an hour later
        conn.execute("UPDATE tokens SET expires_at = '2001-01-01T00:00:00+00:00' WHERE hash = ?",
                     (hash_token(secret),))  # fmt: skip
    conn.close()
    context = browser.new_context(locale="ja-JP")
    page = context.new_page()
    page.goto(server["url"])
    page.fill("#token", secret)
    page.press("#token", "Enter")
    page.wait_for_function("() => document.querySelector('#signin-error').textContent.length > 0")
    assert "有効期限が切れています" in page.inner_text("#signin-error")
    context.close()
