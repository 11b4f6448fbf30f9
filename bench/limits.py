"""Reading limits on hostile and huge Office files: what happens, and how much memory it takes.

    python bench/limits.py [--bomb-mb 1000] [--genuine-mb 200] [--only NAME ...]

Builds, in a temporary folder, Office files made to exhaust a reader: a docx, an xlsx and a pptx zip
bomb (a small zip holding one huge, highly compressible XML part that unpacks to just under the
unzip limit, SHIRABE_LIMITS__MAX_UNZIPPED_BYTES, so that the size check lets it through), a docx
bomb over that limit (refused before unpacking), and a genuine docx of ``--genuine-mb`` unpacked (a
document.xml of very many different paragraphs). Each file is loaded in a fresh child process
through the real :class:`shirabe.loaders.worker.TimedLoader` with the default settings (the memory
ceiling SHIRABE_LIMITS__MAX_LOADER_MEMORY and the time limit SHIRABE_LIMITS__LOAD_TIMEOUT), which
reads it in its worker process; the child reports the worker's peak resident memory (its VmHWM
polled from /proc, and its ``ru_maxrss`` once it has exited). Prints file size, unpacked size,
outcome or reason, time and worker peak RSS per file; results also go to bench/results/limits.json.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from common import write_result

MB = 1000 * 1000
CHUNK = 4 * 1024 * 1024

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
A = "http://schemas.openxmlformats.org/drawingml/2006/main"
P = "http://schemas.openxmlformats.org/presentationml/2006/main"
S = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
XML = b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'


def repeated(head: bytes, unit: bytes, tail: bytes, size: int) -> Iterator[bytes]:
    """``head``, then ``unit`` as many times as fit in ``size`` bytes, then ``tail``."""
    yield head
    count = max(1, (size - len(head) - len(tail)) // len(unit))
    block = unit * max(1, CHUNK // len(unit))
    per_block = CHUNK // len(unit) or 1
    for _ in range(count // per_block):
        yield block
    yield unit * (count % per_block)
    yield tail


def numbered(head: bytes, make: Callable[[int], bytes], tail: bytes, size: int) -> Iterator[bytes]:
    """``head``, then ``make(0)``, ``make(1)``, … until about ``size`` bytes, then ``tail``."""
    yield head
    written, i, buffer = len(head) + len(tail), 0, []
    while written < size:
        item = make(i)
        buffer.append(item)
        written += len(item)
        i += 1
        if len(buffer) == 10_000:
            yield b"".join(buffer)
            buffer = []
    yield b"".join(buffer)
    yield tail


def with_member(template: Path, target: Path, member: str, data: Iterable[bytes]) -> None:
    """A copy of the package ``template`` whose ``member`` is streamed from ``data``."""
    with (
        zipfile.ZipFile(template) as source,
        zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as out,
    ):
        for info in source.infolist():
            if info.filename != member:
                out.writestr(info, source.read(info.filename))
        with out.open(member, "w", force_zip64=True) as fh:
            for block in data:
                fh.write(block)


def templates(folder: Path) -> dict[str, Path]:
    """Small valid packages made by the libraries shirabe reads them with."""
    import docx
    import openpyxl
    import pptx

    paths = {ext: folder / f"template{ext}" for ext in (".docx", ".xlsx", ".pptx")}
    document = docx.Document()
    document.add_paragraph("テンプレート")
    document.save(str(paths[".docx"]))
    workbook = openpyxl.Workbook()
    workbook.active["A1"] = "テンプレート"
    workbook.save(paths[".xlsx"])
    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "テンプレート"
    deck.save(str(paths[".pptx"]))
    return paths


def build(
    folder: Path, bomb_bytes: int, over_bytes: int, genuine_bytes: int, only: list[str] | None
) -> list[Path]:
    """The test files (those named in ``only``, if given), in the order they are reported."""
    t = templates(folder)
    body = f'<w:document xmlns:w="{W}"><w:body>'.encode()
    end = b"</w:body></w:document>"
    paragraph = "<w:p><w:r><w:t>同じ段落がひたすら繰り返される。</w:t></w:r></w:p>".encode()
    files: list[tuple[str, Path, str, Iterable[bytes]]] = [
        ("docx-bomb.docx", t[".docx"], "word/document.xml",
         repeated(XML + body, paragraph, end, bomb_bytes)),
        ("xlsx-bomb.xlsx", t[".xlsx"], "xl/worksheets/sheet1.xml",
         repeated(XML + f'<worksheet xmlns="{S}"><sheetData><row><c t="inlineStr"><is><t>'
                  .encode(), "同じ文字".encode(), b"</t></is></c></row></sheetData></worksheet>",
                  bomb_bytes)),
        ("pptx-bomb.pptx", t[".pptx"], "ppt/slides/slide1.xml",
         repeated(XML + f'<p:sld xmlns:p="{P}" xmlns:a="{A}"><p:cSld><p:spTree>'
                  '<p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr>'
                  '<p:grpSpPr/><p:sp><p:nvSpPr><p:cNvPr id="2" name="本文"/><p:cNvSpPr/>'
                  "<p:nvPr/></p:nvSpPr><p:spPr/><p:txBody><a:bodyPr/>".encode(),
                  "<a:p><a:r><a:t>同じ行がひたすら繰り返される。</a:t></a:r></a:p>".encode(),
                  b"</p:txBody></p:sp></p:spTree></p:cSld></p:sld>", bomb_bytes)),
        ("docx-bomb-over-limit.docx", t[".docx"], "word/document.xml",
         repeated(XML + body, paragraph, end, over_bytes)),
        ("genuine-200mb.docx", t[".docx"], "word/document.xml",
         numbered(XML + body,
                  lambda i: f"<w:p><w:r><w:t>第{i}段落。業務規程の本文、{i * 7919 % 100003}"
                  "番の手順に従って申請する。</w:t></w:r></w:p>".encode(),
                  end, genuine_bytes)),
    ]  # fmt: skip
    built = []
    for name, template, member, data in files:
        if only and name not in only:
            continue
        started = time.perf_counter()
        with_member(template, folder / name, member, data)
        print(f"built {name} in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        built.append(folder / name)
    return built


class PeakWatcher:
    """The highest VmHWM of this process's children, read from /proc while they run: a
    child's ``ru_maxrss`` starts from its parent's peak, so on its own it can overstate."""

    def __init__(self) -> None:
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> PeakWatcher:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _watch(self) -> None:
        children = Path(f"/proc/self/task/{os.getpid()}/children")
        while not self._stop.wait(0.05):
            try:
                pids = children.read_text().split()
            except OSError:
                return
            for pid in pids:
                try:
                    status = Path(f"/proc/{pid}/status").read_text()
                except OSError:
                    continue
                for line in status.splitlines():
                    if line.startswith("VmHWM:"):
                        self.peak = max(self.peak, int(line.split()[1]) * 1024)


def measure_one(path: Path) -> dict[str, Any]:
    """Load ``path`` through a TimedLoader with the default settings, in this process."""
    from shirabe.loaders.protocol import LoadError, LoadOptions
    from shirabe.loaders.worker import TimedLoader
    from shirabe.settings import Settings

    limits = Settings().limits
    options = LoadOptions(
        max_unzipped_bytes=limits.max_unzipped_bytes,
        max_loader_memory=limits.max_loader_memory,
    )
    result: dict[str, Any] = {"ceiling_bytes": limits.max_loader_memory}
    started = time.perf_counter()
    with PeakWatcher() as watcher, TimedLoader(options, limits.load_timeout) as loader:
        try:
            document = loader.load(path)
        except LoadError as exc:
            result |= {"outcome": "failed", "reason": exc.reason}
        else:
            chars = sum(len(part.text) for part in document.parts)
            parts = f"{len(document.parts):,} parts, {chars:,} characters"
            result |= {"outcome": "read", "reason": parts}
            del document
    result["seconds"] = time.perf_counter() - started
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    # ru_maxrss of the worker counts from this process's peak at its start
    result["worker_peak_rss_bytes"] = max(watcher.peak, children if children > own else 0)
    result["loader_peak_rss_bytes"] = own
    return result


def run_child(path: Path) -> dict[str, Any]:
    """:func:`measure_one` in a fresh process, so that each file's worker peak is its own."""
    done = subprocess.run(
        [sys.executable, __file__, "--one", str(path)], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        return {"outcome": "bench failed", "reason": done.stderr.strip().splitlines()[-1:]}
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bomb-mb", type=int, default=None, help="unpacked size of the bombs")
    parser.add_argument("--genuine-mb", type=int, default=200)
    parser.add_argument("--only", nargs="*", default=None, help="file names to run")
    parser.add_argument("--one", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one is not None:
        print(json.dumps(measure_one(args.one)))
        return
    from shirabe.settings import Settings

    limits = Settings().limits
    unzip_limit = limits.max_unzipped_bytes
    bomb = args.bomb_mb * MB if args.bomb_mb else unzip_limit - 16 * 1024 * 1024
    rows = []
    with tempfile.TemporaryDirectory(prefix="shirabe-limits-") as tmp:
        files = build(Path(tmp), bomb, unzip_limit + 100 * MB, args.genuine_mb * MB, args.only)
        for path in files:
            with zipfile.ZipFile(path) as archive:
                unpacked = sum(info.file_size for info in archive.infolist())
            result: dict[str, Any] = {"file": path.name, "size_bytes": path.stat().st_size}
            result |= {"unpacked_bytes": unpacked} | run_child(path)
            rows.append(result)
            print(format_row(result), flush=True)
    ceiling = limits.max_loader_memory
    print(f"ceiling (SHIRABE_LIMITS__MAX_LOADER_MEMORY): {ceiling:,} bytes; "
          f"unzip limit (SHIRABE_LIMITS__MAX_UNZIPPED_BYTES): {unzip_limit:,} bytes")  # fmt: skip
    peaks = [int(r.get("worker_peak_rss_bytes", 0)) for r in rows]
    print("every worker peak under the ceiling:", all(p < (ceiling or 1 << 62) for p in peaks))
    write_result("limits", {"ceiling_bytes": ceiling, "files": rows})


def format_row(row: dict[str, Any]) -> str:
    peak = row.get("worker_peak_rss_bytes")
    return (
        f"{row['file']:<26} file {row['size_bytes'] / MB:8.1f} MB  "
        f"unpacked {row['unpacked_bytes'] / MB:8.1f} MB  "
        f"{row.get('seconds', 0):6.1f} s  "
        f"worker peak RSS {peak / 2**20 if peak else 0:7.0f} MiB  "
        f"{row['outcome']}: {row['reason']}"
    )


if __name__ == "__main__":
    main()
