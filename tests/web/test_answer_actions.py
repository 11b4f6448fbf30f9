"""What a reader does with an answer on the page, in a real browser against a real server:
copy it with its sources, have it written again, and read long codes and addresses that wrap
inside their boxes instead of running out of them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.web.helpers import ask, settled, sign_in

pytestmark = [pytest.mark.slow, pytest.mark.browser]


@pytest.fixture
def clipboard_page(browser: Any, server: dict[str, str]) -> Iterator[Any]:
    context = browser.new_context(locale="ja-JP")
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server["url"])
    page = context.new_page()
    page.set_default_timeout(60_000)
    yield sign_in(page, server["url"], server["token"])
    context.close()


def test_copy_puts_the_answer_and_its_sources_on_the_clipboard(clipboard_page: Any) -> None:
    page = clipboard_page
    answer = ask(page, "AQ-300のメーカー希望小売価格はいくらですか？")
    shown = answer.locator(".text").inner_text()
    answer.get_by_role("button", name="コピー").click()
    answer.get_by_role("button", name="コピーしました").wait_for()
    copied = page.evaluate("() => navigator.clipboard.readText()")
    assert "54,780円" in shown
    assert "54,780円" in copied
    chips = [
        answer.locator(".chip").nth(i).inner_text() for i in range(answer.locator(".chip").count())
    ]
    assert chips and all(chip in copied for chip in chips), (chips, copied)  # [1] file › heading


def test_regenerate_asks_a_follow_up_again_in_its_own_context(page: Any) -> None:
    page.click("#new-chat")
    ask(page, "AQ-300のメーカー希望小売価格はいくらですか？")
    follow = ask(page, "では、AQ-250は？")
    assert "43,780円" in follow.inner_text()
    ask(page, "有給休暇は何日もらえますか？")  # another topic after it
    follow.get_by_role("button", name="再生成").click()
    follow.locator(".versions").wait_for()  # written again in place, as the turn's version 2
    settled(page, 3)
    assert "43,780円" in follow.inner_text()
    searched = follow.locator(".reason").first.inner_text()
    assert "AQ-250" in searched and "価格" in searched, searched  # after turn 1, not turn 3
    assert page.locator(".msg.q").count() == 3


def test_regenerate_writes_the_answer_again_in_the_conversation(page: Any) -> None:
    page.click("#new-chat")
    first = ask(page, "有給休暇の申請は何日前までに行いますか？")
    shown = first.locator(".text").inner_text()
    first.get_by_role("button", name="再生成").click()
    first.locator(".versions").wait_for()
    settled(page, 1)
    assert page.locator(".msg.q").count() == 1  # the question is not asked a second time
    assert first.locator(".versions").text_content() == "‹2/2›"
    assert first.locator(".chip").count() >= 1
    assert first.locator(".text").inner_text() == shown
    assert first.locator(".reason").count() == 0  # asked as it was, not as a follow-up of itself


def test_long_codes_and_addresses_wrap_inside_their_boxes(page: Any) -> None:
    page.click("#new-chat")
    page.set_viewport_size({"width": 390, "height": 844})
    address = "https://portal.example.co.jp/" + "kitei/" * 12 + "ryohi-seisan-tebiki.pdf"
    code = "AQ-300-" + "X" * 80
    answer = ask(page, f"{address} と {code} の保証期間は？")
    boxes = page.evaluate(
        """() => [...document.querySelectorAll('.msg, .msg *')].map(e => ({
            tag: e.className || e.tagName, right: e.getBoundingClientRect().right,
            over: e.scrollWidth - e.clientWidth }))"""
    )
    width = page.viewport_size["width"]
    assert all(b["right"] <= width + 0.5 for b in boxes), [b for b in boxes if b["right"] > width]
    assert all(b["over"] <= 1 for b in boxes), [b for b in boxes if b["over"] > 1]
    wide = "() => document.documentElement.scrollWidth <= document.documentElement.clientWidth"
    assert page.evaluate(wide), "the page scrolls sideways"
    assert answer.is_visible()


def test_an_error_from_the_server_is_said_in_japanese(page: Any) -> None:
    page.click("#new-chat")
    failed = ask(page, "？？？")  # nothing to search for: the server answers 422 in English
    assert "error" in (failed.get_attribute("class") or "")
    assert failed.locator(".text").inner_text() == (
        "検索できる言葉が含まれていません。質問を言い換えてください。"
    )
    # the same question would fail the same way: no retry is offered (a lost server offers one)
    assert failed.get_by_role("button", name="再試行").count() == 0
