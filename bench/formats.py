"""Format benchmark: how fast each loader reads the shared fixtures, and how much memory it takes.

    python bench/formats.py [--large] [--no-ocr]

Every fixture under ../shared/fixtures is loaded and chunked in a fresh child process, so each
file's peak RSS is its own. Per format the script prints files/s and units/s, where the unit is
what a citation points at: pages (PDF), rows (Excel, CSV), slides (PowerPoint), chunks (Word,
HTML, text). Failed files count towards files/s only. ``--large`` also generates big synthetic
files in bench/.cache (a 500-page PDF, a 100,000-row CSV, a 50,000-row workbook, a 300-slide
deck) to show that memory stays bounded as files grow. Embedding is not included: it costs the
same per chunk whatever the format (see bench/jsquad.py).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from common import CACHE, SHARED, peak_rss_mb, write_result

UNITS = {".pdf": "pages", ".xlsx": "rows", ".xlsm": "rows", ".csv": "rows", ".tsv": "rows"}
UNITS |= {".pptx": "slides"}


def measure_one(path: Path, ocr: bool) -> dict[str, Any]:
    """Load and chunk one file in this process; what happened, how long it took, peak RSS."""
    from shirabe.chunking.markdown import MarkdownChunker
    from shirabe.loaders.protocol import LoadError, LoadOptions
    from shirabe.loaders.worker import load_file

    baseline = peak_rss_mb()
    options = LoadOptions(
        passwords={"aes-256.pdf": "foo", "rc4-40.pdf": "foo", "aes-256-r6.pdf": "usersecret"},
        ocr=ocr,
    )
    started = time.perf_counter()
    result: dict[str, Any] = {"file": str(path), "format": path.suffix.lower()}
    try:
        document = load_file(path, options)
    except LoadError as exc:
        result |= {"outcome": "failed", "reason": exc.reason}
    else:
        loaded = time.perf_counter()
        chunks = MarkdownChunker().chunk(document)
        unit = UNITS.get(path.suffix.lower(), "chunks")
        if unit == "pages":
            units = len({p.locator.get("page") for p in document.parts if "page" in p.locator})
        elif unit == "rows":
            units = sum(1 for p in document.parts if "row" in p.locator)
        elif unit == "slides":
            units = len({p.locator.get("slide") for p in document.parts if "slide" in p.locator})
        else:
            units = len(chunks)
        result |= {
            "outcome": "indexed",
            "parts": len(document.parts),
            "chunks": len(chunks),
            "unit": unit,
            "units": units,
            "load_seconds": loaded - started,
            "ocr_pages": sum("OCR" in w and "needs" not in w for w in document.warnings),
            "warnings": len(document.warnings),
        }
    result["seconds"] = time.perf_counter() - started
    result["peak_rss_mb"] = peak_rss_mb()
    result["baseline_rss_mb"] = baseline
    result["size_bytes"] = path.stat().st_size
    return result


def run_child(path: Path, ocr: bool) -> dict[str, Any]:
    command = [sys.executable, __file__, "--one", str(path)]
    if not ocr:
        command.append("--no-ocr")
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return {
            "file": str(path),
            "format": path.suffix.lower(),
            "outcome": "crashed",
            "reason": done.stderr.strip().splitlines()[-1:] or ["?"],
            "seconds": 0.0,
        }
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def make_large_files(folder: Path) -> list[Path]:
    """Big synthetic files (made once, then cached) for the memory check."""
    folder.mkdir(parents=True, exist_ok=True)
    sentence = "本製品は家庭用の浄水器です。カートリッジは約三か月ごとに交換してください。"
    paths: list[Path] = []

    pdf = folder / "large-500-pages.pdf"
    if not pdf.exists():
        from reportlab.lib.pagesizes import A4
        from reportlab.pdfbase import pdfmetrics
        from reportlab.pdfbase.cidfonts import UnicodeCIDFont
        from reportlab.pdfgen import canvas

        pdfmetrics.registerFont(UnicodeCIDFont("HeiseiKakuGo-W5"))
        sheet = canvas.Canvas(str(pdf), pagesize=A4)
        for page in range(1, 501):
            sheet.setFont("HeiseiKakuGo-W5", 10)
            for line in range(40):
                sheet.drawString(50, 800 - line * 18, f"第{page}章 {line + 1}行目 {sentence}")
            sheet.drawString(280, 30, f"- {page} -")
            sheet.showPage()
        sheet.save()
    paths.append(pdf)

    csv_path = folder / "large-100k-rows.csv"
    if not csv_path.exists():
        with csv_path.open("w", encoding="utf-8-sig", newline="") as fh:
            fh.write("管理番号,発生日,システム,概要\r\n")
            for i in range(1, 100_001):
                fh.write(f"INC-2099-{i:06d},2024-04-{i % 28 + 1:02d},会計システム,{sentence}\r\n")
    paths.append(csv_path)

    xlsx = folder / "large-50k-rows.xlsx"
    if not xlsx.exists():
        from openpyxl import Workbook

        book = Workbook(write_only=True)
        sheet_ws = book.create_sheet("台帳")
        sheet_ws.append(["社員番号", "氏名", "部署", "備考"])
        for i in range(1, 50_001):
            sheet_ws.append([f"E{i:06d}", f"社員{i}", "情報システム部", sentence])
        book.save(xlsx)
    paths.append(xlsx)

    pptx = folder / "large-300-slides.pptx"
    if not pptx.exists():
        from pptx import Presentation

        deck = Presentation()
        layout = deck.slide_layouts[1]
        for i in range(1, 301):
            slide = deck.slides.add_slide(layout)
            slide.shapes.title.text = f"第{i}回 製品紹介"
            slide.placeholders[1].text = sentence
            slide.notes_slide.notes_text_frame.text = f"補足{i}: {sentence}"
        deck.save(str(pptx))
    paths.append(pptx)
    return paths


def summarize(results: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    by_format: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in results:
        by_format[r["format"]].append(r)
    table: dict[str, dict[str, Any]] = {}
    for fmt, rows in sorted(by_format.items()):
        seconds = sum(r["seconds"] for r in rows)
        ok = [r for r in rows if r["outcome"] == "indexed"]
        units = sum(r["units"] for r in ok)
        table[fmt] = {
            "files": len(rows),
            "indexed": len(ok),
            "failed": len(rows) - len(ok),
            "seconds": seconds,
            "files_per_s": len(rows) / seconds if seconds else 0.0,
            "unit": ok[0]["unit"] if ok else UNITS.get(fmt, "chunks"),
            "units": units,
            "units_per_s": units / seconds if seconds else 0.0,
            "ocr_pages": sum(r.get("ocr_pages", 0) for r in ok),
        }
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--one", type=Path, help=argparse.SUPPRESS)
    parser.add_argument(
        "--no-ocr", action="store_true", help="treat image-only pages as needing OCR"
    )
    parser.add_argument("--large", action="store_true", help="also measure big synthetic files")
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure_one(args.one, ocr=not args.no_ocr), ensure_ascii=False))
        return

    fixtures = sorted(p for p in (SHARED / "fixtures").rglob("*") if p.is_file())
    fixtures = [p for p in fixtures if p.suffix.lower() != ".md"]
    print(f"{len(fixtures)} fixture files, one child process each (cpu count {os.cpu_count()})")
    results = []
    for path in fixtures:
        r = run_child(path, ocr=not args.no_ocr)
        results.append(r)
        detail = (
            f"{r['units']} {r['unit']} in {r['chunks']} chunks"
            if r["outcome"] == "indexed"
            else r.get("reason")
        )
        print(
            f"  {path.parent.name}/{path.name:48} {r['outcome']:8} {r['seconds']:7.2f} s  "
            f"{r.get('peak_rss_mb', 0):6.0f} MB  {detail}"
        )
    table = summarize(results)
    print(f"\n{'format':6} {'files':>5} {'ok':>3} {'seconds':>8} {'files/s':>8} {'units/s':>12}")
    for fmt, row in table.items():
        print(
            f"{fmt:6} {row['files']:5d} {row['indexed']:3d} {row['seconds']:8.2f} "
            f"{row['files_per_s']:8.2f} {row['units_per_s']:8.1f} {row['unit']}"
            + (f"  ({row['ocr_pages']} pages by OCR)" if row["ocr_pages"] else "")
        )
    largest = max(fixtures, key=lambda p: p.stat().st_size)
    big = next(r for r in results if r["file"] == str(largest))
    print(
        f"\nlargest fixture {largest.name} ({largest.stat().st_size / 1e6:.2f} MB): "
        f"peak RSS {big.get('peak_rss_mb', 0):.0f} MB (child baseline "
        f"{big.get('baseline_rss_mb', 0):.0f} MB)"
    )
    large: list[dict[str, Any]] = []
    if args.large:
        print("\nlarge synthetic files:")
        for path in make_large_files(CACHE / "formats"):
            r = run_child(path, ocr=False)
            large.append(r)
            print(
                f"  {path.name:28} {path.stat().st_size / 1e6:7.1f} MB  {r['outcome']:8} "
                f"{r['seconds']:7.1f} s  {r.get('units', 0):7d} {r.get('unit', '')}  "
                f"{r.get('units', 0) / r['seconds'] if r['seconds'] else 0:8.0f}/s  "
                f"peak RSS {r.get('peak_rss_mb', 0):.0f} MB"
            )
    out = write_result("formats", {"files": results, "formats": table, "large": large})
    print(f"\nwritten to {out}")


if __name__ == "__main__":
    main()
