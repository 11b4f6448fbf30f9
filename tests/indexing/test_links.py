"""Symbolic links met by an ingest: one into the document root leaves the document at its
target's place, with that place's readers; one to anywhere else (outside the root, the uploads
folder, nothing) reads nothing and is reported to admins only, so a reader can neither read
through a link nor learn from one whether a name exists."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from shirabe.access.map import restrict
from shirabe.engine import Shirabe
from shirabe.records import IngestReport, Reader
from shirabe.server.app import create_app

pytestmark = pytest.mark.slow

HR = "# 給与規程\n\n給与は毎月25日に支払う。基本給の改定はHRCODE1で管理する。\n"
UPLOAD = "# 採用計画\n\n来期の採用予定はUPLCODE7の12名です。\n"
HOST = "# ホスト\n\nこの機械の名前はHOSTCODE9です。\n"
NOTICE = "# お知らせ\n\n会議室の予約は総務ポータルから行う。\n"
OUTSIDE = "symbolic link to outside the document root: not followed"
UPLOADS = "symbolic link into the uploads folder: not followed"
BROKEN = "broken symbolic link: its target does not exist"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def corpus(tmp_path: Path, engine: Shirabe) -> Path:
    """A document root with an hr document and a public one, an hr upload, a file outside."""
    docs = tmp_path / "docs"
    write(docs / "人事" / "給与.md", HR)
    write(docs / "public" / "お知らせ.md", NOTICE)
    write(engine.uploads / "人事" / "採用.md", UPLOAD)
    write(tmp_path / "outside" / "hostname.md", HOST)
    return docs


def link(tmp_path: Path, engine: Shirabe, docs: Path) -> None:
    public = docs / "public"
    (public / "upl_hr").symlink_to(engine.uploads / "人事", target_is_directory=True)
    (public / "host.md").symlink_to(tmp_path / "outside" / "hostname.md")
    (public / "外").symlink_to(tmp_path / "outside", target_is_directory=True)
    (public / "消えた.md").symlink_to(docs / "人事" / "ない.md")
    (public / "給与のリンク.md").symlink_to(docs / "人事" / "給与.md")


def finds(engine: Shirabe, text: str, reader: Reader | None) -> bool:
    filters = restrict(None, reader) if reader is not None else None
    hits = engine.search("採用予定 給与 機械の名前", k=20, filters=filters)
    return any(text in h.chunk.text for h in hits)


def visible(engine: Shirabe, reader: Reader) -> dict[str, str]:
    """The rows (documents and failures) below the root a reader sees, with their status."""
    return {
        s.path.split("/docs/", 1)[1]: s.status
        for s in engine.store.list_sources()
        if reader.may_read(s.groups) and "/docs/" in s.path
    }


def links_reported(report: IngestReport) -> dict[str, str | None]:
    return {
        f.path.split("/docs/", 1)[-1]: f.reason
        for f in report.failures
        if f.path.split("/docs/", 1)[-1].startswith("public/")
    }


def test_no_link_reads_anything_outside_the_root_and_readers_see_no_trace_of_one(
    engine: Shirabe, tmp_path: Path
) -> None:
    docs = corpus(tmp_path, engine)
    engine.ingest([engine.uploads], area=engine.uploads)
    link(tmp_path, engine, docs)
    report = engine.ingest([docs])  # the first ingest: the folder given becomes the root
    assert engine.root.path == docs
    expected = {
        "public/host.md": OUTSIDE,
        "public/upl_hr": UPLOADS,
        "public/外": OUTSIDE,
        "public/消えた.md": BROKEN,
    }
    anyone, hr = Reader(), Reader(frozenset({"hr"}))
    assert not finds(engine, "UPLCODE7", anyone)
    assert finds(engine, "UPLCODE7", hr)  # the upload itself, at its own place
    assert not finds(engine, "HOSTCODE9", Reader(admin=True))  # never read at all
    assert visible(engine, anyone) == {"public/お知らせ.md": "ok"}
    assert links_reported(report) == expected  # the run's report: the host's or an admin's
    assert visible(engine, hr) == {"public/お知らせ.md": "ok", "人事/給与.md": "ok"}
    for key in expected:
        row = engine.store.get_source(str(docs / key))
        assert row is not None and row.status == "failed" and row.groups == [], key
    assert len(engine.store.list_sources(under=str(docs))) == 2 + len(expected)

    # the same with the root recorded, and a sub-folder, a link or a file through it given
    for given in [docs / "public", docs / "public" / "host.md", docs / "public" / "外"]:
        again = engine.ingest([given])
        assert set(links_reported(again)) <= set(expected), given
        assert visible(engine, anyone) == {"public/お知らせ.md": "ok"}, given
        assert not finds(engine, "HOSTCODE9", Reader(admin=True)), given

    # a link that goes away takes its report with it
    for key in expected:
        (docs / key).unlink()
    engine.ingest([docs])
    assert visible(engine, Reader(admin=True)) == {
        "public/お知らせ.md": "ok",
        "人事/給与.md": "ok",
    }


def test_a_document_that_becomes_a_link_out_of_the_root_leaves_with_its_text(
    engine: Shirabe, tmp_path: Path
) -> None:
    docs = corpus(tmp_path, engine)
    write(docs / "public" / "host.md", NOTICE.replace("お知らせ", "古い知らせ"))
    write(docs / "public" / "upl_hr" / "採用.md", NOTICE.replace("お知らせ", "古い採用"))
    engine.ingest([docs])
    assert visible(engine, Reader())["public/upl_hr/採用.md"] == "ok"
    (docs / "public" / "host.md").unlink()
    (docs / "public" / "host.md").symlink_to(tmp_path / "outside" / "hostname.md")
    (docs / "public" / "upl_hr" / "採用.md").unlink()
    (docs / "public" / "upl_hr").rmdir()
    (docs / "public" / "upl_hr").symlink_to(engine.uploads / "人事", target_is_directory=True)
    report = engine.ingest([docs])
    assert links_reported(report) == {"public/host.md": OUTSIDE, "public/upl_hr": UPLOADS}
    assert visible(engine, Reader()) == {"public/お知らせ.md": "ok"}
    assert not any(
        "古い" in c.text for c in engine.store.source_chunks(str(docs / "public" / "host.md"))
    )
    assert engine.store.get_source(str(docs / "public" / "upl_hr" / "採用.md")) is None


def test_the_server_shows_a_link_not_followed_to_admins_only(
    engine: Shirabe, tmp_path: Path
) -> None:
    docs = corpus(tmp_path, engine)
    link(tmp_path, engine, docs)
    engine.ingest([docs])
    tokens = {}
    for name, admin in [("root", True), ("taro", False)]:
        engine.accounts.add_user(name, [], admin=admin)
        tokens[name] = {"Authorization": f"Bearer {engine.accounts.create_token(name)[1]}"}
    with TestClient(create_app(engine, roots=[docs]), base_url="http://127.0.0.1") as client:

        def get(path: str, user: str) -> Any:
            response = client.get(path, headers=tokens[user])
            assert response.status_code == 200, response.text
            return response.json()

        listed = get("/api/documents?limit=500", "taro")
        assert [d["path"] for d in listed["items"]] == ["public/お知らせ.md"]
        assert get("/api/documents?status=failed", "taro")["total"] == 0
        assert get("/api/status", "taro")["failed"] == 0
        failed = get("/api/documents?status=failed&limit=500", "root")["items"]
        assert {d["path"]: (d["error"], d["groups"]) for d in failed} == {
            "public/host.md": (OUTSIDE, []),
            "public/upl_hr": (UPLOADS, []),
            "public/外": (OUTSIDE, []),
            "public/消えた.md": (BROKEN, []),
        }
        assert get("/api/status", "root")["failed"] == 4


def test_a_file_swapped_for_a_link_after_the_walk_is_not_read_through(
    engine: Shirabe, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whoever can write a folder may replace a file the walk has checked with a link to
    outside the root before it is read: the read does not follow it, and only admins hear."""
    from shirabe.indexing import ingest, walk
    from shirabe.indexing.reading import SWAPPED

    docs = tmp_path / "docs"
    write(docs / "総務" / "お知らせ.md", NOTICE)
    secret = write(tmp_path / "outside" / "host.md", HOST)
    walked = walk.walk

    def swapping(*args: Any, **kwargs: Any) -> Any:
        for path in walked(*args, **kwargs):
            path.unlink()
            path.symlink_to(secret)  # between the walk's check and the read
            yield path

    monkeypatch.setattr(ingest, "walk", swapping)
    report = engine.ingest([docs])
    assert [f.reason for f in report.files] == [SWAPPED]
    source = engine.store.get_source(str(docs / "総務" / "お知らせ.md"))
    assert source is not None and source.status == "failed" and source.groups == []
    public = restrict(None, Reader(frozenset()))
    assert not any("HOSTCODE9" in h.chunk.text for h in engine.search("HOSTCODE9", filters=public))
    assert not any("HOSTCODE9" in h.chunk.text for h in engine.search("HOSTCODE9"))


def test_a_file_swapped_for_a_link_and_back_while_its_loader_reads_is_read_as_it_was(
    engine: Shirabe, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loader reads the bytes the ingest read and fingerprinted, never the path again: a
    swap to a link to outside the root and back, while the loader works, changes nothing."""
    from shirabe.loaders.worker import TimedLoader

    docs = tmp_path / "docs"
    notice = write(docs / "総務" / "お知らせ.md", NOTICE)
    secret = write(tmp_path / "outside" / "host.md", HOST.replace("9", "8"))  # same size
    aside = tmp_path / "aside.md"
    reading = TimedLoader.load

    def swapped_while_read(self: TimedLoader, path: Path) -> Any:
        notice.rename(aside)
        notice.symlink_to(secret)
        try:
            return reading(self, path)
        finally:
            notice.unlink()
            aside.rename(notice)  # the same file again: inode, size and time

    monkeypatch.setattr(TimedLoader, "load", swapped_while_read)
    report = engine.ingest([docs])
    assert [(f.outcome, f.reason) for f in report.files] == [("added", None)]
    texts = [h.chunk.text for h in engine.search("会議室 機械の名前 HOSTCODE8", k=10)]
    assert any("総務ポータル" in t for t in texts)
    assert not any("HOSTCODE8" in t for t in texts)
    source = engine.store.get_source(str(notice))
    assert source is not None and source.path == str(notice) and source.status == "ok"
