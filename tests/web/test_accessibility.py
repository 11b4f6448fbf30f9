"""Accessibility of the page's views, checked in the browser by axe-core (installed from npm by
``make test``, read from the local file: no CDN), with a screenshot of each view saved for the
CI artefacts (``build/screenshots``)."""

from __future__ import annotations

import json
from collections.abc import Callable
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


def save(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"))


Found = dict[str, list[dict[str, Any]]]


def sources(page: Any, answer: Any, size: str, shot: Callable[[str], None]) -> Found:
    """A citation's source (beside the chat on a desktop, with the document around it; over
    it on a phone), then a whole document (from the source on a phone, from the list on a
    desktop)."""
    found: Found = {}
    answer.locator(".chip").first.click()
    page.locator("#passage").wait_for(state="visible")
    if size == "desktop":
        page.wait_for_function("() => document.querySelectorAll('#passage section').length > 1")
    found["sources"] = violations(page)
    shot(f"sources-{size}")
    if size == "phone":
        page.click("#passage-whole")
    else:
        page.keyboard.press("Escape")
        page.click("#tab-docs")
        page.locator("#docs button.link", has_text="仕様書").first.click()
    page.locator("#document section.passage").first.wait_for()
    found["document"] = violations(page)
    shot(f"document-{size}")
    page.keyboard.press("Escape")
    page.click("#tab-chat")
    return found


def tabs(page: Any, size: str, shot: Callable[[str], None]) -> Found:
    """The upload, document list and admin views."""
    found: Found = {}
    page.click("#tab-upload")
    found["upload"] = violations(page)
    shot(f"upload-{size}")
    page.click("#tab-docs")
    page.wait_for_function("() => document.querySelectorAll('#docs tr').length > 0")
    found["documents"] = violations(page)
    shot(f"documents-{size}")
    page.click("#tab-admin")
    page.wait_for_selector("#view-admin.active:not([aria-busy])")
    found["admin"] = violations(page)
    shot(f"admin-{size}")
    page.click("#tab-chat")
    return found


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("viewport", [(1280, 800), (390, 844)], ids=["desktop", "phone"])
def test_the_views_have_no_serious_violations(
    page: Any, viewport: tuple[int, int], theme: str
) -> None:
    """Every view in both layouts (the source beside the chat on a desktop, over it on a
    phone) and both colour themes."""
    width, height = viewport
    size = "desktop" if width > 760 else "phone"
    page.set_viewport_size({"width": width, "height": height})
    page.select_option("#theme", theme)
    assert page.evaluate("() => document.documentElement.dataset.theme") == theme
    found: Found = {}
    suffix = "" if theme == "light" else "-dark"

    def shot(name: str) -> None:
        save(page, name + suffix)

    page.click("#new-chat") if page.is_visible("#new-chat") else page.click("#menu-toggle")
    if size == "phone" and page.is_visible("#sidebar"):
        page.click("#menu-toggle")
    found["empty chat"] = violations(page)
    answer = ask(page, "AQ-300の重さは何kgですか？")
    ask(page, "AQ-300の1か月の電気代はいくらですか？")
    found["chat"] = violations(page)
    shot(f"chat-{size}")

    found |= sources(page, answer, size, shot)
    if size == "phone":
        page.click("#menu-toggle")
        found["sidebar"] = violations(page)
        shot("sidebar-phone")
        page.click("#menu-toggle")
    found |= tabs(page, size, shot)

    saved = {p.name for p in SHOTS.glob(f"*-{size}{suffix}.png")}
    views = ("chat", "sources", "document", "documents", "admin")
    assert {f"{view}-{size}{suffix}.png" for view in views} <= saved
    failing = {view: v for view, v in found.items() if v}
    assert not failing, json.dumps(failing, ensure_ascii=False, indent=1)


def test_the_sign_in_view_has_no_serious_violations(browser: Any, server: dict[str, str]) -> None:
    context = browser.new_context(locale="ja-JP")
    page = context.new_page()
    page.goto(server["url"])
    page.wait_for_selector("#signin:not([hidden])")
    assert violations(page) == []
    save(page, "signin")
    context.close()
