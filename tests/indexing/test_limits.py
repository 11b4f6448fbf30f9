"""Safety limits: file size, unzipped size of Office packages, time per file.

Each limit is hit by a real file in a real ingest; the file is reported with the reason and the
other files of the same run still go in.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from shirabe.embedders.metered import MeteredEmbedder
from shirabe.engine import Shirabe
from shirabe.settings import Settings

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
    reasons = _reasons(Settings(home=tmp_path / "index", max_file_bytes=1_000_000), embedder, docs)
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
        Settings(home=tmp_path / "index", max_unzipped_bytes=10_000_000), embedder, docs
    )
    assert "zip bomb" in reasons["bomb.docx"]


def test_a_file_that_takes_too_long_is_stopped(tmp_path: Path, embedder: MeteredEmbedder) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "good.md").write_text(GOOD, encoding="utf-8")
    rows = "".join(f"<tr><td>{i}</td><td>社員{i}</td></tr>" for i in range(10_000))
    # several seconds to parse, with no progress reported on the way
    (docs / "huge.html").write_text(f"<table>{rows}</table>", encoding="utf-8")
    reasons = _reasons(Settings(home=tmp_path / "index", load_timeout=1.0), embedder, docs)
    assert "time limit" in reasons["huge.html"]
