"""The memory ceiling of the reader process (SHIRABE_LIMITS__MAX_LOADER_MEMORY), on real processes.

A file that needs more memory than the ceiling allows is reported with a clear reason and the
next file is read by a fresh reader; the ceiling holds without a time limit too. The ceiling is
set low here (300 MiB) so that a small file can exceed it.
"""

from __future__ import annotations

import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from shirabe.embedders.metered import MeteredEmbedder
from shirabe.engine import Shirabe
from shirabe.loaders.protocol import LoadError, LoadOptions
from shirabe.loaders.worker import TimedLoader, memory_reason
from shirabe.settings import LimitSettings, Settings

from tests.support import installed

pytestmark = pytest.mark.slow

MIB = 1024 * 1024
CEILING = 300 * MIB
REASON = "needs more than 300 MiB of memory while reading (limit SHIRABE_LIMITS__MAX_LOADER_MEMORY)"
W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


def long_docx(path: Path, paragraphs: int) -> Path:
    """A genuine Word file of ``paragraphs`` different paragraphs (45 MB of XML for 500,000),
    which python-docx needs several hundred megabytes to read."""
    import docx

    template = path.with_name("template.docx")
    document = docx.Document()
    document.add_paragraph("テンプレート")
    document.save(str(template))
    with (
        zipfile.ZipFile(template) as source,
        zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out,
    ):
        for info in source.infolist():
            if info.filename != "word/document.xml":
                out.writestr(info, source.read(info.filename))
        with out.open("word/document.xml", "w") as fh:
            fh.write(
                f'<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="{W}"><w:body>'.encode()
            )
            for start in range(0, paragraphs, 10_000):
                fh.write(
                    "".join(
                        f"<w:p><w:r><w:t>第{i}段落。これは本文のテキストです。</w:t></w:r></w:p>"
                        for i in range(start, min(start + 10_000, paragraphs))
                    ).encode()
                )
            fh.write(b"</w:body></w:document>")
    return path


@pytest.fixture
def huge_docx(tmp_path: Path) -> Path:
    return long_docx(tmp_path / "huge.docx", 500_000)


@pytest.fixture
def fine(tmp_path: Path) -> Path:
    path = tmp_path / "fine.md"
    path.write_text("# 規程\n\n本文。\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("timeout", [None, 120.0], ids=["no-time-limit", "time-limit"])
def test_a_file_over_the_ceiling_fails_and_the_next_one_loads(
    huge_docx: Path, fine: Path, timeout: float | None
) -> None:
    with TimedLoader(LoadOptions(max_loader_memory=CEILING), timeout=timeout) as loader:
        with pytest.raises(LoadError) as info:
            loader.load(huge_docx)
        assert info.value.reason == REASON
        assert loader.load(fine).title == "規程"


def test_the_same_file_loads_under_the_default_ceiling(huge_docx: Path) -> None:
    with TimedLoader(LoadOptions(), timeout=None) as loader:
        document = loader.load(huge_docx)
    assert "第499999段落" in document.parts[-1].text


HUNGRY_READER = '''"""Readers that take memory: as much as the file says, or all there is."""

import os
import signal


class HungryLoader:
    extensions = (".hungry",)

    def load(self, path, options):
        from shirabe.records import Document, Part

        hoard = bytearray(int(path.read_text()))  # MemoryError beyond the ceiling
        return Document(str(path), [Part(f"{len(hoard)} bytes")])


class KilledLoader:
    extensions = (".killed",)

    def load(self, path, options):
        os.kill(os.getpid(), signal.SIGKILL)  # as the system's out-of-memory killer does
'''


@pytest.fixture
def hungry_formats(tmp_path: Path) -> Iterator[None]:
    entry = (
        "[shirabe.loaders]\n"
        "hungry = hungry_reader:HungryLoader\n"
        "killed = hungry_reader:KilledLoader\n"
    )
    with installed(tmp_path / "site", "hungry-reader", "hungry_reader", HUNGRY_READER, entry):
        yield


def test_every_way_of_running_out_of_memory_is_one_file_failing(
    tmp_path: Path, fine: Path, hungry_formats: None
) -> None:
    (tmp_path / "greedy.hungry").write_text(str(1024 * MIB))
    (tmp_path / "modest.hungry").write_text(str(10 * MIB))
    (tmp_path / "victim.killed").write_text("")
    with TimedLoader(LoadOptions(max_loader_memory=CEILING), timeout=60.0) as loader:
        with pytest.raises(LoadError) as greedy:
            loader.load(tmp_path / "greedy.hungry")
        assert loader.load(tmp_path / "modest.hungry").parts[0].text == f"{10 * MIB} bytes"
        with pytest.raises(LoadError) as killed:
            loader.load(tmp_path / "victim.killed")
        assert loader.load(fine).title == "規程"
    assert greedy.value.reason == REASON == memory_reason(CEILING)
    assert (
        killed.value.reason
        == "the reader was killed while reading (out of memory on this machine?)"
    )


def test_the_setting_reaches_the_reader_in_an_ingest(
    tmp_path: Path, huge_docx: Path, fine: Path, embedder: MeteredEmbedder
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    huge_docx.rename(docs / "a-huge.docx")  # read first: the next file needs a fresh reader
    fine.rename(docs / "good.md")
    settings = Settings(
        home=tmp_path / "index", limits=LimitSettings(max_loader_memory=CEILING, load_timeout=None)
    )
    with Shirabe(settings, embedder=embedder) as app:
        report = app.ingest([docs])
    outcomes = {Path(f.path).name: (f.outcome, f.reason) for f in report.files}
    assert outcomes["a-huge.docx"] == ("failed", REASON)
    assert outcomes["good.md"][0] == "added"
