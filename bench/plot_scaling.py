"""Query p95 against corpus size, drawn from the figures the scale benchmarks wrote.

    python bench/plot_scaling.py [--vectors means] [--out docs/images/scaling.png]

Reads bench/results/scale-VECTORS.json (embedded store, bench/scale.py), postgres-VECTORS.json
(bench/postgres.py) and peers.json (bench/peers.py), and draws, on log-log axes, the p95 of a
search with its query embedding against the number of chunks: unfiltered and with an access
filter leaving 90% of the documents readable for both stores, and the LangChain stack. A size a
benchmark has not measured is simply absent; the legend says which vectors the passages had.
Prints the points it drew.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from common import RESULTS, ROOT

CASES = (("query", "unfiltered", "-"), ("query_90pct_readable", "90% readable", ":"))


def load(name: str) -> dict[str, Any]:
    path = RESULTS / f"{name}.json"
    if not path.exists():
        return {}
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def series(data: dict[str, Any], key: str, path: tuple[str, ...] = ()) -> list[tuple[int, float]]:
    """(chunks, p95 ms) of every size whose figures hold ``key``."""
    points = []
    for measured in data.get("results", {}).values():
        figures = measured
        for part in path:
            figures = figures.get(part, {})
        if key in figures and "chunks" in figures:
            points.append((int(figures["chunks"]), float(figures[key])))
    return sorted(points)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vectors", default="means", help="random, means or use")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images" / "scaling.png")
    args = parser.parse_args()

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lines: list[tuple[str, str, str, list[tuple[int, float]]]] = []
    stores = (("scale", "tab:blue", "embedded"), ("postgres", "tab:green", "PostgreSQL"))
    for store, colour, label in stores:
        data = load(f"{store}-{args.vectors}")
        for case, name, style in CASES:
            points = series(data, f"{case}_p95_ms")
            if points:
                lines.append((f"shirabe {label}, {name}", colour, style, points))
    # peers.json's smallest size is the JSQuAD quality run, not the synthetic corpus
    peers = [p for p in series(load("peers"), "p95_ms", ("peers",)) if p[0] >= 2_000]
    if peers:
        label = "LangChain + Chroma + rank_bm25 (same files, its own chunks; random vectors)"
        lines.append((label, "tab:red", "-", peers))
    if not lines:
        raise SystemExit(f"no results under {RESULTS}: run bench/scale.py, bench/postgres.py first")

    fig, ax = plt.subplots(figsize=(7.5, 5.5), dpi=120)
    for label, colour, style, points in lines:
        xs, ys = zip(*points, strict=True)
        ax.plot(xs, ys, style, color=colour, marker="o", label=label)
        print(f"{label}: " + ", ".join(f"{x:,} chunks {y:.1f} ms" for x, y in points))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("chunks in the index")
    ax.set_ylabel("search p95 with query embedding (ms)")
    ax.set_title(f"Search p95 on 2 cores (shirabe passages: {args.vectors} vectors)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2)  # below
    fig.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
