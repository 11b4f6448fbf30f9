"""Every real-world fixture, ingested in one run through the CLI: indexed and findable, or failed
with the expected reason.

The whole folder ../shared/fixtures goes into one index (with the passwords the fixtures README
gives), so a broken file that crashed the run or stopped other files would fail every row. Each
indexed file must come back from ``shirabe search`` for a phrase of its own, in the top ten,
with the expected locator. The fast Universal Sentence Encoder embeds here (4,000 CSV rows would
take minutes with the default model); the default model goes through every format in the
sample-corpus tests.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from shirabe.cli.app import app

from tests.support import FIXTURES, shared

pytestmark = pytest.mark.slow

PASSWORDS = {"aes-256.pdf": "foo", "rc4-40.pdf": "foo", "aes-256-r6.pdf": "usersecret"}

INDEXED: list[tuple[str, str, dict[str, Any]]] = [
    # (file, phrase that must find it, what its hit's locator must contain)
    ("office/2023-half-year-analyses-by-segment.xlsx", "Zone EUR Sales", {}),
    ("office/51519.xlsx", "豊田車会社", {"sheet": "Sheet1", "row": 2}),
    ("office/anno_IterateTables.xlsx", "2年3組", {"sheet": "通常の表"}),
    ("office/attendance.xlsx", "要件定義の打ち合わせ", {"sheet": "作業報告書"}),
    ("office/fake-power-point-malformed.pptx", "Problem Date Placeholder", {"slide": 1}),
    ("office/stress019.docx", "リニューアルプロポーザル募集要項", {}),
    ("office/tables-with-incomplete-rows.docx", "DOCX table where rows are missing cells", {}),
    ("office/test.docx", "AutoGen open-source framework multiple agents converse", {}),
    ("office/test.pptx", "1b92870d-e3b5-4e65-8153-919f4ff45592", {"slide": 3}),
    ("office/test.xlsx", "Alpha Beta Gamma Delta", {"sheet": "Sheet1"}),
    ("office/with_japanese.pptx", "ゾルゲと尾崎", {"slide": 1}),
    ("pdf/20210830_2.pdf", "マネロン・テロ資金供与・拡散金融対策に関する行動計画", {"page": 1}),
    ("pdf/aes-256-r6.pdf", "Hello World", {"page": 1}),
    ("pdf/aes-256.pdf", "Secret!", {"page": 1}),
    ("pdf/copy-protected.pdf", "LayoutParser", {"page": 1}),
    ("pdf/embedded-cmap-cidfont.pdf", "should be extractable", {"page": 1}),
    ("pdf/issue-625-identity-cmap.pdf", "Faktura nr FV 1/2021", {"page": 1}),
    ("pdf/issue-791-non-unicode-cmap.pdf", "Peněžní prostředky na účtech", {"page": 1}),
    ("pdf/jo.pdf", "わたくしといふ現象は假定された有機交流電燈の", {"page": 1}),
    ("pdf/kampo.pdf", "道路交通法施行令の一部を改正する政令", {"page": 1}),
    ("pdf/keshouhin-standard.pdf", "塩化ビニルモノマー 塩化メチレン", {"page": 3}),
    ("pdf/korean-text-with-tables.pdf", "적립 혜택은 매출전표 접수 시점", {"page": 1}),
    ("pdf/multi-column.pdf", "Dense Passage Retrieval for Open-Domain Question Answering", {}),
    ("pdf/nlp2004slides.pdf", "疎なデータの問題", {"page": 4}),
    ("pdf/rc4-40.pdf", "Secret!", {"page": 1}),
    ("pdf/scanned-medical-report.pdf", "SEATTLE GENERAL HOSPITAL", {}),  # by OCR
    ("pdf/test-ocr-notext.pdf", "This file contains some words", {"page": 1}),  # by OCR
    ("pdf/zen_of_python_corrupted.pdf", "Beautiful is better than ugly", {"page": 1}),
    ("text/cp932-mskanji.csv", "髙橋淳", {"row": 4}),
    ("text/localgovjp-sjis.csv", "市電のふるさと中央区", {"row": 3}),
    ("text/localgovjp-utf8-bom.csv", "市電のふるさと中央区", {"row": 3}),
    ("text/prefjp-utf8-bom.csv", "あおもりけん", {"row": 3}),
    ("text/shiftjis.txt", "Elasticsearch ライセンス", {}),
    ("text/utf16-bom.csv", "Maple Leafs", {}),
]

FAILED: list[tuple[str, str]] = [
    # (file, words its failure reason must contain)
    ("office/clusterfuzz-testcase-minimized-POIXWPFFuzzer-5313273089884160.docx", "corrupt"),
    ("office/invalid.xlsx", "not a valid Office file"),
    ("office/password_protected.xlsx", "encrypted, password required"),
    ("office/test-protected.docx", "encrypted, password required"),
    ("office/truncated62886.docx", "corrupt or truncated"),
    ("pdf/password.pdf", "encrypted, password required"),
]

runner = CliRunner()


def _cli(args: list[str], env: dict[str, str], exit_code: int = 0) -> Any:
    result = runner.invoke(app, [*args, "--json"], env=env)
    assert result.exit_code == exit_code, result.output
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    shared(FIXTURES)
    home = str(tmp_path_factory.mktemp("fixtures") / "index")
    env = {"SHIRABE_EMBEDDER__NAME": "use", "SHIRABE_INGEST__PASSWORDS": json.dumps(PASSWORDS)}
    report = _cli(["ingest", str(FIXTURES), "--index", home], env, exit_code=1)  # some fail
    assert report["files"], report
    yield home, env


@pytest.fixture(scope="module")
def sources(index: tuple[str, dict[str, str]]) -> dict[str, dict[str, Any]]:
    home, env = index
    status = _cli(["status", "--index", home], env)
    failed = {Path(f["path"]).resolve(): f for f in status["failed"]}
    return {str(p.relative_to(FIXTURES.resolve())): f for p, f in failed.items()}


def test_the_table_lists_every_fixture() -> None:
    shared(FIXTURES)
    files = [p for p in FIXTURES.rglob("*") if p.is_file() and p.suffix != ".md"]
    on_disk = {str(p.relative_to(FIXTURES)) for p in files}
    listed = {name for name, _, _ in INDEXED} | {name for name, _ in FAILED}
    assert listed == on_disk


@pytest.mark.parametrize(("name", "phrase", "locator"), INDEXED, ids=[n for n, _, _ in INDEXED])
def test_indexed_and_found(
    index: tuple[str, dict[str, str]],
    sources: dict[str, dict[str, Any]],
    name: str,
    phrase: str,
    locator: dict[str, Any],
) -> None:
    home, env = index
    assert name not in sources, sources.get(name)
    hits = _cli(["search", phrase, "--index", home, "--top-k", "10"], env)
    target = str((FIXTURES / name).resolve())
    mine = [h for h in hits if str(Path(h["source"]).resolve()) == target]
    assert mine, f"{name} not in the top 10 for {phrase!r}: {[h['source'] for h in hits]}"
    assert any(locator.items() <= h["locator"].items() for h in mine), [h["locator"] for h in mine]


@pytest.mark.parametrize(("name", "reason"), FAILED, ids=[n for n, _ in FAILED])
def test_failed_with_reason(sources: dict[str, dict[str, Any]], name: str, reason: str) -> None:
    assert name in sources, f"{name} was not reported as failed"
    assert reason in (sources[name]["error"] or "")
