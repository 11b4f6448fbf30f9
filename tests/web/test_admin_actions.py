"""The admin page's actions in a real browser against a real server whose access map gives 人事
to hr alone: a failed upload removed so that a reader's list stops counting it, a user added
and signed in with a token made in the page, their group changed and their reading with it,
and a change of the access map previewed (who gains, who loses) before it is saved."""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shirabe.server.process import free_port, running

from tests.support import ROOT
from tests.web.helpers import cli, sign_in, upload
from tests.web.test_accessibility import save, violations

pytestmark = [pytest.mark.slow, pytest.mark.browser]

BROKEN_PDF = b"%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\ntrailer << >>\n%%EOF\n"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    base = tmp_path_factory.mktemp("admin-actions")
    docs = base / "docs"
    shutil.copytree(ROOT / "sample_docs" / "人事", docs / "人事")
    shutil.copytree(ROOT / "sample_docs" / "製品", docs / "製品")
    access = base / "acl.yaml"
    access.write_text("人事/**: [hr]\n", encoding="utf-8")
    index = str(base / "index")
    cli("users", "add", "admin", "--admin", "--index", index)
    cli("users", "add", "yomi", "--index", index)
    tokens = {
        "admin": cli("tokens", "create", "admin", "--index", index),
        "yomi": cli("tokens", "create", "yomi", "--index", index),
    }
    port = free_port()
    command = [sys.executable, "-m", "shirabe", "serve", str(docs), "--index", index,
               "--port", str(port)]  # fmt: skip
    env = dict(os.environ, SHIRABE_INGEST__ACCESS_MAP=str(access))
    url = f"http://127.0.0.1:{port}"
    with running(command, f"{url}/healthz", log=base / "server.log", env=env, cwd=ROOT):
        yield {"url": url, "base": str(base), "access": str(access), **tokens}


@pytest.fixture
def signed_in(browser: Any, site: dict[str, str]) -> Iterator[Any]:
    """Sign a fresh browser in as a user: ``signed_in("admin")``."""
    contexts: list[Any] = []

    def open_as(token: str) -> Any:
        context = browser.new_context(locale="ja-JP")
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(60_000)
        return sign_in(page, site["url"], site.get(token, token))

    yield open_as
    for context in contexts:
        context.close()


def admin_view(page: Any) -> None:
    page.click("#tab-admin")
    page.wait_for_selector("#view-admin.active:not([aria-busy])")


def confirm(page: Any, expected: str) -> None:
    """Answer the page's question (which must say ``expected``) by going ahead."""
    page.locator("#confirm").wait_for(state="visible")
    assert expected in page.inner_text("#confirm-text")
    page.click("#confirm-ok")
    page.locator("#confirm").wait_for(state="hidden")


def documents(page: Any) -> str:
    """The document list's count line, once the list is loaded again."""
    page.click("#tab-docs")
    page.evaluate("() => { document.querySelector('#docs-count').textContent = ''; }")
    page.click("#docs-reload")
    page.wait_for_function("() => /件/.test(document.querySelector('#docs-count').textContent)")
    return str(page.inner_text("#docs-count"))


def test_a_removed_failed_upload_leaves_a_readers_list(
    signed_in: Any, site: dict[str, str]
) -> None:
    admin, reader = signed_in("admin"), signed_in("yomi")
    broken = Path(site["base"]) / "壊れた報告書.pdf"
    broken.write_bytes(BROKEN_PDF)
    assert "失敗" in upload(admin, broken, "総務")
    assert "うち失敗 1 件" in documents(reader)
    admin_view(admin)
    row = admin.locator("#admin-failed tr", has_text="uploads/総務/壊れた報告書.pdf")
    assert "読み込めません" in row.inner_text() or "壊れて" in row.inner_text()  # the stored error
    row.get_by_role("button", name="削除").click()
    page_said = "uploads/総務/壊れた報告書.pdf を索引から削除します"
    confirm(admin, page_said)
    admin.wait_for_function(
        "() => !document.querySelector('#admin-failed').textContent.includes('壊れた報告書')"
    )
    assert "失敗した文書はありません" in admin.inner_text("#admin-failed")
    count = documents(reader)
    assert "うち失敗" not in count, count
    reader.wait_for_function("() => !/失敗/.test(document.querySelector('#status').textContent)")
    admin_view(admin)
    assert "削除" in admin.locator("#admin-audit tr").first.inner_text()
    admin.fill("#reread-folder", "製品")
    admin.click("#reread-folder-button")
    admin.wait_for_function(
        "() => /読み込み直しました/.test(document.querySelector('#reread-result').textContent)"
    )
    assert "製品 を読み込み直しました: 変更なし 4" in admin.inner_text("#reread-result")


def test_a_user_added_in_the_page_signs_in_and_reads_as_their_groups(
    signed_in: Any, site: dict[str, str]
) -> None:
    admin = signed_in("admin")
    admin_view(admin)
    admin.fill("#user-name", "kaori")
    admin.click("#user-form button[type=submit]")
    admin.wait_for_function(
        "() => document.querySelector('#admin-users').textContent.includes('kaori')"
    )
    assert admin.input_value("#token-user") == "kaori"
    admin.select_option("#token-expires", "30d")
    admin.click("#token-form button[type=submit]")
    admin.locator("#token-shown").wait_for(state="visible")
    secret = admin.input_value("#token-secret")
    assert secret.startswith("shb_")
    admin.wait_for_function(
        "() => document.querySelector('#admin-tokens').textContent.includes('kaori')"
    )
    assert secret not in admin.inner_text("#admin-tokens")  # listed without its secret
    admin.click("#token-hide")
    assert admin.input_value("#token-secret") == ""  # never shown again

    kaori = signed_in(secret)
    assert "kaori" in kaori.inner_text("#who")
    documents(kaori)
    assert "休暇規程.md" not in kaori.inner_text("#docs")  # 人事 is hr's
    assert "製品仕様書_AQ-300.md" in kaori.inner_text("#docs")

    row = admin.locator("#admin-users tr", has_text="kaori")
    row.get_by_role("button", name="変更").click()
    admin.locator("#user-edit").wait_for(state="visible")
    admin.fill("#user-edit-groups", "hr")
    admin.press("#user-edit-groups", "Enter")  # Enter in the box saves, as 保存 does
    admin.wait_for_function(
        "() => [...document.querySelectorAll('#admin-users tr')]"
        ".some(r => r.textContent.includes('kaori') && r.textContent.includes('hr'))"
    )
    documents(kaori)
    assert "休暇規程.md" in kaori.inner_text("#docs")  # the next request reads with hr
    admin_view(admin)
    actions = admin.inner_text("#admin-audit")
    assert "利用者の追加" in actions and "トークンの発行" in actions and "利用者の変更" in actions
    assert secret not in actions


def test_the_last_admin_is_kept_with_a_clear_error(signed_in: Any) -> None:
    admin = signed_in("admin")
    admin_view(admin)
    admin.locator("#admin-users tr", has_text="admin").first.get_by_role(
        "button", name="削除"
    ).click()
    confirm(admin, "利用者 admin を削除します")
    admin.wait_for_function(
        "() => /最後の管理者/.test(document.querySelector('#user-message').textContent)"
    )
    assert admin.is_visible("#tab-admin")


def test_an_access_map_change_is_previewed_before_it_is_saved(
    signed_in: Any, site: dict[str, str]
) -> None:
    admin, reader = signed_in("admin"), signed_in("yomi")
    admin_view(admin)
    places = admin.inner_text("#admin-places")
    assert "人事\t1\thr（1）" in places and "製品\t4\tpublic（4）" in places
    assert admin.input_value("#access-text") == "人事/**: [hr]\n"
    assert admin.is_disabled("#access-save")  # nothing to save before a preview
    admin.fill("#access-text", "人事/**: [hr]\n製品/**: [sales]\n")
    admin.click("#access-preview")
    admin.wait_for_function("() => document.querySelector('#access-result').textContent.length > 0")
    result = admin.inner_text("#access-result")
    assert "のうち 4 件で、閲覧できるグループが変わります" in result
    assert "public\t0\t−4" in result and "sales\t+4\t0" in result
    assert "製品/製品仕様書_AQ-300.md: public → sales" in result
    assert Path(site["access"]).read_text(encoding="utf-8") == "人事/**: [hr]\n"  # not saved
    assert "製品仕様書_AQ-300.md" in documents(
        reader
    ) or "製品仕様書_AQ-300.md" in reader.inner_text("#docs")
    admin.fill("#access-text", "人事/**: [hr\n")  # an edit after the preview: preview again
    assert admin.is_disabled("#access-save")
    admin.click("#access-preview")
    admin.wait_for_function(
        "() => /規則が正しくありません/.test(document.querySelector('#access-result').textContent)"
    )
    admin.fill("#access-text", "人事/**: [hr]\n製品/**: [sales]\n")
    admin.click("#access-preview")
    admin.wait_for_function("() => !document.querySelector('#access-save').disabled")
    admin.click("#access-save")
    confirm(admin, "4 件の文書で閲覧できるグループが変わります")
    admin.wait_for_function(
        "() => /保存しました/.test(document.querySelector('#access-result').textContent)"
    )
    assert Path(site["access"]).read_text(encoding="utf-8") == "人事/**: [hr]\n製品/**: [sales]\n"
    documents(reader)
    assert "製品仕様書_AQ-300.md" not in reader.inner_text("#docs")
    admin_view(admin)
    assert "sales（4）" in admin.inner_text("#admin-places")
    assert "閲覧の設定の変更" in admin.inner_text("#admin-audit")


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("viewport", [(1280, 900), (390, 844)], ids=["desktop", "phone"])
def test_the_admin_view_is_accessible_and_fits_a_phone(
    signed_in: Any, viewport: tuple[int, int], theme: str
) -> None:
    width, height = viewport
    size = "desktop" if width > 760 else "phone"
    admin = signed_in("admin")
    admin.set_viewport_size({"width": width, "height": height})
    admin.select_option("#theme", theme)
    suffix = "" if theme == "light" else "-dark"
    if size == "phone" and admin.is_visible("#sidebar"):
        admin.click("#menu-toggle")
    admin_view(admin)
    hash_before = admin.evaluate("() => location.hash")
    admin.click(".admin-nav a[href='#audit-title']")  # to a part: focus there, the address kept
    assert admin.evaluate("() => [document.activeElement.id, location.hash]") == [
        "audit-title",
        hash_before,
    ]
    name = f"axe-{size}-{theme}"
    admin.fill("#user-name", name)
    admin.click("#user-form button[type=submit]")
    admin.wait_for_function(
        "name => document.querySelector('#token-user').value === name", arg=name
    )
    admin.click("#token-form button[type=submit]")
    admin.locator("#token-shown").wait_for(state="visible")
    admin.fill("#access-text", admin.input_value("#access-text") + "総務/**: [soumu]\n")
    admin.click("#access-preview")
    admin.wait_for_function("() => document.querySelector('#access-result').textContent.length > 0")
    found = {"admin": violations(admin)}
    wide = admin.evaluate(
        "() => [document.documentElement, document.querySelector('#view-admin')]"
        ".filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.id || e.tagName)"
    )
    assert wide == [], f"scrolls sideways at {width}px: {wide}"
    save(admin, f"admin-actions-{size}{suffix}")
    admin.locator("#admin-users tr", has_text=name).get_by_role("button", name="削除").click()
    admin.locator("#confirm").wait_for(state="visible")
    found["confirm"] = violations(admin)
    save(admin, f"admin-confirm-{size}{suffix}")
    admin.click("#confirm-ok")
    admin.wait_for_function(
        "name => !document.querySelector('#admin-users').textContent.includes(name)",
        arg=name,
    )
    failing = {view: v for view, v in found.items() if v}
    assert not failing, json.dumps(failing, ensure_ascii=False, indent=1)
