"""The index's upkeep through the API as the admin page does it (in-process, real index):
failed entries removed so that no reader counts them any more, documents and folders read
again with progress events, a run under way shown as far as it has gone, and the audit log
filtered on the server."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from shirabe.records import IngestEvent

from tests.server.admin_served import Served, error, events, served

pytestmark = pytest.mark.slow

BROKEN_PDF = b"%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\ntrailer << >>\n%%EOF\n"


@pytest.fixture
def api(tmp_path: Path) -> Iterator[Served]:
    with served(tmp_path) as found:
        yield found


def upload_failures(api: Served) -> None:
    """``tool.exe``, ``notes.rtf`` and a broken PDF uploaded by hana into 総務 (public)."""
    files = [
        ("files", ("tool.exe", b"MZ\x90\x00", "application/octet-stream")),
        ("files", ("notes.rtf", b"{\\rtf1 hello}", "application/rtf")),
        ("files", ("壊れた.pdf", BROKEN_PDF, "application/pdf")),
    ]
    sent = api.client.post(
        "/api/documents", files=files, data={"category": "総務"}, headers=api.bearer("hana")
    )
    assert sent.status_code == 200, sent.text
    assert [f["outcome"] for f in sent.json()["files"]] == ["failed"] * 3


def counts(api: Served, user: str) -> tuple[int, int]:
    """The failed documents ``user`` is told of: in the status, and in the document list."""
    status = api.get("/api/status", user)
    listed = api.get("/api/documents", user, status="failed")["total"]
    return status["failed"], listed


def test_failed_entries_leave_every_readers_counts(api: Served) -> None:
    upload_failures(api)
    for user in ("taro", "hana", "root"):
        assert counts(api, user) == (4, 4), user  # with the broken .docx of the folders
    failed = api.get("/api/documents", status="failed")["items"]
    reasons = {d["path"]: d["error"] for d in failed}
    assert reasons["uploads/総務/tool.exe"] == "unsupported file type .exe"
    pdf = next(d for d in failed if d["path"] == "uploads/総務/壊れた.pdf")
    assert pdf["error"]  # the stored error, as the page shows it
    kept = api.shirabe.uploads / "総務" / "壊れた.pdf"
    assert kept.is_file()
    removed = api.client.delete(f"/api/admin/failed/{pdf['id']}", headers=api.bearer("root"))
    assert removed.json() == {"removed": ["uploads/総務/壊れた.pdf"]}
    assert not kept.exists()  # else the next start reads it again
    for user in ("taro", "hana", "root"):
        assert counts(api, user) == (3, 3), user
    ok = next(d for d in api.get("/api/documents")["items"] if d["status"] == "ok")
    error(
        api.client.delete(f"/api/admin/failed/{ok['id']}", headers=api.bearer("root")),
        409,
        "not_failed",
    )
    everything = api.client.delete("/api/admin/failed", headers=api.bearer("root")).json()
    assert sorted(everything["removed"]) == [
        "uploads/総務/notes.rtf",
        "uploads/総務/tool.exe",
        "総務/壊れた議事録.docx",
    ]
    for user in ("taro", "hana", "root"):
        assert counts(api, user) == (0, 0), user
        assert not any("失敗" in c["name"] for c in api.get("/api/status", user)["categories"])
    api.shirabe.ingest([api.shirabe.uploads], area=api.shirabe.uploads)  # a server start
    assert counts(api, "taro") == (0, 0)
    deleted = api.audit(action="delete", actor="root")
    assert {e["shown"] for e in deleted} >= {"uploads/総務/壊れた.pdf", "総務/壊れた議事録.docx"}
    assert all(e["detail"] == "failed entry removed" for e in deleted)


def test_a_document_or_a_folder_is_read_again_with_progress(api: Served) -> None:
    (api.docs / "製品" / "仕様書.md").write_text("# 仕様書\n\nAQ-300の重さは15kgである。\n")
    spec = next(d for d in api.get("/api/documents")["items"] if d["path"] == "製品/仕様書.md")
    with api.client.stream(
        "POST",
        "/api/admin/reread",
        json={"document": spec["id"]},
        headers={**api.bearer("root"), "Accept": "text/event-stream"},
    ) as response:
        assert response.status_code == 200
        received = events(response)
    assert [k for k, _ in received] == ["progress", "done"]
    assert received[0][1] | {"reason": None} == {
        "done": 1, "total": 1, "path": "製品/仕様書.md", "outcome": "updated", "reason": None,
    }  # fmt: skip
    assert received[1][1]["counts"]["updated"] == 1
    passages = api.get(f"/api/documents/{spec['id']}")["passages"]
    assert any("15kg" in p["text"] for p in passages)
    (api.docs / "人事" / "評価" / "新制度.md").write_text("# 新制度\n\n評価は年4回になる。\n")
    folder = api.client.post(
        "/api/admin/reread", json={"folder": "人事"}, headers=api.bearer("root")
    ).json()
    outcomes = {f["path"]: f["outcome"] for f in folder["files"]}
    assert outcomes == {
        "人事/給与規程.md": "unchanged",
        "人事/評価/評価制度.md": "unchanged",
        "人事/評価/新制度.md": "added",
    }
    for wrong in ("../docs", "/etc", "人事/../../x", "存在しない"):
        response = api.client.post(
            "/api/admin/reread", json={"folder": wrong}, headers=api.bearer("root")
        )
        error(response, 404, "not_found")
    both = {"document": spec["id"], "folder": "人事"}
    error(
        api.client.post("/api/admin/reread", json=both, headers=api.bearer("root")),
        422,
        "invalid_request",
    )
    assert [e["shown"] for e in api.audit(action="upload")] == []  # re-reading is no upload
    reread = [(e["actor"], e["path"], e["detail"]) for e in api.audit(action="reread")]
    assert reread == [
        ("root", str(api.docs / "人事"), "added 1, unchanged 2"),
        ("root", str(api.docs / "製品" / "仕様書.md"), "updated 1"),
    ]


def test_a_run_under_way_is_shown_as_far_as_it_has_gone(api: Served) -> None:
    for i in range(3):
        (api.docs / "製品" / f"追加{i}.md").write_text(f"# 追加{i}\n\n部品{i}の在庫は{i}個。\n")
    reached, release = threading.Event(), threading.Event()

    def slow(event: IngestEvent) -> None:
        if event.kind == "file" and event.done == 2:
            reached.set()
            release.wait(timeout=60)

    folder = str(api.docs / "製品")
    run = threading.Thread(target=lambda: api.shirabe.reread(folder, slow, actor="root"))
    run.start()
    try:
        assert reached.wait(timeout=60)
        running = api.get("/api/admin/ingests")["running"]
        assert len(running) == 1
        shown = running[0]
        assert (shown["actor"], shown["stage"], shown["done"], shown["total"]) == (
            "root", "file", 2, 5,
        )  # fmt: skip
        assert shown["current"].startswith("製品/")
    finally:
        release.set()
        run.join(timeout=60)
    assert api.get("/api/admin/ingests")["running"] == []
    assert api.get("/api/admin/ingests")["items"][0]["added"] == 3


def test_the_audit_log_is_filtered_on_the_server(api: Served) -> None:
    root = api.bearer("root")
    for name in ("aya", "ben", "chie"):
        api.client.post("/api/admin/users", json={"name": name}, headers=root)
    api.shirabe.people.add_user("dai", actor="someone@host (local)")
    assert [e["path"] for e in api.audit(action="user_add", actor="root")] == ["chie", "ben", "aya"]
    assert [e["path"] for e in api.audit(actor="LOCAL")] == ["dai"]  # part of it, any case
    assert [e["path"] for e in api.audit(action="user_add", limit=2)] == ["dai", "chie"]
    assert [e["path"] for e in api.audit(action="user_add", limit=2, offset=2)] == ["ben", "aya"]
    assert api.audit(path="%") == [] and api.audit(path="_") == []  # no wildcards
    now = datetime.now(UTC)
    assert len(api.audit(action="user_add", since=(now - timedelta(minutes=5)).isoformat())) == 4
    assert api.audit(until=(now - timedelta(days=1)).isoformat()) == []
    assert api.audit(since=(now + timedelta(minutes=5)).isoformat()) == []
    error(api.client.get("/api/audit?limit=5000", headers=root), 422, "invalid_request")
    error(api.client.get("/api/audit?since=yesterday", headers=root), 422, "invalid_request")
