"""The page of a server that follows its folders (``serve --watch``): it says so, and a file
saved into a folder shows in its counts and its answers without a reload."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from shirabe.server.process import free_port, running

from tests.web.helpers import ask, cli, sign_in

pytestmark = [pytest.mark.slow, pytest.mark.browser]


def test_the_page_shows_the_watch_and_what_it_brought_in(browser: Any, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "総務").mkdir(parents=True)
    (docs / "総務" / "FAQ.md").write_text(
        "# FAQ\n\n## 給与明細\n\n給与明細は社内ポータルで確認できます。\n", encoding="utf-8"
    )
    index = str(tmp_path / "index")
    cli("users", "add", "admin", "--admin", "--index", index)
    token = cli("tokens", "create", "admin", "--index", index)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "shirabe", "serve", str(docs), "--watch", "--index", index,
               "--port", str(port)]  # fmt: skip
    with running(command, f"{url}/healthz", log=tmp_path / "server.log"):
        context = browser.new_context(locale="ja-JP")
        try:
            page = sign_in(context.new_page(), url, token)
            status = page.locator("#status")
            page.wait_for_function(
                "() => document.querySelector('#status').textContent.includes('1 ファイル')"
            )
            assert "フォルダー監視中・最終反映" in status.text_content()
            (docs / "総務" / "食堂.md").write_text(
                "# 社員食堂\n\n## 営業時間\n\n社員食堂の営業時間は11時から14時までです。\n",
                encoding="utf-8",
            )
            page.wait_for_function(  # read again every 15 s while the server watches
                "() => document.querySelector('#status').textContent.includes('2 ファイル')",
                timeout=45_000,
            )
            answer = ask(page, "社員食堂の営業時間は何時までですか？")
            assert "14時" in answer.text_content()
        finally:
            context.close()
