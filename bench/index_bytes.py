"""Where the bytes of an embedded index go: each SQLite table and index (by ``dbstat``), the
embedding cache's vector files, each kind of segment array (summed over the live segments) and
the files as they are on disk.

    python bench/index_bytes.py INDEX_FOLDER

bench/scale.py prints the same breakdown for the index it builds.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sqlite3
from pathlib import Path

DATABASE = "index.sqlite3"
MB = 10**6


def database_bytes(path: Path) -> dict[str, int]:
    """Bytes of pages each table and index uses (``dbstat``), with the free pages and the
    file's own size; read only, so a kept index is not changed by measuring it."""
    uri = f"file:{path}?mode=ro"
    with contextlib.closing(sqlite3.connect(uri, uri=True)) as conn:
        out = {
            str(name): int(size)
            for name, size in conn.execute(
                "SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC"
            )
        }
        page = int(conn.execute("PRAGMA page_size").fetchone()[0])
        out["(free pages)"] = page * int(conn.execute("PRAGMA freelist_count").fetchone()[0])
    out["(file)"] = path.stat().st_size
    return out


def segment_bytes(folder: Path) -> dict[str, int]:
    """Bytes of each array kind (``chunk_vectors``, ``sent_rows`` …) over the segments the
    manifest names, and of the tombstones."""
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    out: dict[str, int] = {}
    for name in manifest["segments"]:
        for array in sorted((folder / name).glob("*.npy")):
            out[array.stem] = out.get(array.stem, 0) + array.stat().st_size
    if manifest.get("tombstones"):
        out["tombstones"] = (folder / manifest["tombstones"]).stat().st_size
    return out


def embedded_bytes(home: Path) -> dict[str, dict[str, float]]:
    """The breakdown of the index in ``home``, in MB: SQLite, the vector files, segments, and
    the whole folder."""
    whole = sum(p.stat().st_size for p in home.rglob("*") if p.is_file())
    parts = {
        "sqlite": database_bytes(home / DATABASE),
        "vector files": {p.name: p.stat().st_size for p in sorted(home.glob("*.f16"))},
        "segments": segment_bytes(home / "segments"),
    }
    out = {kind: {k: round(v / MB, 1) for k, v in sizes.items()} for kind, sizes in parts.items()}
    out["total"] = {"folder": round(whole / MB, 1)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("home", type=Path, help="the index folder (SHIRABE_HOME)")
    args = parser.parse_args()
    print(json.dumps(embedded_bytes(args.home), indent=1))


if __name__ == "__main__":
    main()
