"""Details a reader meets on the page every day, in a real browser against a real server:
nothing of the app shows before signing in, signing in on a phone, a new topic in a
conversation is searched as written, a past conversation opens at its latest answer, the
phone menu, wide tables and the document list on a phone, the upload form's guidance, the
skip link and a question box that grows."""

from __future__ import annotations

from typing import Any

import pytest

from tests.web.helpers import ask

pytestmark = [pytest.mark.slow, pytest.mark.browser]

PHONE = {"width": 390, "height": 844}


def test_nothing_of_the_app_shows_before_signing_in(browser: Any, server: dict[str, str]) -> None:
    context = browser.new_context(locale="ja-JP")
    page = context.new_page()
    page.goto(server["url"])
    page.wait_for_selector("#signin:not([hidden])")
    for hidden in ("#app", "#question", "#sidebar", "#messages"):
        assert not page.is_visible(hidden), hidden
    assert page.evaluate("() => document.activeElement.id") == "token"
    context.close()


def test_signing_in_on_a_phone(browser: Any, server: dict[str, str]) -> None:
    """The sign-in fits the screen with room at its edges and offers no menu (nothing is there
    to open yet); a wrong token is said in the colour of errors, not of hints; once signed in,
    the menu is there."""
    context = browser.new_context(locale="ja-JP", viewport=PHONE)
    page = context.new_page()
    page.goto(server["url"])
    page.wait_for_selector("#signin:not([hidden])")
    assert not page.is_visible("#menu-toggle")
    card = page.locator("#signin").bounding_box()
    assert card is not None
    assert card["x"] >= 8 and card["x"] + card["width"] <= PHONE["width"] - 8, card
    page.fill("#token", "shb_wrong")
    page.press("#token", "Enter")
    page.wait_for_function("() => document.querySelector('#signin-error').textContent")
    colour = "e => getComputedStyle(e).color"
    hint = page.locator("#signin > p.hint").evaluate(colour)
    assert page.locator("#signin-error").evaluate(colour) != hint
    page.fill("#token", server["token"])
    page.press("#token", "Enter")
    page.wait_for_selector("#app:not([hidden])")
    assert page.is_visible("#menu-toggle")
    context.close()


def test_a_new_topic_in_a_conversation_is_searched_as_written(page: Any) -> None:
    page.click("#new-chat")
    assert "9.2kg" in ask(page, "AQ-300の重さは何kgですか？").inner_text()
    switched = ask(page, "有給休暇の申請方法は？")
    assert "refused" not in (switched.get_attribute("class") or ""), switched.inner_text()
    assert "検索した質問" not in switched.inner_text()  # not AQ-300の有給休暇の申請方法は？
    assert any("休暇" in t for t in switched.locator(".chip").all_inner_texts())


def test_a_past_conversation_opens_at_its_latest_answer(page: Any) -> None:
    page.set_viewport_size({"width": 1280, "height": 600})
    page.click("#new-chat")
    for question in (
        "有給休暇の申請方法は？",
        "AQ-300の重さは何kgですか？",
        "AQ-300のフィルターの交換時期は？",
        "育児休業は何回に分けて取れますか？",
        "AQ-300の保証期間は？",
    ):
        ask(page, question)
    ident = page.evaluate("() => new URLSearchParams(location.hash.slice(1)).get('c')")
    page.click("#new-chat")
    page.click(f"#conversations li[data-id='{ident}'] button.open")
    page.wait_for_function("() => document.querySelectorAll('.msg.a').length === 5")
    last = page.locator(".msg.a").last.bounding_box()
    log = page.locator("#messages").bounding_box()
    assert last is not None and log is not None
    assert last["y"] + last["height"] <= log["y"] + log["height"] + 1, (last, log)


def test_the_phone_menu_closes_with_escape_and_says_what_it_does(page: Any) -> None:
    page.set_viewport_size(PHONE)
    toggle = page.locator("#menu-toggle")
    assert toggle.inner_text() == "メニュー"
    toggle.click()
    assert page.is_visible("#sidebar")
    assert toggle.inner_text() == "閉じる" and toggle.get_attribute("aria-expanded") == "true"
    page.keyboard.press("Escape")
    assert not page.is_visible("#sidebar")
    assert toggle.inner_text() == "メニュー" and toggle.get_attribute("aria-expanded") == "false"
    assert page.evaluate("() => document.activeElement.id") == "menu-toggle"


@pytest.mark.parametrize("tab", ["#tab-docs", "#tab-admin"])
def test_wide_tables_scroll_on_their_own_on_a_phone(page: Any, tab: str) -> None:
    page.set_viewport_size(PHONE)
    page.click(tab)
    page.wait_for_function(
        "tab => { const v = document.getElementById(document.querySelector(tab)"
        ".getAttribute('aria-controls')); return v.querySelectorAll('tbody tr').length > 0"
        " && !v.hasAttribute('aria-busy'); }",
        arg=tab,
    )
    wide = "() => document.documentElement.scrollWidth <= document.documentElement.clientWidth"
    assert page.evaluate(wide), "the page scrolls sideways"
    view = page.locator(".view.active")
    heights = view.locator("th").evaluate_all("cells => cells.map(c => c.clientHeight)")
    line = view.locator("th").first.evaluate("c => parseFloat(getComputedStyle(c).lineHeight)")
    assert max(heights) < 2 * line + 16, heights  # headers on one line, not a letter a line


LINES = (  # how many lines a cell's text takes (a name's, in its button)
    "e => { const r = document.createRange(); r.selectNodeContents(e.querySelector('button') || e);"
    " return r.getClientRects().length; }"
)


def test_the_document_list_on_a_phone_keeps_names_readable(page: Any) -> None:
    """A name keeps several letters a line (not two or three) and 取り込み済み stays whole; the
    table scrolls on its own instead."""
    page.set_viewport_size(PHONE)
    page.click("#tab-docs")
    page.wait_for_function("() => document.querySelectorAll('#docs tr').length > 3")
    rows = page.locator("#docs tr")
    for i in range(rows.count()):
        name, _, state = (rows.nth(i).locator("td").nth(n) for n in range(3))
        text = name.inner_text()
        assert len(text) / name.evaluate(LINES) >= 5, text
        if state.inner_text() == "取り込み済み":
            assert state.evaluate(LINES) == 1


def test_the_upload_form_says_what_it_takes_and_when_nothing_is_chosen(page: Any) -> None:
    page.click("#tab-upload")
    types = page.inner_text("#file-types")
    assert all(t in types for t in (".pdf", ".docx", ".xlsx", ".pptx", ".csv", ".md")), types
    assert ".pdf" in (page.get_attribute("#files", "accept") or "")
    page.click("#upload-button")
    assert "ファイルが選ばれていません" in page.inner_text("#upload-results")


def test_the_skip_link_and_a_question_box_that_grows(page: Any) -> None:
    page.click("#new-chat")
    ask(page, "AQ-300の重さは何kgですか？")  # a conversation is open: #c= in the address
    opened = page.evaluate("() => location.hash")
    assert opened.startswith("#c=")
    first = page.evaluate(
        "() => document.querySelector('a[href], button, input, textarea, select').className"
    )
    assert first == "skip"  # the first stop of the Tab key
    page.focus(".skip")
    assert page.locator(".skip").is_visible()  # shown once focused
    page.keyboard.press("Enter")
    assert page.evaluate("() => document.activeElement.id") == "question"
    assert page.evaluate("() => location.hash") == opened  # the conversation stays open
    before = page.locator("#question").bounding_box()
    page.fill("#question", "")
    page.keyboard.type("一行目")
    for line in ("二行目", "三行目", "四行目", "五行目"):
        page.keyboard.press("Shift+Enter")
        page.keyboard.type(line)
    after = page.locator("#question").bounding_box()
    assert before is not None and after is not None and after["height"] > before["height"] * 1.5
    assert page.locator(".msg.q").count() == 1  # Shift+Enter never sends
