"""Steps the browser tests share."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any


def cli(*args: str) -> str:
    """``shirabe`` run as a command; its output (an error fails the test with it)."""
    command = [sys.executable, "-m", "shirabe", *args]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"shirabe {' '.join(args)}: {done.stderr[-2000:]}"
    return done.stdout.strip()


def sign_in(page: Any, url: str, token: str) -> Any:
    """Open the page at ``url`` and sign in with ``token``; the page, once the app shows."""
    page.goto(url)
    page.fill("#token", token)
    page.press("#token", "Enter")
    page.wait_for_selector("#app:not([hidden])")
    return page


def ask(page: Any, question: str) -> Any:
    before = page.locator(".msg.a").count()
    page.fill("#question", question)
    page.press("#question", "Enter")
    answer = page.locator(".msg.a").nth(before)
    try:
        page.wait_for_function(
            "n => { const a = document.querySelectorAll('.msg.a')[n];"
            " return a && !a.hasAttribute('aria-busy'); }",
            arg=before,
        )
    except Exception as exc:  # the page as it stood says where it stopped
        shown = page.evaluate(
            "() => [...document.querySelectorAll('.msg')].slice(-3)"
            ".map(m => m.className + (m.getAttribute('aria-busy') ? ' (busy)' : '') + ': '"
            " + m.innerText.slice(0, 200))"
        )
        raise AssertionError(f"{question!r} was not answered; last messages: {shown}") from exc
    return answer


def settled(page: Any, answers: int) -> None:
    """Wait until the conversation shows ``answers`` answers and none is being written."""
    page.wait_for_function(
        "n => document.querySelectorAll('.msg.a').length === n"
        " && !document.querySelector('.msg.a[aria-busy]')",
        arg=answers,
    )


def upload(page: Any, path: Path, category: str) -> str:
    """Upload one file from the upload tab; the results table's text."""
    page.click("#tab-upload")
    page.fill("#upload-category", category)
    page.set_input_files("#files", str(path))
    page.click("#upload-button")
    page.wait_for_selector("#upload-results tr")
    return str(page.inner_text("#upload-results"))


def hold_answers(page: Any) -> list[Any]:
    """Hold every answer request the page makes from now on (the answer stays "being
    written"); the held routes, to continue or leave. ``page.unroute`` ends the hold."""
    held: list[Any] = []

    def hold(route: Any) -> None:
        held.append(route)

    page.route("**/api/ask/stream", hold)
    return held
