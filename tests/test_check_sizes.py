"""scripts/check_sizes.py: Python modules, scripts and style sheets past the limit, with no
waiver; and the package as it stands passes."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from tests.support import ROOT

SCRIPT = ROOT / "scripts" / "check_sizes.py"


def check_sizes() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_sizes", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write(path: Path, lines: int, head: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(head + "x = 1\n" * lines, encoding="utf-8")
    return path


def test_long_files_are_found_whatever_they_say(tmp_path: Path) -> None:
    static = tmp_path / "web" / "static"
    write(tmp_path / "short.py", 5)
    long_py = write(tmp_path / "deep" / "long.py", 6)
    waived_py = write(tmp_path / "waived.py", 5, head="# size: one table\n")
    long_js = write(static / "long.js", 6)
    waived_js = write(static / "waived.js", 5, head="// size: one table\n")
    long_css = write(static / "app.css", 6)
    write(static / "short.js", 5)
    write(static / "icon.svg", 50)  # not a script or style sheet
    elsewhere = write(tmp_path / "elsewhere.js", 6)

    found = dict(check_sizes().oversized(tmp_path, limit=5))

    assert found == {
        long_py: 6,
        waived_py: 6,
        long_js: 6,
        waived_js: 6,
        long_css: 6,
        elsewhere: 6,
    }


def test_the_package_as_it_stands_passes() -> None:
    assert check_sizes().oversized() == []
