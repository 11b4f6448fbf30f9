"""The access map through the API as the admin page edits it (in-process, real index): who
reads each top-level folder, a preview that saves nothing, and saving, which is audited and
gives the documents whose readers change their new readers at once without embedding anything
again."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from shirabe.engine import Shirabe

from tests.server.admin_served import ACCESS, Served, error, events, served

pytestmark = pytest.mark.slow

SALES = "人事/**: [hr]\n製品/**: [sales]\n"


@pytest.fixture
def api(tmp_path: Path) -> Iterator[Served]:
    with served(tmp_path) as found:
        found.shirabe.accounts.add_user("saki", ["sales"])
        found.tokens["saki"] = found.shirabe.accounts.create_token("saki")[1]
        yield found


def preview(api: Served, text: str) -> dict[str, object]:
    response = api.client.post(
        "/api/admin/access/preview", json={"text": text}, headers=api.bearer("root")
    )
    assert response.status_code == 200, response.text
    found: dict[str, object] = response.json()
    return found


def test_the_map_and_the_readers_of_each_folder(api: Served) -> None:
    shown = api.get("/api/admin/access")
    assert shown["editable"] is True and shown["text"] == ACCESS
    assert shown["rules"] == [{"glob": "人事/**", "groups": ["hr"]}]
    assert shown["default"] == ["public"]
    assert shown["places"] == [
        {"place": "人事", "documents": 2, "readers": [{"groups": ["hr"], "documents": 2}]},
        {"place": "総務", "documents": 1, "readers": [{"groups": ["public"], "documents": 1}]},
        {"place": "製品", "documents": 2, "readers": [{"groups": ["public"], "documents": 2}]},
    ]


def test_a_preview_says_who_gains_and_who_loses_and_saves_nothing(api: Served) -> None:
    memo = ("files", ("在庫メモ.md", "# 在庫\n\n在庫は3台。\n".encode(), "text/markdown"))
    api.client.post(
        "/api/documents", files=[memo], data={"category": "製品"}, headers=api.bearer("root")
    )
    found = preview(api, SALES)
    assert (found["documents"], found["changed"]) == (6, 3)
    assert found["changes"] == [  # by key: the folders (tmp/docs) before the uploads
        {"path": "製品/仕様書.md", "before": ["public"], "after": ["sales"]},
        {"path": "製品/取扱説明書.md", "before": ["public"], "after": ["sales"]},
        {"path": "uploads/製品/在庫メモ.md", "before": ["public"], "after": ["sales"]},
    ]
    assert found["groups"] == [
        {"group": "public", "gains": 0, "loses": 3},
        {"group": "sales", "gains": 3, "loses": 0},
    ]
    both = preview(api, "人事/**: [hr, sales]\n")  # sales gains 人事, loses nothing
    assert both["groups"] == [{"group": "sales", "gains": 2, "loses": 0}]
    listed = api.client.post(
        "/api/admin/access/preview?limit=1", json={"text": SALES}, headers=api.bearer("root")
    ).json()
    assert len(listed["changes"]) == 1 and listed["changed"] == 3  # the counts stay whole
    assert api.access.read_text(encoding="utf-8") == ACCESS
    assert "製品/仕様書.md" in api.paths("taro")
    assert api.audit(action="access_map") == []


def test_a_saved_map_changes_the_readers_at_once_without_embedding(api: Served) -> None:
    embedded = api.embedder.passages
    with api.client.stream(
        "PUT",
        "/api/admin/access",
        json={"text": "# 営業の資料\n" + SALES},
        headers={**api.bearer("root"), "Accept": "text/event-stream"},
    ) as response:
        assert response.status_code == 200
        received = events(response)
    assert [k for k, _ in received] == ["progress", "progress", "done"]
    done = received[-1][1]
    assert done["saved"] is True and done["changed"] == 2
    assert done["report"]["counts"]["updated"] == 2
    assert api.embedder.passages == embedded  # the vectors came from the cache
    assert api.access.read_text(encoding="utf-8") == "# 営業の資料\n" + SALES  # as written
    assert not {"製品/仕様書.md", "製品/取扱説明書.md"} & api.paths("taro")
    assert {"製品/仕様書.md", "製品/取扱説明書.md"} <= api.paths("saki")
    assert api.get("/api/status", "saki")["categories"] == [
        {"name": "製品", "files": 2},
    ]
    hits = api.client.get(
        "/api/search", params={"q": "AQ-300の重さ"}, headers=api.bearer("taro")
    ).json()
    assert all(not h["source"].startswith("製品/") for h in hits["hits"])
    (entry,) = api.audit(action="access_map")
    assert entry["actor"] == "root" and entry["path"] == str(api.access)
    assert entry["detail"] == "2 document(s) change readers, public +0 -2, sales +2 -0"
    readers = api.audit(action="readers")
    assert {e["shown"] for e in readers} == {"製品/仕様書.md", "製品/取扱説明書.md"}
    with Shirabe(api.shirabe.settings, embedder=api.embedder) as other:  # another process
        assert dict(other.access.rules)["製品/**"] == ("sales",)
        again = other.ingest([api.docs]).counts  # the rest take the new map's signature
        assert (again["updated"], again["unchanged"]) == (2, 2)  # 人事; 製品 is done


def test_a_map_that_does_not_parse_is_refused_and_changes_nothing(api: Served) -> None:
    root = api.bearer("root")
    for text, words in (
        ("人事/**: []\n", "人事/**: groups must be a non-empty list"),
        ("人事/**: [h r]\n", "group 'h r'"),
        ("人事/**: [hr\n", "not valid YAML"),
        ("- 人事\n", "expected a mapping"),
    ):
        for method, url in (("POST", "/api/admin/access/preview"), ("PUT", "/api/admin/access")):
            sent = api.client.request(method, url, json={"text": text}, headers=root)
            assert words in error(sent, 422, "invalid_access_map"), text
    assert api.access.read_text(encoding="utf-8") == ACCESS
    assert api.audit(action="access_map") == []
    huge = {"text": "#" * 100_001}
    error(api.client.put("/api/admin/access", json=huge, headers=root), 422, "invalid_request")


def test_without_a_map_file_the_default_groups_decide_and_nothing_is_saved(
    tmp_path: Path,
) -> None:
    with served(tmp_path, access_map=False) as api:
        shown = api.get("/api/admin/access")
        assert (shown["editable"], shown["file"], shown["text"]) == (False, None, "")
        assert {p["place"] for p in shown["places"]} == {"人事", "総務", "製品"}
        assert preview(api, SALES)["changed"] == 4  # everything is public here: 人事 and 製品
        saved = api.client.put(
            "/api/admin/access", json={"text": SALES}, headers=api.bearer("root")
        )
        error(saved, 409, "no_access_map")
