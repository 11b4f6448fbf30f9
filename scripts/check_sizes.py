"""Fail when a file of the package grows past LIMIT lines: a Python module under src/shirabe
without saying why, or any script or style sheet of the web page (src/shirabe/web/static).

A Python module may be longer when one of its first lines is a comment ``# size: <why>``; the
page's JavaScript and CSS files have no such waiver.
Function complexity is checked by ruff (C901, ``max-complexity`` in pyproject.toml).
"""

from __future__ import annotations

import sys
from pathlib import Path

LIMIT = 500
ROOT = Path(__file__).resolve().parents[1] / "src" / "shirabe"
STATIC = Path("web") / "static"
"""Where the web page's files are, under ROOT."""
PAGE_FILES = (".js", ".css")
"""The suffixes of the page's files held to LIMIT, with no waiver."""


def oversized(root: Path = ROOT, limit: int = LIMIT) -> list[tuple[Path, int]]:
    found = []
    for path in sorted(root.rglob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        if len(lines) > limit and not any(line.startswith("# size:") for line in lines[:10]):
            found.append((path, len(lines)))
    for path in sorted((root / STATIC).rglob("*")):
        if path.suffix in PAGE_FILES and path.is_file():
            count = len(path.read_text(encoding="utf-8").splitlines())
            if count > limit:
                found.append((path, count))
    return found


def main() -> int:
    found = oversized()
    for path, count in found:
        how = "split it"
        if path.suffix not in PAGE_FILES:
            how += ", or say why in a '# size:' comment at the top"
        print(f"{path.relative_to(ROOT.parents[1])}: {count} lines (limit {LIMIT}; {how})")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
