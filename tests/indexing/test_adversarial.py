"""Adversarial files, built here at test time: names the file system holds but UTF-8 does not,
NFD and very long names, zip bombs, bad bytes, symlink loops and broken links, empty, garbage
and oversized files. Through the real command, every file is ingested or reported with a
reason, nothing prints a traceback, and the index is consistent afterwards."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import unicodedata
import zipfile
from pathlib import Path

import pytest

from tests.support import ROOT

pytestmark = pytest.mark.slow

GOOD = "# {title}\n\n{title}の申請は総務部に提出する。受付番号はADV-{n}である。\n"
MAX_FILE_BYTES = 1_000_000
MAX_UNZIPPED_BYTES = 10_000_000


def _good(path: Path, title: str, n: int) -> None:
    path.write_text(GOOD.format(title=title, n=n), encoding="utf-8")


def _bomb(path: Path, part: str, declared_huge: bool) -> None:
    """An Office package whose one XML part unpacks to far more than it weighs."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", '<?xml version="1.0"?><Types/>')
        size = 40_000_000 if declared_huge else 2_000_000
        z.writestr(part, "<a>" + " " * size + "</a>")


def build(folder: Path) -> dict[str, str]:
    """The adversarial corpus; file name as the report shows it -> "ok" or "failed"."""
    folder.mkdir(parents=True)
    expected: dict[str, str] = {}
    raw = os.fsencode(folder)
    sjis = raw + b"/" + "就業規則.md".encode("cp932")
    with open(sjis, "wb") as out:
        out.write(GOOD.format(title="就業規則", n=1).encode())
    expected["就業規則.md"] = "ok"
    with open(raw + b"/\xff\xfe-\x81 .md", "wb") as out:
        out.write(GOOD.format(title="謎", n=2).encode())
    expected["\\xff\\xfe-\\x81 .md"] = "ok"
    _good(folder / unicodedata.normalize("NFD", "ガイドブック.md"), "ガイドブック", 3)
    expected["ガイドブック.md"] = "ok"
    long_name = "長" * 80 + ".md"  # 243 bytes: near the 255 a name may have
    _good(folder / long_name, "長い名前", 4)
    expected[long_name] = "ok"
    (folder / "壊れたバイト.txt").write_bytes(
        "経費精算は翌月10日までに行う。".encode() + b"\xff" + "領収書を添付する。".encode()
    )
    expected["壊れたバイト.txt"] = "ok"
    _bomb(folder / "bomb.docx", "word/document.xml", declared_huge=True)
    expected["bomb.docx"] = "failed"
    _bomb(folder / "bomb.xlsx", "xl/workbook.xml", declared_huge=True)
    expected["bomb.xlsx"] = "failed"
    _bomb(folder / "bomb.pptx", "ppt/presentation.xml", declared_huge=True)
    expected["bomb.pptx"] = "failed"
    (folder / "empty.txt").write_bytes(b"")
    expected["empty.txt"] = "failed"
    (folder / "garbage.pdf").write_bytes(b"%PDF-1.7\n" + bytes(range(256)) * 40)
    expected["garbage.pdf"] = "failed"
    (folder / "not-a-zip.docx").write_bytes(b"PK\x03\x04 this is not a zip at all")
    expected["not-a-zip.docx"] = "failed"
    with open(folder / "huge.txt", "wb") as out:  # sparse: large on paper, cheap on disk
        out.truncate(MAX_FILE_BYTES * 3)
    expected["huge.txt"] = "failed"
    (folder / "loop").symlink_to(folder, target_is_directory=True)
    expected["loop"] = "failed"
    (folder / "消えたリンク.md").symlink_to(folder / "missing.md")
    expected["消えたリンク.md"] = "failed"
    return expected


def shirabe(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "SHIRABE_HOME": str(home),
        "SHIRABE_LIMITS__MAX_FILE_BYTES": str(MAX_FILE_BYTES),
        "SHIRABE_LIMITS__MAX_UNZIPPED_BYTES": str(MAX_UNZIPPED_BYTES),
    }
    return subprocess.run(
        [sys.executable, "-m", "shirabe", *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )


def test_every_adversarial_file_is_ingested_or_reported_without_a_traceback(
    tmp_path: Path,
) -> None:
    docs = tmp_path / "docs"
    expected = build(docs)
    home = tmp_path / "index"
    done = shirabe("ingest", str(docs), "--json", home=home)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 1, done.stderr  # failures are reported with exit code 1
    report = json.loads(done.stdout)
    outcomes = {Path(f["path"]).name: f for f in report["files"]}
    assert set(outcomes) == set(expected), sorted(outcomes)
    for name, want in expected.items():
        got = outcomes[name]
        if want == "ok":
            assert got["outcome"] == "added", (name, got)
        else:
            assert got["outcome"] == "failed" and got["reason"], (name, got)
    assert "zip bomb" in outcomes["bomb.docx"]["reason"]
    assert "too large" in outcomes["huge.txt"]["reason"]
    assert any("U+FFFD" in w for w in outcomes["壊れたバイト.txt"]["warnings"])

    # the index agrees with the report, and a second run changes nothing
    status = json.loads(shirabe("status", "--json", home=home).stdout)
    assert status["files"] == sum(1 for v in expected.values() if v == "ok")
    assert len(status["failed"]) == sum(1 for v in expected.values() if v == "failed")
    again = shirabe("ingest", str(docs), "--json", home=home)
    assert "Traceback" not in again.stderr
    counts = json.loads(again.stdout)["counts"]
    assert counts["added"] == counts["updated"] == counts["removed"] == 0, counts
    found = shirabe("search", "就業規則の申請", "--json", home=home)
    assert found.returncode == 0 and "ADV-1" in found.stdout
