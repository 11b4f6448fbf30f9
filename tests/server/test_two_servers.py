"""Two API server processes on one index (a shared home, or one PostgreSQL database with a home
of their own each, as on two machines): a file uploaded through one is answerable through the
other, a deleted one is gone from both, and both serve while one ingests."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack

import httpx
import pytest

from shirabe.server.process import free_port, running

from tests.server.served import cli

pytestmark = pytest.mark.slow

QUESTION = "社員食堂の営業時間は？"


@pytest.fixture(
    scope="module", params=["embedded", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def servers(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[httpx.Client, ...]]:
    base = tmp_path_factory.mktemp("two")
    docs = base / "docs"
    (docs / "総務").mkdir(parents=True)
    (docs / "総務" / "出張規程.md").write_text(
        "# 出張規程\n\n## 日当\n\n国内出張の日当は3000円とする。\n", encoding="utf-8"
    )
    env = dict(os.environ)
    homes = [base / "index"] * 2
    with ExitStack() as stack:
        if request.param == "postgres":
            env["SHIRABE_STORE__DATABASE_URL"] = request.getfixturevalue("module_database_url")
            env["SHIRABE_SERVER__UPLOADS"] = str(base / "shared-uploads")  # shared storage
            homes = [base / "home-a", base / "home-b"]
        cli("ingest", str(docs), "--index", str(homes[0]), env=env)
        cli("users", "add", "admin", "--admin", "--index", str(homes[0]), env=env)
        token = cli("tokens", "create", "admin", "--index", str(homes[0]), env=env)
        clients = []
        for name, home in zip("ab", homes, strict=True):
            port = free_port()
            command = [sys.executable, "-m", "shirabe", "serve", str(docs), "--index", str(home),
                       "--port", str(port)]  # fmt: skip
            url = f"http://127.0.0.1:{port}"
            stack.enter_context(
                running(command, f"{url}/healthz", log=base / f"{name}.log", env=env)
            )
            clients.append(
                stack.enter_context(
                    httpx.Client(
                        base_url=url, timeout=120, headers={"Authorization": f"Bearer {token}"}
                    )
                )
            )
        yield tuple(clients)


def answer(client: httpx.Client) -> dict[str, object]:
    response = client.post("/api/ask", json={"question": QUESTION})
    assert response.status_code == 200, response.text
    return dict(response.json())


def test_ingest_through_one_server_query_through_the_other(
    servers: tuple[httpx.Client, httpx.Client],
) -> None:
    one, other = servers
    assert answer(other)["refused"]
    note = "# 社員食堂\n\n## 営業時間\n\n社員食堂の営業時間は11時30分から14時までです。\n"
    uploaded = one.post(
        "/api/documents",
        files={"files": ("社員食堂.md", note.encode("utf-8"), "text/markdown")},
        data={"category": "総務"},
    )
    assert uploaded.status_code == 200, uploaded.text
    assert [f["outcome"] for f in uploaded.json()["files"]] == ["added"]
    # the other process sees the new file on its next request, no restart, no waiting
    seen = answer(other)
    assert "11時30分" in str(seen["answer"]) and not seen["refused"]
    files = {s.get("/api/status").json()["files"] for s in servers}
    assert files == {2}
    listed = other.get("/api/documents", params={"q": "社員食堂"}).json()["items"]
    assert len(listed) == 1
    # delete through the other; the first stops answering from it at once
    assert other.delete(f"/api/documents/{listed[0]['id']}").status_code == 200
    assert answer(one)["refused"]
    assert {s.get("/api/status").json()["files"] for s in servers} == {1}


def test_both_keep_answering_while_one_ingests(
    servers: tuple[httpx.Client, httpx.Client],
) -> None:
    one, other = servers
    files = [
        (
            "files",
            (
                f"通知{i}.md",
                f"# 通知{i}\n\n通知{i}の受付番号はN-{i:04d}です。\n".encode(),
                "text/markdown",
            ),
        )
        for i in range(40)
    ]
    errors: list[str] = []
    with httpx.Client(base_url=str(one.base_url), headers=dict(one.headers), timeout=300) as up:
        done = threading.Event()

        def upload() -> None:
            try:
                response = up.post("/api/documents", files=files, data={"category": "通知"})
                if response.status_code != 200:
                    errors.append(response.text)
            finally:
                done.set()

        thread = threading.Thread(target=upload)
        thread.start()
        asked = 0
        while not done.is_set():
            for client in servers:
                response = client.get("/api/search", params={"q": "出張の日当"})
                if response.status_code != 200:
                    errors.append(response.text)
                asked += 1
            time.sleep(0.05)
        thread.join()
    assert not errors
    assert asked > 0
    found = other.get("/api/search", params={"q": "N-0039"}).json()["hits"]
    assert found and found[0]["source"] == "uploads/通知/通知39.md"
