"""Fail when a module under src/shirabe grows past LIMIT lines without saying why.

A module may be longer when one of its first lines is a comment ``# size: <why>``.
Function complexity is checked by ruff (C901, ``max-complexity`` in pyproject.toml).
"""

from __future__ import annotations

import sys
from pathlib import Path

LIMIT = 500
ROOT = Path(__file__).resolve().parents[1] / "src" / "shirabe"


def oversized(root: Path = ROOT, limit: int = LIMIT) -> list[tuple[Path, int]]:
    found = []
    for path in sorted(root.rglob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        if len(lines) > limit and not any(line.startswith("# size:") for line in lines[:10]):
            found.append((path, len(lines)))
    return found


def main() -> int:
    found = oversized()
    for path, count in found:
        print(
            f"{path.relative_to(ROOT.parents[1])}: {count} lines (limit {LIMIT}; split it, "
            "or say why in a '# size:' comment at the top)"
        )
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
