"""The admin view and the document list as an admin sees them, in a real browser against a real
server: users and groups, ingest runs, readers per document, and failed uploads listed with
their reasons in counts that agree with /api/status. A user who is not an admin sees no admin
tab, and the server refuses them its lists."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.web.helpers import cli, sign_in, upload

pytestmark = [pytest.mark.slow, pytest.mark.browser]


def api(server: dict[str, str], path: str, token: str | None = None) -> Any:
    request = urllib.request.Request(
        server["url"] + path, headers={"Authorization": f"Bearer {token or server['token']}"}
    )
    with urllib.request.urlopen(request) as response:
        return json.load(response)


def test_the_admin_view_lists_users_groups_and_ingest_runs(
    page: Any, server: dict[str, str]
) -> None:
    index = str(Path(server["base"]) / "index")
    cli("users", "add", "hana", "--group", "hr", "--index", index)
    note = Path(server["base"]) / "備品台帳.md"
    note.write_text("# 備品台帳\n\n## 貸出\n\nプロジェクターは2台ある。\n", encoding="utf-8")
    upload(page, note, "総務")  # an upload is audited with its readers
    page.click("#tab-admin")
    page.wait_for_selector("#view-admin.active:not([aria-busy])")
    users = page.inner_text("#admin-users")
    assert "admin" in users and "管理者" in users
    assert re.search(r"hana\s+hr\s+利用者\s+0", users), users
    groups = page.inner_text("#admin-groups")
    assert "hr" in groups and "hana" in groups and "public（全員）" in groups
    runs = api(server, "/api/admin/ingests")["items"]
    assert runs, "the server's own ingest is a run"
    first = page.locator("#admin-ingests tr").first.inner_text()
    assert str(runs[0]["added"]) in first and str(runs[0]["failed"]) in first
    assert page.locator("#admin-audit tr").count() >= 1
    audit = page.inner_text("#admin-audit")
    assert "uploads/総務/備品台帳.md" in audit  # as the document list names it
    assert server["base"] not in audit and '["' not in audit  # no server path, no JSON


def test_a_user_who_is_not_an_admin_has_no_admin_view(browser: Any, server: dict[str, str]) -> None:
    index = str(Path(server["base"]) / "index")
    cli("users", "add", "jiro", "--index", index)
    token = cli("tokens", "create", "jiro", "--index", index)
    for path in ("/api/admin/users", "/api/admin/groups", "/api/admin/ingests"):
        with pytest.raises(urllib.error.HTTPError) as refused:
            api(server, path, token)
        assert refused.value.code == 403
    context = browser.new_context(locale="ja-JP")
    page = sign_in(context.new_page(), server["url"], token)
    assert not page.is_visible("#tab-admin")
    page.click("#tab-docs")
    page.wait_for_function("() => document.querySelectorAll('#docs tr').length > 0")
    assert not page.locator("th.admin-only").first.is_visible()  # readers are for admins
    context.close()


def test_a_failed_upload_is_listed_and_the_counts_agree(page: Any, server: dict[str, str]) -> None:
    broken = Path(server["base"]) / "壊れた集計表.xlsx"
    broken.write_bytes(b"PK\x03\x04 this is not a workbook")
    results = upload(page, broken, "総務")
    assert "壊れた集計表.xlsx" in results and "失敗" in results
    page.click("#tab-docs")
    page.select_option("#doc-filter", "")
    page.wait_for_function("() => /件/.test(document.querySelector('#docs-count').textContent)")
    page.wait_for_function(
        "() => document.querySelector('#docs').textContent.includes('壊れた集計表.xlsx')"
    )
    row = page.locator("#docs tr", has_text="壊れた集計表.xlsx")
    assert (
        "失敗: ファイルが壊れているか、形式が正しくありません（" in row.inner_text()
    )  # + its reason
    assert "ファイルが壊れている" in results
    assert "uploads/総務/" in row.inner_text()
    status = api(server, "/api/status")
    count = page.inner_text("#docs-count")
    assert f"{status['files'] + status['failed']} 件" in count, count
    assert f"うち失敗 {status['failed']} 件" in count, count
    sidebar = f"{status['files']} ファイル・{status['chunks']} チャンク・失敗 {status['failed']}"
    page.wait_for_function(
        "text => document.querySelector('#status').textContent.includes(text)", arg=sidebar
    )


def test_the_document_list_shows_readers_and_opens_documents(page: Any) -> None:
    page.click("#tab-docs")
    page.wait_for_function("() => document.querySelectorAll('#docs tr').length > 3")
    assert page.locator("th.admin-only").first.is_visible()
    row = page.locator("#docs tr", has_text="休暇規程.md")
    assert "public" in row.inner_text()
    row.locator("button.link").click()
    page.locator("#document").wait_for(state="visible")
    # the dialog opens at once with a placeholder title; the document arrives after
    page.wait_for_function(
        "() => document.querySelector('#document-title').textContent.includes('休暇規程.md')"
    )
    assert "年次有給休暇" in page.inner_text("#document-text")
    page.keyboard.press("Escape")
