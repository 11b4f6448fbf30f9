"""Steps the browser tests share."""

from __future__ import annotations

from typing import Any


def ask(page: Any, question: str) -> Any:
    before = page.locator(".msg.a").count()
    page.fill("#question", question)
    page.press("#question", "Enter")
    answer = page.locator(".msg.a").nth(before)
    page.wait_for_function(
        "n => !document.querySelectorAll('.msg.a')[n].hasAttribute('aria-busy')", arg=before
    )
    return answer
