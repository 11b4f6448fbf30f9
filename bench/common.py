"""Helpers shared by the benchmark scripts."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
CACHE = ROOT / "bench" / ".cache"
RESULTS = ROOT / "bench" / "results"


def percentile(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values, dtype=np.float64), q)) if values else 0.0


def drop_page_cache() -> None:
    """Empty the operating system's page cache (root only, Linux), so that the next searches
    read the index from disk; a database server's own buffers keep what they hold."""
    os.sync()
    Path("/proc/sys/vm/drop_caches").write_text("3\n")


def peak_rss_mb() -> float:
    """This process's peak resident memory. VmHWM where Linux has it: unlike ``ru_maxrss``
    it starts afresh at exec, so a child does not report its parent's peak."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def write_result(name: str, payload: dict[str, Any]) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(payload, ensure_ascii=False, indent=2), encoding="utf-8")
    return path


def revision() -> str:
    """The checkout's commit, with ``+changes`` when the work tree differs from it."""

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False)
        return done.stdout.strip()

    try:
        head = git("rev-parse", "--short", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except OSError:
        return "unknown"
    return (head or "unknown") + ("+changes" if dirty else "")


def write_sizes(name: str, meta: dict[str, Any], results: dict[str, dict[str, Any]]) -> Path:
    """Writes figures by corpus size to ``RESULTS/name.json`` and keeps the sizes that earlier
    runs with the same ``meta`` measured, so that a curve (bench/plot_scaling.py) can be built
    one size at a time. Each size records when and at which commit it was measured."""
    path = RESULTS / f"{name}.json"
    sizes: dict[str, dict[str, Any]] = {}
    if path.exists():
        earlier = json.loads(path.read_text(encoding="utf-8"))
        if all(earlier.get(key) == value for key, value in meta.items()):
            sizes = earlier.get("results", {})
    stamp = {"measured": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "commit": revision()}
    for size, figures in results.items():
        sizes[size] = {**figures, **stamp}
    ordered = dict(sorted(sizes.items(), key=lambda item: int(item[0])))
    return write_result(name, {**meta, "results": ordered})
