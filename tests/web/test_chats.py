"""Chats as people use them, in a real browser against a real server: an answer's versions
‹1/2› kept across a reload, a question edited and sent again (by its button and by ↑ and
Enter), the sidebar's search, pins, a chat's tools beside its whole title, and a chat saved as
a Markdown file; axe-core finds no serious problem on them."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.web.helpers import ask, hold_answers, settled
from tests.web.test_accessibility import violations

pytestmark = [pytest.mark.slow, pytest.mark.browser]


def api(server: dict[str, str], path: str) -> Any:
    request = urllib.request.Request(
        server["url"] + path, headers={"Authorization": f"Bearer {server['token']}"}
    )
    with urllib.request.urlopen(request) as response:
        return json.load(response)


def opened(page: Any) -> str:
    """The open conversation's id, from the address."""
    return str(page.evaluate("() => new URLSearchParams(location.hash.slice(1)).get('c')"))


def listed(page: Any, ident: str) -> Any:
    return page.locator(f"#conversations li[data-id='{ident}']")


def test_an_answers_versions_are_kept_and_chosen_across_a_reload(
    page: Any, server: dict[str, str]
) -> None:
    page.click("#new-chat")
    answer = ask(page, "AQ-300の重さは何kgですか？")
    ask(page, "AQ-300の保証期間は？")
    answer.get_by_role("button", name="再生成").click()
    versions = answer.locator(".versions")
    versions.wait_for()
    settled(page, 2)
    assert versions.text_content() == "‹2/2›"
    assert answer.get_by_role("button", name="次の回答").is_disabled()
    answer.get_by_role("button", name="前の回答").click()
    page.wait_for_function(
        "() => document.querySelector('.msg.a .versions .count').textContent === '1/2'"
    )
    assert "9.2kg" in answer.locator(".text").inner_text()
    focused = page.evaluate("() => document.activeElement.getAttribute('aria-label')")
    assert focused == "次の回答"  # ‹ is the end now: the keyboard stays on the arrows
    ident = opened(page)
    kept = api(server, f"/api/conversations/{ident}")["history"]
    assert [(t["version"], t["versions"]) for t in kept] == [(1, 2), (1, 1)]
    page.reload()
    page.wait_for_function("() => document.querySelectorAll('.msg.a').length === 2")
    again = page.locator(".msg.a").first
    assert again.locator(".versions").text_content() == "‹1/2›"  # the chosen one, after a reload
    assert page.locator(".msg.q").count() == 2


def test_a_question_is_edited_and_sent_again(page: Any, server: dict[str, str]) -> None:
    page.click("#new-chat")
    ask(page, "有給休暇は何日もらえますか？")
    ask(page, "AQ-300の重さは何kgですか？")
    ask(page, "AQ-300の保証期間は？")
    second = page.locator(".msg.q").nth(1)
    second.get_by_role("button", name="質問を編集して送り直す").click()
    box = second.get_by_role("textbox", name="質問を編集")
    assert box.input_value() == "AQ-300の重さは何kgですか？"
    assert "後の会話は削除されます" in second.inner_text()
    box.press("Escape")  # put back as it was
    assert page.locator(".msg.q").nth(1).inner_text().startswith("AQ-300の重さは何kgですか？")
    second.get_by_role("button", name="質問を編集して送り直す").click()
    box.fill("AQ-300のメーカー希望小売価格はいくらですか？")
    box.press("Enter")
    settled(page, 2)  # the turn after it is gone
    assert [page.locator(".msg.q").nth(i).inner_text() for i in range(2)] == [
        "有給休暇は何日もらえますか？",
        "AQ-300のメーカー希望小売価格はいくらですか？",
    ]
    assert "54,780円" in page.locator(".msg.a").nth(1).inner_text()
    kept = api(server, f"/api/conversations/{opened(page)}")["history"]
    assert [t["question"] for t in kept] == [
        "有給休暇は何日もらえますか？",
        "AQ-300のメーカー希望小売価格はいくらですか？",
    ]
    # the keyboard alone: ↑ in the empty question box edits the last question, Enter sends
    page.focus("#question")
    page.keyboard.press("ArrowUp")
    last = page.locator(".msg.q").nth(1).get_by_role("textbox", name="質問を編集")
    assert last.evaluate("e => e === document.activeElement")
    last.fill("AQ-250のメーカー希望小売価格はいくらですか？")
    page.keyboard.press("Enter")
    page.wait_for_function(
        "() => !document.querySelector('.msg.a[aria-busy]')"
        " && document.querySelectorAll('.msg.a')[1].innerText.includes('43,780円')"
    )
    assert page.locator(".msg.q").count() == 2
    kept = api(server, f"/api/conversations/{opened(page)}")["history"]
    assert kept[1]["question"] == "AQ-250のメーカー希望小売価格はいくらですか？"


def test_a_stopped_regenerate_or_edit_leaves_the_turn_as_it_was(page: Any) -> None:
    page.click("#new-chat")
    first = ask(page, "有給休暇は何日もらえますか？")
    shown = first.locator(".text").inner_text()
    ask(page, "AQ-300の重さは何kgですか？")
    held = hold_answers(page)  # the answer stays "being written" until stopped
    first.get_by_role("button", name="再生成").click()
    page.wait_for_selector("#stop-button:not([hidden])")
    page.click("#stop-button")
    page.wait_for_function(
        "() => document.querySelector('.msg.a .reason[role=status]')?.textContent"
        ".includes('前の回答を表示しています')"
    )
    restored = page.locator(".msg.a").first
    assert "停止しました。" in restored.inner_text()
    assert (
        restored.locator(".text").inner_text() == shown
        and restored.locator(".versions").count() == 0
    )
    question = page.locator(".msg.q").first
    question.get_by_role("button", name="質問を編集して送り直す").click()
    question.get_by_role("textbox", name="質問を編集").fill("慶弔休暇は何日ですか？")
    question.get_by_role("textbox", name="質問を編集").press("Enter")
    page.wait_for_selector("#stop-button:not([hidden])")
    assert page.locator(".msg.q").count() == 1  # shown removed while it is being answered
    page.click("#stop-button")
    page.wait_for_function(
        "() => document.querySelector('.msg.a .reason[role=status]')?.textContent"
        ".includes('質問は書き換えていません')"
    )
    page.unroute("**/api/ask/stream")
    assert len(held) == 2
    assert [page.locator(".msg.q").nth(i).inner_text() for i in range(2)] == [
        "有給休暇は何日もらえますか？",
        "AQ-300の重さは何kgですか？",
    ]


def test_the_sidebar_finds_chats_by_their_words(page: Any) -> None:
    page.click("#new-chat")
    ask(page, "育児休業は何回に分けて取れますか？")
    leave = opened(page)
    page.click("#new-chat")
    ask(page, "AQ-300のフィルターの交換時期は？")
    filters = opened(page)
    page.fill("#conv-search", "分けて")  # in the question, not in the title (育児休業)
    page.wait_for_function("() => document.querySelector('#conv-found').textContent.includes('件')")
    assert listed(page, leave).count() == 1 and listed(page, filters).count() == 0
    assert "分けて" in listed(page, leave).locator(".when").inner_text()  # where it matched
    page.fill("#conv-search", "存在しない言葉ですよ")
    page.wait_for_function(
        "() => document.querySelector('#conv-found').textContent === '見つかりませんでした'"
    )
    assert page.locator("#conversations li").count() == 0
    page.press("#conv-search", "Escape")  # back to the whole list
    listed(page, filters).wait_for()
    assert listed(page, leave).count() == 1 and page.input_value("#conv-search") == ""


def test_a_pinned_chat_stays_on_top_after_a_reload(page: Any) -> None:
    page.click("#new-chat")
    ask(page, "慶弔休暇は何日ですか？")
    pinned = opened(page)
    page.click("#new-chat")
    ask(page, "ERR-105が出たら？")
    pin = listed(page, pinned).locator("button.pin")
    assert pin.get_attribute("aria-pressed") == "false"
    pin.click()
    page.wait_for_function(
        "id => document.querySelector('#conversations li')?.dataset.id === id", arg=pinned
    )
    assert page.locator("#conversations h3").first.inner_text() == "ピン留め"
    page.reload()
    page.wait_for_function(
        "id => document.querySelector('#conversations li')?.dataset.id === id", arg=pinned
    )
    unpin = listed(page, pinned).locator("button.pin")
    assert unpin.get_attribute("aria-pressed") == "true"
    unpin.click()
    page.wait_for_function(
        "id => document.querySelector('#conversations li')?.dataset.id !== id", arg=pinned
    )


def test_with_a_mouse_a_chats_title_takes_its_row_and_its_tools_come_when_wanted(
    page: Any,
) -> None:
    """The title is not cut to a few letters by four tools beside it: they come over its end
    while the pointer is on the chat, or the keyboard is in it."""
    page.set_viewport_size({"width": 1366, "height": 900})
    page.click("#new-chat")
    ask(page, "AQ-300のメーカー希望小売価格はいくらですか？")
    item = listed(page, opened(page))
    title, tools = item.locator("button.open"), item.locator(".tools")
    shown = "e => getComputedStyle(e).opacity"
    page.mouse.move(900, 500)  # over the chat, not the list
    row, used = item.bounding_box(), title.bounding_box()
    assert row is not None and used is not None
    assert used["width"] >= row["width"] - 2, (used, row)
    assert tools.evaluate(shown) == "0"
    item.hover()
    assert tools.evaluate(shown) == "1"
    page.mouse.move(900, 500)
    assert tools.evaluate(shown) == "0"
    title.focus()
    assert tools.evaluate(shown) == "1"
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.classList.contains('pin')")


def test_a_chat_is_saved_as_markdown_with_its_sources(page: Any, tmp_path: Path) -> None:
    page.click("#new-chat")
    ask(page, "AQ-300のメーカー希望小売価格はいくらですか？")
    ident = opened(page)
    with page.expect_download() as started:
        listed(page, ident).locator("button.download").click()
    download = started.value
    assert download.suggested_filename == "AQ-300 メーカー希望小売価格.md"
    saved = tmp_path / "chat.md"
    download.save_as(saved)
    text = saved.read_text(encoding="utf-8")
    assert text.startswith("# AQ-300 メーカー希望小売価格\n")
    assert "## 質問 1\n\nAQ-300のメーカー希望小売価格はいくらですか？\n" in text
    assert "54,780円" in text
    assert "出典:\n\n- \\[1\\] 製品/" in text


def test_versions_editing_and_search_have_no_serious_violations(page: Any) -> None:
    page.click("#new-chat")
    answer = ask(page, "AQ-300の重さは何kgですか？")
    answer.get_by_role("button", name="再生成").click()
    answer.locator(".versions").wait_for()
    settled(page, 1)
    page.locator(".msg.q").first.get_by_role("button", name="質問を編集して送り直す").click()
    page.fill("#conv-search", "AQ-300")
    page.wait_for_function("() => document.querySelector('#conv-found').textContent.includes('件')")
    found = violations(page)
    assert found == [], json.dumps(found, ensure_ascii=False, indent=1)
