"""Accessibility of the page's views, checked in the browser by axe-core (installed from npm by
``make test``, read from the local file: no CDN), with a screenshot of each view saved for the
CI artefacts (``build/screenshots``)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support import ROOT, unavailable
from tests.web.helpers import ask

pytestmark = [pytest.mark.slow, pytest.mark.browser]

AXE = ROOT / ".venv" / "axe" / "node_modules" / "axe-core" / "axe.min.js"
SHOTS = ROOT / "build" / "screenshots"
SERIOUS = {"serious", "critical"}


def violations(page: Any) -> list[dict[str, Any]]:
    """axe-core's serious and critical violations on the page as it is now."""
    if not AXE.is_file():
        unavailable(f"axe-core is not installed at {AXE}: run make test (npm install)")
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.evaluate(AXE.read_text(encoding="utf-8"))
    result = page.evaluate(
        "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
        ".map(v => ({id: v.id, impact: v.impact, help: v.help,"
        " nodes: v.nodes.map(n => n.target.join(' ')).slice(0, 5)}))"
    )
    return [v for v in result if v["impact"] in SERIOUS]


def shot(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"))


@pytest.mark.parametrize("viewport", [(1280, 800), (390, 844)], ids=["desktop", "phone"])
def test_the_views_have_no_serious_violations(page: Any, viewport: tuple[int, int]) -> None:
    width, height = viewport
    size = "desktop" if width > 760 else "phone"
    page.set_viewport_size({"width": width, "height": height})
    found: dict[str, list[dict[str, Any]]] = {}

    page.click("#new-chat") if page.is_visible("#new-chat") else page.click("#menu-toggle")
    if size == "phone" and page.is_visible("#sidebar"):
        page.click("#menu-toggle")
    found["empty chat"] = violations(page)
    answer = ask(page, "AQ-300の重さは何kgですか？")
    ask(page, "AQ-300の1か月の電気代はいくらですか？")
    found["chat"] = violations(page)
    shot(page, f"chat-{size}")

    answer.locator(".chip").first.click()
    page.locator("#passage").wait_for(state="visible")
    found["sources"] = violations(page)
    shot(page, f"sources-{size}")
    page.click("#passage-whole")
    page.locator("#document section.cited").wait_for()
    found["document"] = violations(page)
    shot(page, f"document-{size}")
    page.keyboard.press("Escape")

    if size == "phone":
        page.click("#menu-toggle")
        found["sidebar"] = violations(page)
        shot(page, "sidebar-phone")
        page.click("#menu-toggle")

    page.click("#tab-upload")
    found["upload"] = violations(page)
    shot(page, f"upload-{size}")
    page.click("#tab-docs")
    page.wait_for_function("() => document.querySelectorAll('#docs tr').length > 0")
    found["documents"] = violations(page)
    shot(page, f"documents-{size}")
    page.click("#tab-admin")
    page.wait_for_selector("#view-admin.active:not([aria-busy])")
    found["admin"] = violations(page)
    shot(page, f"admin-{size}")
    page.click("#tab-chat")

    saved = {p.name for p in SHOTS.glob(f"*-{size}.png")}
    views = ("chat", "sources", "document", "documents", "admin")
    assert {f"{view}-{size}.png" for view in views} <= saved
    failing = {view: v for view, v in found.items() if v}
    assert not failing, json.dumps(failing, ensure_ascii=False, indent=1)


def test_the_sign_in_view_has_no_serious_violations(browser: Any, server: dict[str, str]) -> None:
    context = browser.new_context(locale="ja-JP")
    page = context.new_page()
    page.goto(server["url"])
    page.wait_for_selector("#signin:not([hidden])")
    assert violations(page) == []
    shot(page, "signin")
    context.close()
