"""What the page does on the server, each with a server of its own: the stop button ends the
model's stream on the server and nothing is recorded (not even a conversation), and the
conversation history survives the server being stopped and started again."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest

from shirabe.server.process import free_port, running

from tests.slow_model import TOKENS, SlowModel, slow_model
from tests.support import ROOT
from tests.web.helpers import ask, cli, settled

pytestmark = [pytest.mark.slow, pytest.mark.browser]


def serve(base: Path, port: int, *extra: str, env: dict[str, str] | None = None) -> Any:
    """``shirabe serve`` on a folder of one rule book, anonymous access on (local only)."""
    docs = base / "docs"
    if not docs.exists():
        docs.mkdir(parents=True)
        (docs / "出張規程.md").write_text(
            "# 出張規程\n\n## 日当\n\n国内出張の日当は3000円とする。\n\n"
            "## 宿泊費\n\n宿泊費の上限は1泊12000円とする。\n",
            encoding="utf-8",
        )
    command = [
        sys.executable, "-m", "shirabe", "serve", str(docs), "--index", str(base / "index"),
        "--port", str(port), "--anonymous", "on", *extra,
    ]  # fmt: skip
    started: AbstractContextManager[Any] = running(
        command,
        f"http://127.0.0.1:{port}/healthz",
        log=base / f"server-{port}.log",
        env={**os.environ, **(env or {})},
        cwd=ROOT,
        timeout=180,
    )
    return started


@pytest.fixture
def anonymous_page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(locale="ja-JP")
    page = context.new_page()
    page.set_default_timeout(60_000)
    yield page
    context.close()


def kept(page: Any, ident: str) -> Any:
    """The stored conversation (every one, for ``""``), fetched as the page fetches it."""
    return page.evaluate(
        """async id => (await fetch(`/api/conversations${id && "/" + id}`,
            {headers: {"X-Shirabe-Client": localStorage.getItem("shirabe-client")}})).json()""",
        ident,
    )


def test_stop_on_the_page_stops_the_model_on_the_server(
    tmp_path: Path, anonymous_page: Any
) -> None:
    page = anonymous_page
    settings = {
        "SHIRABE_REFUSAL_THRESHOLD": "0",
        "SHIRABE_REFUSAL_UNKNOWN_THRESHOLD": "0",
        "SHIRABE_CHAT_MODEL__RETRIES": "0",
    }
    port = free_port()
    with (
        slow_model() as model,
        serve(tmp_path, port, "--llm-base-url", model, "--llm-model", "slow", env=settings),
    ):
        page.goto(f"http://127.0.0.1:{port}")
        page.wait_for_selector("#app:not([hidden])")
        page.fill("#question", "国内出張の日当はいくらですか？")
        page.press("#question", "Enter")
        page.wait_for_selector("#stop-button:not([hidden])")
        for _ in range(600):  # the model has started writing the answer
            if SlowModel.sent >= 10:
                break
            page.wait_for_timeout(50)
        assert SlowModel.sent >= 10, "the model was never asked"
        writing = page.locator(".msg.a[aria-busy]")
        assert writing.locator(".progress").inner_text() == "回答を作成しています…"
        page.click("#stop-button")
        page.wait_for_function("() => !document.querySelector('.msg.a[aria-busy]')")
        assert SlowModel.hung_up.wait(timeout=10), f"the model kept writing ({SlowModel.sent})"
        assert not SlowModel.finished and SlowModel.sent < TOKENS
        assert "停止しました" in page.locator(".msg.a").last.inner_text()
        # a stopped answer is not kept, nor is the new chat's conversation made
        assert page.evaluate("() => location.hash") == ""
        assert kept(page, "")["conversations"] == []


def test_the_history_survives_a_server_restart(tmp_path: Path, anonymous_page: Any) -> None:
    page = anonymous_page
    port = free_port()
    with serve(tmp_path, port):
        page.goto(f"http://127.0.0.1:{port}")
        page.wait_for_selector("#app:not([hidden])")
        answer = ask(page, "宿泊費の上限はいくらですか？")
        assert "12000円" in answer.inner_text()
        ident = page.evaluate("() => new URLSearchParams(location.hash.slice(1)).get('c')")
    with serve(tmp_path, port):  # the same address: the browser keeps its own id
        page.reload()
        page.wait_for_function("() => document.querySelectorAll('.msg.a').length === 1")
        assert "12000円" in page.locator(".msg.a").first.inner_text()
        assert page.locator(f"#conversations li[data-id='{ident}']").count() == 1
        assert kept(page, ident)["history"][0]["question"] == "宿泊費の上限はいくらですか？"


def test_a_server_that_went_away_is_said_in_japanese_and_retry_answers(
    tmp_path: Path, anonymous_page: Any
) -> None:
    page = anonymous_page
    port = free_port()
    with serve(tmp_path, port):
        page.goto(f"http://127.0.0.1:{port}")
        page.wait_for_selector("#app:not([hidden])")
        assert "3000円" in ask(page, "国内出張の日当はいくらですか？").inner_text()
    failed = ask(page, "宿泊費の上限はいくらですか？")  # the server is down
    assert failed.locator(".text").inner_text() == (
        "サーバーに接続できません。ネットワークを確認してください。"
    )
    with serve(tmp_path, port):
        failed.get_by_role("button", name="再試行").click()
        settled(page, 2)
        answer = page.locator(".msg.a").nth(1)
        assert "12000円" in answer.inner_text()
        assert page.locator(".msg.a.error").count() == 0  # the failed try gave way to it


def test_an_empty_index_says_how_documents_are_added(tmp_path: Path, anonymous_page: Any) -> None:
    page = anonymous_page
    (tmp_path / "docs").mkdir()  # nothing to read yet
    index = str(tmp_path / "index")
    cli("users", "add", "boss", "--admin", "--index", index)
    token = cli("tokens", "create", "boss", "--index", index)
    port = free_port()
    with serve(tmp_path, port):
        page.goto(f"http://127.0.0.1:{port}")
        page.wait_for_selector("#app:not([hidden])")
        empty = page.locator("#messages .empty")
        empty.wait_for()
        assert "まだ文書がありません" in empty.inner_text()
        assert "管理者に文書の追加を依頼してください" in empty.inner_text()
        assert page.locator(".examples .example").count() == 0
        signed = page.evaluate(
            "token => fetch('/api/session', {method: 'POST',"
            " headers: {Authorization: 'Bearer ' + token}}).then(r => r.status)",
            token,
        )
        assert signed == 200
        page.reload()  # signed in (a session cookie): an admin is told how to add them
        page.wait_for_function(
            "() => (document.querySelector('#messages .empty') || {}).textContent"
            "?.includes('shirabe ingest')"
        )
        assert "アップロード" in page.inner_text("#messages .empty")
