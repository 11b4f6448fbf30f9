"""Incremental ingest with the real model: unchanged, modified, deleted, renamed, failed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from shirabe.chunking.markdown import MarkdownChunker
from shirabe.embedders.metered import MeteredEmbedder
from shirabe.engine import Shirabe
from shirabe.indexing import tags
from shirabe.records import Chunk, Document, Filters
from shirabe.settings import IngestSettings, Settings

pytestmark = pytest.mark.slow

POLICY = "# 休暇規程\n\n## 申請方法\n\n有給休暇はミナモ勤怠から3営業日前までに申請する。\n"
EXPENSE = "経費精算は発生月の翌月10日までに行う。領収書を添付すること。\n"


def write(path: Path, text: str, encoding: str = "utf-8") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode(encoding))
    return path


def sources(app: Shirabe) -> set[str]:
    return {Path(s.path).name for s in app.store.list_sources() if s.status == "ok"}


def found(app: Shirabe, query: str) -> list[str]:
    return [h.chunk.text for h in app.search(query, k=10)]


def test_unchanged_files_cost_nothing(
    app: Shirabe, embedder: MeteredEmbedder, tmp_path: Path
) -> None:
    docs = tmp_path / "docs"
    write(docs / "休暇.md", POLICY)
    write(docs / "経費.txt", EXPENSE)
    first = app.ingest([docs])
    assert first.counts["added"] == 2
    embedded = embedder.passages
    assert embedded > 0
    second = app.ingest([docs])
    assert second.counts == {"added": 0, "updated": 0, "removed": 0, "unchanged": 2, "failed": 0}
    assert embedder.passages == embedded


def read_markdown_differently(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(tags.READ_VERSIONS, ".md", "9")


def cut_sentences_differently(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tags, "CUT_VERSION", "9")


@pytest.mark.parametrize(
    ("upgrade", "updated"),
    [
        (read_markdown_differently, 1),  # the Markdown file only
        (cut_sentences_differently, 2),  # every file
    ],
)
def test_a_new_way_of_reading_or_cutting_reads_the_files_concerned_again_once(
    app: Shirabe,
    embedder: MeteredEmbedder,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    upgrade: Callable[[pytest.MonkeyPatch], None],
    updated: int,
) -> None:
    docs = tmp_path / "docs"
    write(docs / "休暇.md", POLICY)
    write(docs / "経費.txt", EXPENSE)
    app.ingest([docs])
    embedded = embedder.passages
    upgrade(monkeypatch)
    again = app.ingest([docs])
    assert again.counts == {
        "added": 0,
        "updated": updated,
        "removed": 0,
        "unchanged": 2 - updated,
        "failed": 0,
    }
    assert embedder.passages == embedded  # the same text: its embeddings come from the cache
    assert app.ingest([docs]).counts["unchanged"] == 2


def test_a_changed_chunk_size_cuts_unchanged_files_again(
    home: Path, embedder: MeteredEmbedder, tmp_path: Path
) -> None:
    docs = tmp_path / "docs"
    long = "# 規程\n\n" + "".join(f"第{i}条の定めは社内ポータルで確認できる。" for i in range(40))
    write(docs / "規程.md", long + "\n")
    write(docs / "経費.txt", EXPENSE)
    with Shirabe(Settings(home=home), embedder=embedder) as app:
        app.ingest([docs])
        before = len(app.store.source_chunks(str(docs / "規程.md")))
    with Shirabe(
        Settings(home=home, ingest=IngestSettings(chunk_size=150)), embedder=embedder
    ) as app:
        again = app.ingest([docs])
        assert again.counts["updated"] == 2 and again.counts["unchanged"] == 0
        assert len(app.store.source_chunks(str(docs / "規程.md"))) > before
        assert app.ingest([docs]).counts["unchanged"] == 2
    with Shirabe(Settings(home=home), embedder=embedder) as app:  # back to the default
        assert app.ingest([docs]).counts["updated"] == 2
        assert len(app.store.source_chunks(str(docs / "規程.md"))) == before


class SentenceChunker(MarkdownChunker):
    """A custom chunker: one chunk per sentence of the built-in one's chunks."""

    signature = "sentences-v1"

    def chunk(self, document: Document) -> list[Chunk]:
        cut: list[Chunk] = []
        for whole in super().chunk(document):
            for sentence in filter(str.strip, whole.text.split("。")):
                cut.append(replace(whole, text=f"{sentence}。", position=len(cut)))
        return cut


def test_another_chunker_cuts_unchanged_files_again(
    home: Path, embedder: MeteredEmbedder, tmp_path: Path
) -> None:
    docs = tmp_path / "docs"
    write(docs / "経費.txt", EXPENSE)
    with Shirabe(Settings(home=home), embedder=embedder) as app:
        app.ingest([docs])
        assert len(app.store.source_chunks(str(docs / "経費.txt"))) == 1
    with Shirabe(Settings(home=home), embedder=embedder, chunker=SentenceChunker()) as app:
        assert app.ingest([docs]).counts["updated"] == 1
        assert len(app.store.source_chunks(str(docs / "経費.txt"))) == 2
        assert app.ingest([docs]).counts["unchanged"] == 1


def test_modified_file_replaces_its_chunks(app: Shirabe, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    path = write(docs / "経費.txt", EXPENSE)
    app.ingest([docs])
    assert any("翌月10日" in t for t in found(app, "経費精算の期限"))
    write(path, "経費精算は発生月の翌月15日までに行う。\n")
    report = app.ingest([docs])
    assert report.counts["updated"] == 1
    texts = found(app, "経費精算の期限")
    assert any("翌月15日" in t for t in texts)
    assert not any("翌月10日" in t for t in texts)
    assert app.status().chunks == len(app.store.get_chunks(range(1, 1000)))


def test_deleted_file_leaves_the_index(app: Shirabe, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    write(docs / "休暇.md", POLICY)
    gone = write(docs / "sub" / "経費.txt", EXPENSE)
    app.ingest([docs])
    gone.unlink()
    report = app.ingest([docs])
    assert report.counts["removed"] == 1
    assert sources(app) == {"休暇.md"}
    assert not any("翌月10日" in t for t in found(app, "経費精算 翌月10日"))


def test_rename_moves_without_reembedding(
    app: Shirabe, embedder: MeteredEmbedder, tmp_path: Path
) -> None:
    docs = tmp_path / "docs"
    old = write(docs / "経費.txt", EXPENSE)
    app.ingest([docs])
    embedded = embedder.passages
    old.rename(docs / "経費規程.txt")
    listed: list[set[str]] = []  # what the index lists while the new name is being read
    report = app.ingest([docs], lambda event: listed.append(sources(app)))
    assert report.counts["added"] == 1 and report.counts["removed"] == 1
    assert embedder.passages == embedded
    assert sources(app) == {"経費規程.txt"}
    assert all("経費.txt" not in names for names in listed)  # never listed under both names
    hits = app.search("経費精算の期限", k=3)
    assert Path(hits[0].chunk.source).name == "経費規程.txt"


def test_failures_are_reported_and_others_still_go_in(app: Shirabe, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    write(docs / "休暇.md", POLICY)
    (docs / "壊れた.txt").write_bytes(b"\x00\x01\x02\xff" * 100)
    report = app.ingest([docs])
    assert report.counts["added"] == 1
    [failure] = report.failures
    assert failure.path.endswith("壊れた.txt")
    assert failure.reason
    status = app.status()
    assert [Path(f.path).name for f in status.failed] == ["壊れた.txt"]


def test_a_file_that_starts_failing_keeps_its_indexed_content(app: Shirabe, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    path = write(docs / "経費.txt", EXPENSE)
    app.ingest([docs])
    path.write_bytes(b"\x00\x01\x02\xff" * 100)
    report = app.ingest([docs])
    assert report.counts["failed"] == 1
    assert any("翌月10日" in t for t in found(app, "経費精算の期限"))


def test_skips_hidden_lock_and_temp_files_and_reports_symlink_loops_and_broken_links(
    app: Shirabe, tmp_path: Path
) -> None:
    docs = tmp_path / "docs"
    write(docs / "休暇.md", POLICY)
    write(docs / ".hidden.md", POLICY)
    write(docs / "~$休暇.md", POLICY)
    write(docs / "休暇.md~", POLICY)
    write(docs / ".git" / "x.md", POLICY)
    (docs / "loop").symlink_to(docs, target_is_directory=True)
    (docs / "消えた.md").symlink_to(tmp_path / "missing.md")
    report = app.ingest([docs])
    outcomes = {Path(f.path).name: (f.outcome, f.reason) for f in report.files}
    assert outcomes == {
        "休暇.md": ("added", None),
        "loop": ("failed", "symbolic link loop: it points to a folder that holds it"),
        "消えた.md": ("failed", "broken symbolic link: its target does not exist"),
    }
    failed = {Path(s.path).name: s.error for s in app.store.list_sources() if s.status == "failed"}
    assert failed == {n: r for n, (o, r) in outcomes.items() if o == "failed"}
    (docs / "loop").unlink()
    (docs / "消えた.md").unlink()
    again = app.ingest([docs])
    assert sorted(Path(f.path).name for f in again.files if f.outcome == "removed") == [
        "loop",
        "消えた.md",
    ]


def test_encodings_are_detected(app: Shirabe, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    write(docs / "sjis.txt", "経費精算は翌月10日まで。\r\n", "cp932")
    write(docs / "euc.txt", "有給休暇は3営業日前までに申請する。\n", "euc_jp")
    write(docs / "bom.md", "\ufeff# 規程\n\n本文です。\n", "utf-8")
    report = app.ingest([docs])
    assert report.counts["added"] == 3
    chunks = app.store.get_chunks(range(1, 100)).values()
    assert all("\ufeff" not in c.text and "\r" not in c.text for c in chunks)
    assert any("翌月10日" in c.text for c in chunks)
    assert any("営業日" in c.text for c in chunks)


def test_remove_command_drops_a_file(app: Shirabe, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    write(docs / "休暇.md", POLICY)
    write(docs / "経費.txt", EXPENSE)
    app.ingest([docs])
    assert app.remove(docs / "経費.txt") == 1
    assert sources(app) == {"休暇.md"}
    assert app.remove(docs / "nothing.txt") == 0


def test_front_matter_metadata_filters_retrieval(app: Shirabe, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    write(docs / "hr.md", "---\ndepartment: 人事\n---\n" + POLICY)
    write(docs / "acc.md", "---\ndepartment: 経理\n---\n# 経費\n\n" + EXPENSE)
    app.ingest([docs])
    hits = app.search("申請", k=5, filters=Filters(metadata={"department": "経理"}))
    assert hits
    assert {Path(h.chunk.source).name for h in hits} == {"acc.md"}
