"""The page in a real headless browser (Debian's chromium driven by Playwright) against a
real server process started once for every browser test."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shirabe.server.process import free_port, running

from tests.support import ROOT
from tests.web.helpers import cli, sign_in

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    base = tmp_path_factory.mktemp("browser")
    docs = base / "docs"
    for folder in ("人事", "経理", "製品"):
        shutil.copytree(ROOT / "sample_docs" / folder, docs / folder)
    (docs / "総務").mkdir()
    (docs / "総務" / "壊れた議事録.docx").write_bytes(b"PK\x03\x04 not really a document")
    index = str(base / "index")
    cli("users", "add", "admin", "--admin", "--index", index)
    token = cli("tokens", "create", "admin", "--index", index)
    port = free_port()
    command = [sys.executable, "-m", "shirabe", "serve", str(docs), "--index", index,
               "--port", str(port)]  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    with running(command, f"{url}/healthz", log=base / "server.log", cwd=ROOT):
        yield {"url": url, "token": token, "base": str(base)}


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """A failed browser test shows the end of the server's log beside it."""
    report = yield
    base = getattr(item, "funcargs", {}).get("server", {}).get("base")
    if report.failed and base:
        log = Path(base) / "server.log"
        if log.exists():
            report.sections.append(("server log", log.read_text(errors="replace")[-4000:]))
    return report


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    if CHROMIUM is None:
        pytest.fail("chromium is not installed (apt install chromium); .ci/run installs it")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox"]
        )
        yield instance
        instance.close()


@pytest.fixture
def page(browser: Any, server: dict[str, str]) -> Iterator[Any]:
    context = browser.new_context(locale="ja-JP")
    page = context.new_page()
    page.set_default_timeout(60_000)
    yield sign_in(page, server["url"], server["token"])
    context.close()
