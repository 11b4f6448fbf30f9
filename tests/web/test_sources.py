"""Sources, colours and stopping, in a real browser against a real server: what an answer
quotes is marked in its source even where the answer reworded the layout; on a wide screen
the source opens beside the chat with the document around it, on a phone over it; the light /
dark / 自動 switch is kept across reloads; and a new chat stopped at once leaves no empty
conversation behind."""

from __future__ import annotations

import json
import re
import urllib.request
from typing import Any

import pytest

from tests.web.helpers import ask, hold_answers

pytestmark = [pytest.mark.slow, pytest.mark.browser]

HOTEL = "課長が出張で泊まるホテル代はいくらまで会社が出してくれますか？"
WIDE = {"width": 1366, "height": 900}
PHONE = {"width": 390, "height": 844}
IS_MODAL = "() => document.querySelector('#passage').matches(':modal')"
FOCUSED = "() => document.activeElement.id || document.activeElement.className"


def box(page: Any, selector: str) -> dict[str, float]:
    found = page.locator(selector).bounding_box()
    assert found is not None, selector
    return dict(found)


def test_the_hotel_answer_marks_the_row_it_quotes(page: Any) -> None:
    """The answer says 「課長: １泊あたり…」, the source 「・課長　　　　１泊あたり…」."""
    page.click("#new-chat")
    answer = ask(page, HOTEL)
    assert "１２，０００円" in answer.inner_text()
    answer.locator("button.cite", has_text="[1]").first.click()
    page.locator("#passage").wait_for(state="visible")
    marks = page.locator("#passage-text section.cited mark").all_inner_texts()
    assert any("課長" in m and "１泊あたり１２，０００円" in m for m in marks), marks
    assert not any("１４，０００円" in m for m in marks), marks  # 部長's row is not the answer
    page.keyboard.press("Escape")


def test_on_a_wide_screen_the_source_opens_beside_the_chat(page: Any) -> None:
    page.set_viewport_size(WIDE)
    page.click("#new-chat")
    answer = ask(page, HOTEL)
    chip = answer.locator(".chip").first
    chip.click()
    page.locator("#passage").wait_for(state="visible")
    assert not page.evaluate(IS_MODAL)
    assert page.evaluate(FOCUSED) == "passage-close"
    # side by side: the chat keeps its column, nothing of it under the source
    chat, source = box(page, "#view-chat"), box(page, "#passage")
    assert chat["x"] + chat["width"] <= source["x"] + 1, (chat, source)
    assert source["x"] + source["width"] <= WIDE["width"] + 1
    assert chat["width"] >= 420, chat
    # the whole document, scrolled to the cited passage, which is marked
    page.wait_for_function("() => document.querySelectorAll('#passage section.passage').length > 3")
    cited = box(page, "#passage section.cited")
    text = box(page, "#passage-text")
    assert text["y"] - 1 <= cited["y"] < text["y"] + text["height"] / 2, (cited, text)
    assert page.locator("#passage section.cited mark").count() >= 1
    assert page.evaluate("() => document.querySelector('#passage-text').scrollTop > 0")
    # the chat stays usable: a question is asked and answered while the source is open
    followed = ask(page, "AQ-300の重さは何kgですか？")
    assert "9.2kg" in followed.inner_text()
    assert page.is_visible("#passage")
    # closed by its button, the focus back on what opened it; opened again, closed by Esc
    page.click("#passage-close")
    page.locator("#passage").wait_for(state="hidden")
    assert "chip" in page.evaluate(FOCUSED)
    assert box(page, "#view-chat")["width"] > chat["width"]  # the chat has the width again
    chip.click()
    page.locator("#passage").wait_for(state="visible")
    page.keyboard.press("Escape")
    page.locator("#passage").wait_for(state="hidden")
    assert "chip" in page.evaluate(FOCUSED)


def test_a_cited_pdf_page_is_shown_beside_the_chat(page: Any) -> None:
    page.set_viewport_size(WIDE)
    page.click("#new-chat")
    answer = ask(page, "保証書は再発行できますか？")
    answer.locator(".chip", has_text=".pdf").first.click()
    page.wait_for_function(
        "() => { const i = document.querySelector('#passage section.cited figure.page img');"
        " return i && i.complete && i.naturalWidth > 0; }"
    )
    assert not page.evaluate(IS_MODAL)
    page.keyboard.press("Escape")


def alpha(color: str) -> float:
    """How opaque a computed colour is: ``rgba(0, 0, 0, 0.45)`` → 0.45, ``rgb(…)`` → 1."""
    parts = re.findall(r"[\d.]+", color)
    return float(parts[3]) if len(parts) > 3 else 1.0


def test_on_a_phone_the_source_opens_over_the_chat(page: Any) -> None:
    page.set_viewport_size(PHONE)
    page.click("#menu-toggle")
    page.click("#new-chat")
    answer = ask(page, HOTEL)
    chip = answer.locator(".chip").first
    chip.click()
    page.locator("#passage").wait_for(state="visible")
    assert page.evaluate(IS_MODAL)
    assert page.evaluate(FOCUSED) == "passage-close"
    assert page.is_visible("#passage-whole")
    assert page.locator("#passage-text mark").count() >= 1
    source = box(page, "#passage")
    assert source["width"] <= PHONE["width"] and source["x"] >= 0
    behind = page.locator("#passage").evaluate(
        "d => getComputedStyle(d, '::backdrop').backgroundColor"
    )
    assert alpha(behind) >= 0.3, behind  # the chat it covers steps back, not the pale default
    page.keyboard.press("Escape")
    page.locator("#passage").wait_for(state="hidden")
    assert "chip" in page.evaluate(FOCUSED)


def rgb(page: Any) -> list[int]:
    color = page.evaluate("() => getComputedStyle(document.body).backgroundColor")
    return [int(c) for c in re.findall(r"\d+", color)[:3]]


@pytest.mark.parametrize("system", ["light", "dark"])
def test_the_colour_switch_is_kept_across_reloads(
    browser: Any, server: dict[str, str], system: str
) -> None:
    context = browser.new_context(locale="ja-JP", color_scheme=system)
    page = context.new_page()
    page.goto(server["url"])
    page.wait_for_selector("#signin:not([hidden])")
    switch = page.get_by_label("配色")
    assert switch.input_value() == "system"  # 自動 until chosen
    as_system = rgb(page)
    other = "light" if system == "dark" else "dark"
    switch.focus()  # chosen with the keyboard
    for _ in range(2):
        if switch.input_value() != other:
            page.keyboard.press("ArrowDown")
    assert switch.input_value() == other
    chosen = rgb(page)
    assert (max(chosen) < 60) == (other == "dark") and chosen != as_system, (chosen, as_system)
    # kept: applied by the head's script, before the page's modules have even started
    page.route("**/assets/app.js", lambda route: None)  # never answered
    page.goto(server["url"], wait_until="commit")
    page.wait_for_function("t => document.documentElement.dataset.theme === t", arg=other)
    assert page.evaluate("() => document.readyState") != "complete"
    page.unroute("**/assets/app.js")
    page.reload()
    page.wait_for_selector("#signin:not([hidden])")
    assert page.get_by_label("配色").input_value() == other and rgb(page) == chosen
    page.get_by_label("配色").select_option("system")  # back to following the system
    assert rgb(page) == as_system
    page.reload()
    page.wait_for_selector("#signin:not([hidden])")
    assert rgb(page) == as_system
    context.close()


def test_a_new_chat_stopped_at_once_leaves_no_empty_conversation(
    page: Any, server: dict[str, str]
) -> None:
    page.click("#new-chat")
    held = hold_answers(page)  # the answer never comes: the stop is always first
    page.fill("#question", "出張の日当はいくらですか？")
    page.press("#question", "Enter")
    page.click("#stop-button")
    page.wait_for_function("() => !document.querySelector('.msg.a[aria-busy]')")
    page.unroute("**/api/ask/stream")
    assert held, "the question was sent"
    assert "停止しました" in page.locator(".msg.a").last.inner_text()
    page.reload()
    page.wait_for_selector("#conversations li, #conversations p")  # the list, read
    listed = page.locator("#conversations li").all_inner_texts()
    assert not any("無題の会話" in item for item in listed), listed
    request = urllib.request.Request(
        server["url"] + "/api/conversations",
        headers={"Authorization": f"Bearer {server['token']}"},
    )
    with urllib.request.urlopen(request) as response:
        kept = json.load(response)["conversations"]
    assert all(c["turns"] > 0 for c in kept), kept
