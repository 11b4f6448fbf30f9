"""Chunkers and retrievers are families like the others: a package registers one under the
``shirabe.chunkers`` or ``shirabe.retrievers`` entry points, the settings name it, and the
engine builds it."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from shirabe.engine import Shirabe
from shirabe.settings import IngestSettings, RetrievalSettings, Settings

from tests.support import HashedEmbedder, installed

NOTE = """# 経費精算

経費精算の締め日は毎月25日です。領収書は原本を総務部に提出してください。

## 交通費

通勤定期の区間を超える交通費は、乗車区間と金額を記入して申請します。

## 出張旅費

出張の宿泊費は一泊一万二千円までを実費で精算します。日当は一日二千円です。
"""

CHUNKER = """
from shirabe.chunking.markdown import MarkdownChunker


class FirstOnly:
    # keeps a document's first passage only

    signature = "first-only-1"

    def __init__(self, options):
        self._inner = MarkdownChunker(size=options.chunk_size, summaries=False)

    def chunk(self, document):
        return self._inner.chunk(document)[:1]


def from_settings(options):
    return FirstOnly(options)
"""

RETRIEVER = """
class Nothing:
    def retrieve(self, query, k):
        return []


def from_settings(settings, store, embedder):
    return Nothing()
"""


def _chunks(tmp_path: Path, ingest: IngestSettings) -> int:
    folder = tmp_path / "docs"
    folder.mkdir(exist_ok=True)
    (folder / "経費.md").write_text(NOTE, encoding="utf-8")
    settings = Settings(home=tmp_path / f"index-{ingest.chunker}", ingest=ingest)
    with Shirabe(settings, embedder=HashedEmbedder()) as app:
        report = app.ingest([folder])
        return sum(f.chunks for f in report.files)


@pytest.mark.slow  # an ingest reads files in a worker process
def test_an_installed_chunker_is_chosen_by_name_and_cuts_the_documents(tmp_path: Path) -> None:
    built_in = _chunks(tmp_path, IngestSettings(section_summaries=False))
    with installed(
        tmp_path / "site",
        "first-only",
        "first_only",
        CHUNKER,
        "[shirabe.chunkers]\nfirst = first_only:from_settings\n",
    ):
        first = _chunks(tmp_path, IngestSettings(chunker="first", section_summaries=False))
    assert built_in == 3  # one passage a section at 400 characters
    assert first == 1


@pytest.mark.slow
def test_an_installed_retriever_is_chosen_by_name_and_finds_the_hits(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "経費.md").write_text(NOTE, encoding="utf-8")
    question = "出張の宿泊費はいくらまでですか"
    with Shirabe(Settings(home=tmp_path / "index"), embedder=HashedEmbedder()) as app:
        app.ingest([folder])
        assert app.search(question, k=3)  # the built-in hybrid retriever finds the section
    entry = "[shirabe.retrievers]\nnothing = no_hits:from_settings\n"
    with installed(tmp_path / "site", "no-hits", "no_hits", RETRIEVER, entry):
        settings = Settings(
            home=tmp_path / "index", retrieval=RetrievalSettings(retriever="nothing")
        )
        with Shirabe(settings, embedder=HashedEmbedder()) as app:
            assert app.search(question, k=3) == []
            assert app.ask(question).refused


def test_settings_name_only_registered_chunkers_and_retrievers() -> None:
    with pytest.raises(ValidationError, match=r"unknown chunker 'nope': choose from markdown"):
        IngestSettings(chunker="nope")
    with pytest.raises(
        ValidationError, match=r"unknown retriever 'nope': choose from bm25, dense, hybrid"
    ):
        RetrievalSettings(retriever="nope")
    assert Settings().ingest.chunker == "markdown"
    assert Settings().retrieval.retriever == "hybrid"
