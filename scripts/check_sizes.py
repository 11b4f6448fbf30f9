"""Fail when a file of the package grows past LIMIT lines: every Python module, script and style
sheet under src/shirabe (the web page's are in src/shirabe/web/static). There is no waiver: a
file past the limit is split.
Function size and complexity are checked by ruff (C901 and the pylint limits in pyproject.toml).
"""

from __future__ import annotations

import sys
from pathlib import Path

LIMIT = 500
ROOT = Path(__file__).resolve().parents[1] / "src" / "shirabe"
SUFFIXES = (".py", ".js", ".css")
"""The suffixes of the files held to LIMIT."""


def held(root: Path) -> list[Path]:
    """The files held to the limit, in order."""
    return sorted(p for p in root.rglob("*") if p.suffix in SUFFIXES and p.is_file())


def oversized(root: Path = ROOT, limit: int = LIMIT) -> list[tuple[Path, int]]:
    found = []
    for path in held(root):
        count = len(path.read_text(encoding="utf-8").splitlines())
        if count > limit:
            found.append((path, count))
    return found


def main() -> int:
    found = oversized()
    for path, count in found:
        print(f"{path.relative_to(ROOT.parents[1])}: {count} lines (limit {LIMIT}; split it)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
