"""The web page in a real headless browser (Debian's chromium driven by Playwright) against a
real server process: sign in, ask with streaming and citations, open a citation, see a
refusal, upload a file and find it answerable, see a failed document and its reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.web.helpers import ask, upload

pytestmark = [pytest.mark.slow, pytest.mark.browser]


def test_sign_in_is_required(browser: Any, server: dict[str, str]) -> None:
    context = browser.new_context()
    page = context.new_page()
    page.goto(server["url"])
    page.wait_for_selector("#signin:not([hidden])")
    page.fill("#token", "shb_wrong")
    page.press("#token", "Enter")
    page.wait_for_function("() => document.querySelector('#signin-error').textContent.length > 0")
    assert "正しくありません" in page.inner_text("#signin-error")
    page.fill("#token", server["token"])
    page.click("#signin button[type=submit]")
    page.wait_for_selector("#app:not([hidden])")
    assert "ファイル" in page.inner_text("#status")
    assert "admin" in page.inner_text("#who")
    context.close()


def test_ask_streams_an_answer_with_citations(page: Any) -> None:
    answer = ask(page, "有給休暇は入社後いつから付与されますか？")
    text = answer.inner_text()
    assert "6か月" in text or "６か月" in text
    chips = answer.locator(".chip")
    assert chips.count() >= 1
    assert "休暇規程.md" in chips.first.inner_text()
    chips.first.click()
    dialog = page.locator("#passage")
    dialog.wait_for(state="visible")
    assert "休暇規程.md" in page.inner_text("#passage-where")
    assert page.inner_text("#passage-text").strip()
    page.keyboard.press("Escape")
    dialog.wait_for(state="hidden")


def test_the_page_works_from_the_keyboard(page: Any) -> None:
    answer = ask(page, "有給休暇の申請方法は？")
    chip = answer.locator(".chip").first
    chip.focus()
    page.keyboard.press("Enter")
    page.locator("#passage").wait_for(state="visible")
    page.keyboard.press("Escape")
    page.locator("#passage").wait_for(state="hidden")
    assert page.evaluate("() => document.activeElement.classList.contains('chip')")
    page.focus("#tab-chat")
    page.keyboard.press("ArrowRight")
    assert page.get_attribute("#tab-upload", "aria-selected") == "true"
    assert page.evaluate("() => document.activeElement.id") == "tab-upload"
    page.keyboard.press("ArrowRight")
    assert page.is_visible("#view-docs") and not page.is_visible("#view-chat")
    page.keyboard.press("ArrowRight")  # an admin has the admin view
    assert page.is_visible("#view-admin")
    page.keyboard.press("ArrowRight")  # wraps round to the chat
    assert page.is_visible("#view-chat")


def test_a_question_the_documents_do_not_answer_is_refused(page: Any) -> None:
    answer = ask(page, "ブラックホールの蒸発を説明した物理学者は誰ですか？")
    assert answer.inner_text().strip().splitlines()[0] == "ドキュメントに記載がありません"
    assert answer.locator(".reason").inner_text().startswith("理由: ")
    assert "refused" in (answer.get_attribute("class") or "")
    assert answer.locator(".chip").count() == 0


def test_a_follow_up_is_asked_in_the_conversation(page: Any) -> None:
    page.click("#new-chat")
    first = ask(page, "AQ-300のメーカー希望小売価格はいくらですか？")
    assert "54,780円" in first.inner_text()
    follow = ask(page, "では、AQ-250は？")
    text = follow.inner_text()
    assert "検索した質問: AQ-250のメーカー希望小売価格はいくらですか" in text
    assert "43,780円" in text
    page.click("#new-chat")
    assert page.locator(".msg").count() == 0
    alone = ask(page, "では、AQ-250は？")
    assert "検索した質問" not in alone.inner_text()


def test_upload_then_the_file_is_answerable(page: Any, server: dict[str, str]) -> None:
    note = Path(server["base"]) / "社内報_2025年11月号.md"
    note.write_text(
        "# 社内報 2025年11月号\n\n## 新しい保養所\n\n軽井沢の新しい保養所は2026年4月に開業します。"
        "予約は総務部の内線2207で受け付けます。\n",
        encoding="utf-8",
    )
    assert "追加" in upload(page, note, "総務")
    page.click("#tab-chat")
    answer = ask(page, "新しい保養所の予約は何番で受け付けていますか？")
    assert "2207" in answer.inner_text()
    assert "社内報_2025年11月号.md" in answer.locator(".chip").first.inner_text()


def test_files_dropped_on_the_page_are_uploaded_with_results_per_file(page: Any) -> None:
    page.click("#tab-upload")
    page.fill("#upload-category", "総務")
    dropped = page.evaluate_handle(
        """() => {
            const data = new DataTransfer();
            const text = "# 備品\\n\\n## 貸出\\n\\n"
                + "プロジェクターの貸出は総務部の窓口で受け付ける。\\n";
            data.items.add(new File([text], "備品貸出.md", { type: "text/markdown" }));
            data.items.add(new File(["MZ"], "setup.exe", { type: "application/octet-stream" }));
            return data;
        }"""
    )
    page.dispatch_event("#drop", "dragover", {"dataTransfer": dropped})
    assert "over" in (page.get_attribute("#drop", "class") or "")
    page.dispatch_event("#drop", "drop", {"dataTransfer": dropped})
    page.wait_for_function("() => document.querySelectorAll('#upload-results tr').length === 2")
    rows = page.locator("#upload-results tr")
    texts = {rows.nth(i).inner_text() for i in range(2)}
    assert any("備品貸出.md" in t and "追加" in t for t in texts), texts
    assert any("setup.exe" in t and "失敗" in t and ".exe" in t for t in texts), texts
    assert "over" not in (page.get_attribute("#drop", "class") or "")
    bar = page.locator("#upload-progress")
    assert bar.get_attribute("aria-label") == "アップロードの進み具合"
    bar.wait_for(state="hidden")  # done: the results say how it went, not a full bar
    page.click("#tab-chat")
    answer = ask(page, "プロジェクターの貸出はどこで受け付けていますか？")
    assert "総務部の窓口" in answer.inner_text()


def test_document_list_shows_failures_with_reasons(page: Any) -> None:
    page.click("#tab-docs")
    page.wait_for_function("() => document.querySelectorAll('#docs tr').length > 3")
    page.select_option("#doc-filter", "failed")
    page.wait_for_function("() => document.querySelectorAll('#docs tr').length <= 3")
    listed = page.inner_text("#docs")
    assert "壊れた議事録.docx" in listed and "失敗" in listed
    page.select_option("#doc-filter", "")
    page.wait_for_function("() => document.querySelectorAll('#docs tr').length > 3")
    page.wait_for_timeout(500)  # a stale answer for the earlier filter would land in this time
    assert "休暇規程.md" in page.inner_text("#docs")


def test_categories_filter_and_a_narrow_window(page: Any) -> None:
    page.set_viewport_size({"width": 380, "height": 760})
    assert not page.is_visible("#sidebar")  # a phone's first screen is the chat
    page.click("#menu-toggle")
    categories = page.inner_text("#categories")
    assert "人事" in categories and "製品" in categories
    page.check("#categories input[value='製品']")
    page.click("#menu-toggle")
    assert "絞り込み: 製品" in page.inner_text("#scope-note")
    answer = ask(page, "有給休暇の申請方法は？")
    assert "製品" in page.locator(".msg.q").last.locator(".scope").inner_text()
    chips = answer.locator(".chip")
    for i in range(chips.count()):
        assert "製品/" in chips.nth(i).inner_text()
    box = page.locator("#question").bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 380
