"""The reader process starts from anywhere the library is used.

It is a fresh interpreter, not a multiprocessing child: a script without a main guard is not
run again in it (the README's library example works as a plain script), and it starts from a
thread as well as from the main one.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from shirabe.answering.refusal import REFUSAL_TEXT
from shirabe.embedders.metered import MeteredEmbedder
from shirabe.engine import Shirabe
from shirabe.settings import Settings

from tests.support import ROOT, SAMPLE_DOCS

pytestmark = pytest.mark.slow


def _environment() -> dict[str, str]:
    """This environment without SHIRABE_* settings, which the scripts must not depend on."""
    return {k: v for k, v in os.environ.items() if not k.startswith("SHIRABE_")}


def library_example() -> str:
    """The code block of the README's "As a library" section, as users copy it."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## As a library\n", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match is not None, "README.md: no python block under 'As a library'"
    return match[1]


def run_script(
    folder: Path, name: str, code: str, timeout: float
) -> subprocess.CompletedProcess[str]:
    """``code`` saved as ``folder/name`` and run there as a plain script."""
    (folder / name).write_text(code, encoding="utf-8")
    return subprocess.run(
        [sys.executable, name],
        cwd=folder,
        env=_environment(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_the_readme_library_example_runs_as_a_plain_script(tmp_path: Path) -> None:
    code = library_example()
    assert "__main__" not in code  # the point: users do not write a main guard
    shutil.copytree(SAMPLE_DOCS, tmp_path / "sample_docs")
    done = run_script(tmp_path, "example.py", code, timeout=900)
    assert done.returncode == 0, done.stderr
    assert "bootstrapping" not in done.stderr
    assert REFUSAL_TEXT not in done.stdout
    assert "ミナモ勤怠" in done.stdout
    assert re.search(r"^1 .+", done.stdout, re.MULTILINE), done.stdout  # a numbered citation


SCRIPT = """\
from pathlib import Path

from shirabe.loaders.protocol import LoadOptions
from shirabe.loaders.worker import TimedLoader

with open("runs.log", "a", encoding="utf-8") as log:
    log.write("run\\n")  # at module level, with no main guard
with TimedLoader(LoadOptions(), timeout=60.0) as loader:
    for name in ("a.md", "b.md"):
        print(loader.load(Path(name)).title)
"""


def test_the_reader_never_runs_the_callers_main_module(tmp_path: Path) -> None:
    for name, title in (("a.md", "規程A"), ("b.md", "規程B")):
        (tmp_path / name).write_text(f"# {title}\n\n本文。\n", encoding="utf-8")
    done = run_script(tmp_path, "script.py", SCRIPT, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["規程A", "規程B"]
    assert (tmp_path / "runs.log").read_text(encoding="utf-8") == "run\n"


def test_ingest_from_a_thread(tmp_path: Path, embedder: MeteredEmbedder) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "rules.md").write_text("# 会議室\n\n会議室の予約は前日までに行う。\n", encoding="utf-8")
    (docs / "staff.csv").write_text("氏名,部署\n山田,総務部\n", encoding="utf-8")
    outcomes: list[object] = []

    def ingest() -> None:
        try:
            with Shirabe(Settings(home=tmp_path / "index"), embedder=embedder) as app:
                report = app.ingest([docs])
                outcomes.extend(sorted((Path(f.path).name, f.outcome) for f in report.files))
                outcomes.append(bool(app.search("会議室の予約", k=1)))
        except BaseException as exc:  # surfaced by the assertion below
            outcomes.append(exc)

    thread = threading.Thread(target=ingest)
    thread.start()
    thread.join(timeout=600)
    assert not thread.is_alive()
    assert outcomes == [("rules.md", "added"), ("staff.csv", "added"), True]
