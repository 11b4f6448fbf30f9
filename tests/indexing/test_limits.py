"""Safety limits: file size, unzipped size of Office packages, time per file.

Each limit is hit by a real file in a real ingest; the file is reported with the reason and the
other files of the same run still go in. The time limit is hit by a file whose reader certainly
never makes progress (it waits for an event nobody sets), not by one that is merely slow.
"""

from __future__ import annotations

import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from shirabe.embedders.metered import MeteredEmbedder
from shirabe.engine import Shirabe
from shirabe.settings import LimitSettings, Settings

from tests.support import installed

pytestmark = pytest.mark.slow

GOOD = "# 規程\n\n会議室の予約は前日までに行う。\n"


def _reasons(settings: Settings, embedder: MeteredEmbedder, docs: Path) -> dict[str, str]:
    with Shirabe(settings, embedder=embedder) as app:
        report = app.ingest([docs])
        assert [Path(f.path).name for f in report.files if f.outcome == "added"] == ["good.md"]
        assert app.search("会議室の予約", k=1)
    return {Path(f.path).name: f.reason or "" for f in report.failures}


def test_a_file_over_the_size_limit_is_reported(tmp_path: Path, embedder: MeteredEmbedder) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "good.md").write_text(GOOD, encoding="utf-8")
    (docs / "big.txt").write_text("あ" * 400_000, encoding="utf-8")  # 1.2 MB
    reasons = _reasons(
        Settings(home=tmp_path / "index", limits=LimitSettings(max_file_bytes=1_000_000)),
        embedder,
        docs,
    )
    assert "file too large" in reasons["big.txt"]
    assert "1,000,000" in reasons["big.txt"]


def test_a_zip_bomb_is_refused_before_it_is_unpacked(
    tmp_path: Path, embedder: MeteredEmbedder
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "good.md").write_text(GOOD, encoding="utf-8")
    bomb = docs / "bomb.docx"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        archive.writestr("word/document.xml", "<w:document/>")
        archive.writestr("word/media/padding.bin", b"\0" * 64_000_000)
    assert bomb.stat().st_size < 1_000_000
    reasons = _reasons(
        Settings(home=tmp_path / "index", limits=LimitSettings(max_unzipped_bytes=10_000_000)),
        embedder,
        docs,
    )
    assert "zip bomb" in reasons["bomb.docx"]


HANGING_READER = '''"""A file format whose reader waits for something that never happens."""

import threading


class HangingLoader:
    extensions = (".hang",)

    def load(self, path, options):
        threading.Event().wait()  # nobody ever sets it: no progress, no result
'''


@pytest.fixture
def hanging_format(tmp_path: Path) -> Iterator[None]:
    """A reader of ``.hang`` files installed the way a package registers one."""
    entry = "[shirabe.loaders]\nhang = hanging_reader:HangingLoader\n"
    site = tmp_path / "site"
    with installed(site, "hanging-reader", "hanging_reader", HANGING_READER, entry):
        yield


def test_a_file_that_never_progresses_is_stopped(
    tmp_path: Path, embedder: MeteredEmbedder, hanging_format: None
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "good.md").write_text(GOOD, encoding="utf-8")
    # read first: the file after it loads in the worker started in place of the stopped one
    (docs / "a-stuck.hang").write_text("中身は読まれない。", encoding="utf-8")
    reasons = _reasons(
        Settings(home=tmp_path / "index", limits=LimitSettings(load_timeout=1.0)), embedder, docs
    )
    assert reasons == {"a-stuck.hang": "no progress for 1 s while reading (time limit)"}
