"""The page as a daily tool, in a real browser against a real server: the question box stays
in view, Enter and the IME never send twice or too early, a long question keeps its text,
answers stop on request, conversations survive a reload and can be renamed and deleted,
feedback is stored, and the page's own files load (no 404 favicon)."""

from __future__ import annotations

import json
import re
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from shirabe.evaluation.cases import load_cases

from tests.support import ROOT
from tests.web.helpers import ask, cli, hold_answers, sign_in, upload

pytestmark = [pytest.mark.slow, pytest.mark.browser]

SHOTS = ROOT / "build" / "screenshots"


def api(server: dict[str, str], path: str) -> Any:
    request = urllib.request.Request(
        server["url"] + path, headers={"Authorization": f"Bearer {server['token']}"}
    )
    with urllib.request.urlopen(request) as response:
        return json.load(response)


def in_view(page: Any, selector: str) -> bool:
    box = page.locator(selector).bounding_box()
    size = page.viewport_size
    return (
        box is not None
        and box["y"] >= 0
        and box["y"] + box["height"] <= size["height"]
        and box["x"] + box["width"] <= size["width"]
    )


@pytest.mark.parametrize("viewport", [(1280, 800), (390, 844)], ids=["desktop", "phone"])
def test_the_question_box_stays_at_the_bottom(page: Any, viewport: tuple[int, int]) -> None:
    page.set_viewport_size({"width": viewport[0], "height": viewport[1]})
    questions = [
        "有給休暇の申請方法は？",
        "AQ-300の重さは何kgですか？",
        "ERR-105が出たら？",
        "AQ-300のフィルターの交換時期は？",
        "育児休業は何回に分けて取れますか？",
        "AQ-300の保証期間は？",
        "慶弔休暇は何日ですか？",
    ]
    overflowing = "() => { const m = document.querySelector('#messages');" + (
        " return m.scrollHeight > m.clientHeight; }"
    )
    for question in questions:
        ask(page, question)
        if page.evaluate(overflowing):
            break
    assert page.evaluate(overflowing), "the conversation should be longer than its box"
    assert in_view(page, "#question") and in_view(page, "#ask-button")
    assert page.evaluate("() => document.scrollingElement.scrollTop") == 0  # only the log scrolls


def test_enter_never_sends_twice_nor_during_ime_composition(page: Any) -> None:
    page.fill("#question", "ゆうきゅう")
    # the IME confirms its conversion with Enter: keyCode 229 / isComposing must not send
    page.dispatch_event("#question", "compositionstart")
    page.evaluate(
        "() => document.querySelector('#question').dispatchEvent(new KeyboardEvent('keydown',"
        " {key: 'Enter', keyCode: 229, isComposing: true, bubbles: true}))"
    )
    page.dispatch_event("#question", "compositionend")
    assert page.locator(".msg.q").count() == 0
    assert page.input_value("#question") == "ゆうきゅう"
    held = hold_answers(page)  # the answer stays "being written" until released
    page.fill("#question", "有給休暇は何日もらえますか？")
    page.press("#question", "Enter")
    page.wait_for_selector("#stop-button:not([hidden])")
    page.fill("#question", "二度目")
    page.press("#question", "Enter")
    assert page.locator(".msg.q").count() == 1
    assert page.input_value("#question") == "二度目"  # kept, not sent
    for route in held:
        route.continue_()
    page.unroute("**/api/ask/stream")
    page.wait_for_function("() => !document.querySelector('.msg.a[aria-busy]')")
    assert page.locator(".msg.q").count() == 1


def test_a_long_question_keeps_its_text_and_says_the_limit(page: Any) -> None:
    text = "有給休暇" * 501  # 2,004 characters
    page.fill("#question", text)
    assert page.inner_text("#counter") == "2004 / 2000"
    assert "2000 文字まで" in page.inner_text("#limit-note")
    page.press("#question", "Enter")
    assert page.locator(".msg.q").count() == 0
    assert page.input_value("#question") == text


def test_stop_ends_the_answer(page: Any) -> None:
    held = hold_answers(page)  # the answer stays "being written" until released
    page.fill("#question", "出張旅費の精算方法を教えてください")
    page.press("#question", "Enter")
    page.wait_for_selector("#stop-button:not([hidden])")
    progress = page.locator(".msg.a[aria-busy] .progress")
    assert progress.inner_text() == "文書を検索しています…"  # a sign of work while searching
    assert progress.get_attribute("role") == "status"  # read out by screen readers
    page.click("#stop-button")
    page.wait_for_function("() => !document.querySelector('.msg.a[aria-busy]')")
    page.unroute("**/api/ask/stream")
    assert held, "the answer's request was made"
    assert page.locator(".msg.a .progress").count() == 0
    assert page.is_visible("#ask-button") and not page.is_visible("#stop-button")
    answer = page.locator(".msg.a").last
    assert "停止しました" in answer.inner_text()
    assert answer.get_by_role("button", name="再試行").is_visible()


def test_a_stop_that_came_after_the_answer_was_kept_shows_the_kept_answer(
    page: Any, server: dict[str, str]
) -> None:
    page.click("#new-chat")
    ask(page, "有給休暇は何日もらえますか？")  # the conversation exists on the server
    ident = page.evaluate("() => new URLSearchParams(location.hash.slice(1)).get('c')")
    held = hold_answers(page)  # the page's request never gets its reply
    question = "AQ-300のメーカー希望小売価格はいくらですか？"
    page.fill("#question", question)
    page.press("#question", "Enter")
    page.wait_for_selector("#stop-button:not([hidden])")
    # meanwhile the server has answered the question and kept it in the conversation
    body = json.dumps({"question": question, "conversation": ident}).encode()
    request = urllib.request.Request(
        server["url"] + "/api/ask",
        data=body,
        headers={"Authorization": f"Bearer {server['token']}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request) as response:
        assert json.load(response)["turn"] == 2
    page.click("#stop-button")
    page.wait_for_function(
        "() => [...document.querySelectorAll('.msg.a')].pop().textContent"
        ".includes('記録されています')"
    )
    page.unroute("**/api/ask/stream")
    assert held
    settled = page.locator(".msg.a").last
    assert "54,780円" in settled.inner_text() and "停止しました" not in settled.inner_text()
    assert settled.get_attribute("data-turn") == "2"


def test_a_conversation_survives_a_reload_and_can_be_renamed_and_deleted(
    page: Any, server: dict[str, str]
) -> None:
    page.click("#new-chat")
    ask(page, "AQ-300のメーカー希望小売価格はいくらですか？")
    ask(page, "では、AQ-250は？")
    ident = page.evaluate("() => new URLSearchParams(location.hash.slice(1)).get('c')")
    assert ident
    page.reload()
    page.wait_for_function("() => document.querySelectorAll('.msg.a').length === 2")
    assert "43,780円" in page.locator(".msg.a").nth(1).inner_text()
    item = page.locator(f"#conversations li[data-id='{ident}']")
    assert "AQ-300 メーカー希望小売価格" in item.inner_text()  # titled by its key terms
    assert "current" in (item.get_attribute("class") or "")
    item.locator("button.tool.edit").click()  # the page's own dialog, not the browser's prompt
    page.wait_for_selector("#text-dialog[open]")
    assert page.input_value("#text-dialog-input") == "AQ-300 メーカー希望小売価格"
    page.fill("#text-dialog-input", "価格の比較")
    page.keyboard.press("Enter")
    page.wait_for_function(
        "id => (document.querySelector(`#conversations li[data-id='${id}']`) || {}).textContent"
        "?.includes('価格の比較')",
        arg=ident,
    )
    titles = [c["title"] for c in api(server, "/api/conversations")["conversations"]]
    assert "価格の比較" in titles
    page.locator(f"#conversations li[data-id='{ident}'] button.tool.trash").click()
    page.wait_for_selector("#confirm[open]")
    assert "価格の比較" in page.inner_text("#confirm-text")
    page.click("#confirm-ok")
    page.wait_for_function(
        "id => !document.querySelector(`#conversations li[data-id='${id}']`)", arg=ident
    )
    assert ident not in {c["id"] for c in api(server, "/api/conversations")["conversations"]}
    assert page.locator(".msg").count() == 0


def test_feedback_is_stored_with_the_answer(page: Any, server: dict[str, str]) -> None:
    page.click("#new-chat")
    answer = ask(page, "AQ-300の重さは何kgですか？")
    assert "9.2kg" in answer.inner_text()  # 質量 in the spec table, on a corpus of two folders
    answer.get_by_role("button", name="役に立たなかった").click()
    answer.locator(".feedback-form input").fill("単位をkgで")
    answer.locator(".feedback-form button").click()
    answer.locator(".thanks").wait_for()
    assert answer.get_by_role("button", name="役に立たなかった").get_attribute("aria-pressed") == (
        "true"
    )
    ident = page.evaluate("() => new URLSearchParams(location.hash.slice(1)).get('c')")
    kept = api(server, f"/api/conversations/{ident}")
    assert kept["history"][0]["question"] == "AQ-300の重さは何kgですか？"
    page.reload()  # what was given is shown again
    page.wait_for_function("() => document.querySelectorAll('.msg.a').length === 1")
    shown = page.locator(".msg.a").first
    assert shown.get_by_role("button", name="役に立たなかった").get_attribute("aria-pressed") == (
        "true"
    )
    assert shown.get_by_role("button", name="役に立った").get_attribute("aria-pressed") == "false"
    assert "単位をkgで" in shown.inner_text()


def test_feedback_given_on_the_page_becomes_eval_cases(page: Any, server: dict[str, str]) -> None:
    page.click("#new-chat")
    liked = ask(page, "AQ-300のメーカー希望小売価格はいくらですか？")
    liked.get_by_role("button", name="役に立った").click()
    liked.locator(".feedback-form").wait_for()
    disliked = ask(page, "有給休暇は何日前までに申請しますか？")
    disliked.get_by_role("button", name="役に立たなかった").click()
    disliked.locator(".feedback-form input").fill("日数が違う")
    disliked.locator(".feedback-form button").click()
    disliked.locator(".thanks").wait_for()

    index = str(Path(server["base"]) / "index")
    exported = Path(server["base"]) / "feedback.yaml"
    cli("feedback", "export", "--index", index, "--out", str(exported))
    cases = {c.question: c for c in load_cases(exported)}
    up = cases["AQ-300のメーカー希望小売価格はいくらですか？"]
    down = cases["有給休暇は何日前までに申請しますか？"]
    assert up.kind == "feedback-up" and down.kind == "feedback-down"
    assert "# comment: 日数が違う" in exported.read_text(encoding="utf-8")
    scored = json.loads(cli("eval", str(exported), "--index", index, "--json"))
    results = {c["id"]: c for c in scored["cases"]}
    assert results[up.id]["contained"] is True  # the liked answer comes back
    assert results[down.id]["followed"] is True  # so does the disliked one: a failing case


def test_a_refusal_under_a_filter_names_it_and_markers_open_sources(page: Any) -> None:
    page.click("#new-chat")
    page.set_viewport_size({"width": 1280, "height": 800})
    page.check("#categories input[value='製品']")
    refused = ask(page, "有給休暇の申請方法は？")
    text = refused.inner_text()
    if "ドキュメントに記載がありません" in text:
        assert "絞り込み: 製品" in text
    page.uncheck("#categories input[value='製品']")
    answer = ask(page, "AQ-300のメーカー希望小売価格はいくらですか？")
    assert answer.locator("button.cite").count() >= 1, answer.inner_html()
    answer.locator("button.cite").first.click()
    page.locator("#passage").wait_for(state="visible")
    assert "AQ-300" in page.inner_text("#passage-where")
    page.keyboard.press("Escape")


def test_the_pages_own_files_load(page: Any, server: dict[str, str]) -> None:
    failures: list[str] = []
    page.on("response", lambda r: failures.append(r.url) if r.status >= 400 else None)
    page.reload()
    page.wait_for_selector("#app:not([hidden])")
    assert failures == []
    with urllib.request.urlopen(server["url"] + "/favicon.ico") as response:
        assert response.headers["content-type"] == "image/svg+xml"
    policy = urllib.request.urlopen(server["url"] + "/").headers["content-security-policy"]
    assert "script-src 'self';" in policy and "unsafe-inline" not in policy


def test_sources_show_tables_and_the_quoted_row(page: Any) -> None:
    page.click("#new-chat")
    answer = ask(page, "AQ-300の重さは何kgですか？")
    answer.locator(".chip").first.click()
    page.locator("#passage").wait_for(state="visible")
    assert page.locator("#passage-text table").count() >= 1  # a table, not raw pipes
    assert "| ---" not in page.inner_text("#passage-text")
    assert any("9.2kg" in t for t in page.locator("#passage-text mark").all_inner_texts())
    page.keyboard.press("Escape")


def test_document_text_is_never_run_as_html(page: Any, server: dict[str, str]) -> None:
    note = Path(server["base"]) / "お知らせ_掲示板.md"
    note.write_text(
        "# 掲示板\n\n## 注意\n\n掲示板の投稿締切は毎週金曜日です。"
        '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>\n',
        encoding="utf-8",
    )
    upload(page, note, "総務")
    page.click("#tab-chat")
    answer = ask(page, "掲示板の投稿締切はいつですか？")
    answer.locator(".chip").first.click()
    page.locator("#passage").wait_for(state="visible")
    assert page.evaluate("() => window.pwned") is None
    assert page.locator("#messages img, #passage img, #messages script").count() == 0
    assert "onerror" in page.inner_text("#passage-text")  # shown as the text it is
    page.keyboard.press("Escape")


def test_a_cited_pdf_page_is_shown_with_the_passage_marked(page: Any) -> None:
    page.click("#new-chat")
    answer = ask(page, "保証書は再発行できますか？")
    chip = answer.locator(".chip", has_text=".pdf").first
    chip.click()
    page.locator("#passage").wait_for(state="visible")
    image = page.locator("#passage figure.page img")
    image.wait_for()
    page.wait_for_function(
        "() => { const i = document.querySelector('#passage figure.page img');"
        " return i && i.complete && i.naturalWidth > 0; }"
    )
    assert "ページ" in (image.get_attribute("alt") or "")
    page.keyboard.press("Escape")


def test_an_empty_chat_offers_questions_from_the_documents(page: Any) -> None:
    page.click("#new-chat")
    listed = "() => [...document.querySelectorAll('.examples .example')].map(b => b.textContent)"
    page.wait_for_function(f"() => ({listed})().length > 0")
    offered = page.evaluate(listed)
    assert 2 <= len(offered) <= 4
    assert any("休暇" in q for q in offered) and any(
        "AQ-300" in q or "製品" in q or "運転" in q for q in offered
    ), offered
    page.locator(".examples .example").first.click()
    page.wait_for_function("() => document.querySelectorAll('.msg.a:not([aria-busy])').length")
    assert page.locator(".msg.q").first.inner_text().startswith(offered[0])


def test_a_citation_opens_the_whole_document_at_its_passage(page: Any) -> None:
    page.set_viewport_size({"width": 1000, "height": 800})  # the source over the chat
    page.click("#new-chat")
    answer = ask(page, "有給休暇の申請は何日前までに行いますか？")
    chip = answer.locator(".chip", has_text="休暇規程.md").first
    chip.click()
    page.locator("#passage").wait_for(state="visible")
    cited = page.inner_text("#passage-text")
    page.click("#passage-whole")
    page.locator("#document").wait_for(state="visible")
    page.locator("#document section.cited").wait_for()
    sections = page.locator("#document section.passage")
    assert sections.count() > 3  # the whole document, not the one passage
    assert cited.strip()[:20] in page.inner_text("#document section.cited")
    assert page.locator("#document section.cited").is_visible()  # scrolled to
    page.keyboard.press("Escape")


def test_readable_at_200_percent_zoom(browser: Any, server: dict[str, str]) -> None:
    """A 1280×800 window at 200 %: 640×400 CSS pixels, two device pixels each."""
    context = browser.new_context(
        locale="ja-JP", viewport={"width": 640, "height": 400}, device_scale_factor=2
    )
    page = sign_in(context.new_page(), server["url"], server["token"])
    answer = ask(page, "AQ-300の重さは何kgですか？")
    assert "9.2kg" in answer.inner_text()
    wide = "() => document.documentElement.scrollWidth <= document.documentElement.clientWidth"
    assert page.evaluate(wide), "the page scrolls sideways"
    assert in_view(page, "#question") and in_view(page, "#ask-button")
    room = page.locator("#messages").bounding_box()
    assert room is not None and room["height"] >= 120, room  # the conversation stays readable
    font = page.evaluate("() => parseFloat(getComputedStyle(document.body).fontSize)")
    assert font >= 14
    answer.locator(".chip").first.click()
    page.locator("#passage").wait_for(state="visible")
    assert in_view(page, "#passage-close")
    page.click("#passage-whole")
    page.locator("#document section.cited").wait_for()
    assert in_view(page, "#document-close"), "閉じる scrolled away with the document"
    page.click("#document-close")
    for tab in ("#tab-upload", "#tab-docs", "#tab-chat"):
        page.click(tab)
        assert page.evaluate(wide), tab
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "chat-zoom-200.png"))
    context.close()


def test_keyboard_shortcuts_focus_the_question_and_start_a_new_chat(page: Any) -> None:
    ask(page, "AQ-300の重さは何kgですか？")
    assert page.evaluate("() => location.hash.startsWith('#c=')")
    page.click("#tab-docs")
    page.locator("#tab-docs").focus()
    page.keyboard.press("/")
    assert page.evaluate("() => document.activeElement.id") == "question"
    assert page.is_visible("#view-chat")
    page.keyboard.press("Control+Shift+O")
    page.wait_for_function("() => !document.querySelector('#messages .msg')")
    assert page.evaluate("() => location.hash") == ""
    assert page.evaluate("() => document.activeElement.id") == "question"


def test_dark_mode_follows_the_system_setting(browser: Any, server: dict[str, str]) -> None:
    def background(scheme: str) -> list[int]:
        context = browser.new_context(locale="ja-JP", color_scheme=scheme)
        page = context.new_page()
        page.goto(server["url"])
        page.wait_for_selector("#signin:not([hidden]), #app:not([hidden])")
        color = page.evaluate("() => getComputedStyle(document.body).backgroundColor")
        context.close()
        return [int(c) for c in re.findall(r"\d+", color)[:3]]

    dark, light = background("dark"), background("light")
    assert max(dark) < 60 and min(light) > 200, (dark, light)
