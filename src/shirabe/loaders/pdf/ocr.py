"""A small wrapper around the ``tesseract`` command for PDF pages without a text layer.

Tesseract runs as a subprocess with a timeout and one OpenMP thread (more threads gain nothing
measurable on a page and spin badly when the cores are busy), so one scanned
page can neither hang an ingest nor take over the machine. Its TSV output is parsed to get
word confidences: the loader uses them to choose between horizontal (``jpn``) and vertical
(``jpn_vert``) Japanese.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from shirabe.loaders.pdf.lines import tidy_ocr_text

logger = logging.getLogger(__name__)

OCR_TIMEOUT_SECONDS = 300.0
"""Per Tesseract run: a 300 dpi page takes 10-30 s on two busy cores; a hang is cut off."""
OCR_THREADS = 1
_OCR_NOTE = "page {}: text from OCR"
_OCR_NOTE_PATTERN = re.compile(r"page (\d+): text from OCR")


def ocr_note(number: int) -> str:
    """The document warning that page ``number``'s text was read by OCR."""
    return _OCR_NOTE.format(number)


def ocr_pages(warnings: Iterable[str]) -> set[int]:
    """The pages a document's warnings say were read by OCR."""
    found = (_OCR_NOTE_PATTERN.fullmatch(w) for w in warnings)
    return {int(m.group(1)) for m in found if m}


class OcrError(Exception):
    """Tesseract failed, timed out or is missing; ``reason`` is short and user-facing."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class OcrResult:
    """Recognised text with the mean word confidence (0-100; 0 when nothing was read)."""

    text: str
    confidence: float
    words: int


def tesseract_command() -> str | None:
    """The path of the ``tesseract`` executable, or ``None`` when it is not installed."""
    return shutil.which("tesseract")


@cache
def _languages(command: str) -> frozenset[str]:
    try:
        done = subprocess.run(
            [command, "--list-langs"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.SubprocessError):
        logger.warning("cannot list tesseract languages", exc_info=True)
        return frozenset()
    lines = (done.stdout + "\n" + done.stderr).splitlines()
    return frozenset(ln.strip() for ln in lines if ln.strip() and " " not in ln.strip())


def installed_languages() -> frozenset[str]:
    """Language packs Tesseract can use (``jpn``, ``jpn_vert``, ``eng``, ...); empty if absent."""
    command = tesseract_command()
    return _languages(command) if command else frozenset()


def missing_languages(languages: str) -> list[str]:
    """The parts of a ``jpn+eng`` language spec that are not installed."""
    have = installed_languages()
    return [lang for lang in languages.split("+") if lang and lang not in have]


def vertical_languages(languages: str) -> str | None:
    """``jpn`` swapped for ``jpn_vert`` in a language spec, when that pack is installed."""
    parts = languages.split("+")
    if "jpn" not in parts or "jpn_vert" not in installed_languages():
        return None
    return "+".join("jpn_vert" if p == "jpn" else p for p in parts)


def parse_tsv(tsv: str) -> OcrResult:
    """Text and mean confidence from Tesseract's TSV output.

    Words keep their line structure (block, paragraph, line numbers); paragraphs are separated
    by blank lines. Rows with confidence -1 are layout rows without text.
    """
    lines: list[list[str]] = []
    current: tuple[str, str, str] | None = None
    paragraph: tuple[str, str] | None = None
    confidences: list[float] = []
    out: list[str] = []
    for row in tsv.splitlines()[1:]:
        cols = row.split("\t")
        if len(cols) < 12:
            continue
        block, par, line, conf, word = cols[2], cols[3], cols[4], cols[10], cols[11]
        try:
            confidence = float(conf)
        except ValueError:
            continue
        if confidence < 0 or not word.strip():
            continue
        confidences.append(confidence)
        if (block, par) != paragraph:
            if lines:
                out.append("\n".join(" ".join(ws) for ws in lines))
            lines = []
            paragraph = (block, par)
        if (block, par, line) != current:
            lines.append([])
            current = (block, par, line)
        lines[-1].append(word.strip())
    if lines:
        out.append("\n".join(" ".join(ws) for ws in lines))
    text = tidy_ocr_text("\n\n".join(out))
    mean = sum(confidences) / len(confidences) if confidences else 0.0
    return OcrResult(text=text, confidence=mean, words=len(confidences))


def recognize(
    image: Path, languages: str, *, psm: int = 3, timeout: float = OCR_TIMEOUT_SECONDS
) -> OcrResult:
    """Run Tesseract on an image file; raises :class:`OcrError` on any failure."""
    command = tesseract_command()
    if command is None:
        raise OcrError("tesseract is not installed")
    env = dict(os.environ, OMP_THREAD_LIMIT=str(OCR_THREADS))
    args = [command, str(image), "stdout", "-l", languages, "--psm", str(psm), "tsv"]
    try:
        done = subprocess.run(
            args, capture_output=True, text=True, timeout=timeout, env=env, check=False
        )
    except subprocess.TimeoutExpired as exc:
        raise OcrError(f"tesseract timed out after {timeout:.0f} s") from exc
    except OSError as exc:
        raise OcrError(f"cannot run tesseract ({exc.strerror or exc})") from exc
    if done.returncode != 0:
        detail = done.stderr.strip().splitlines()[-1:] or [f"exit code {done.returncode}"]
        raise OcrError(f"tesseract failed ({detail[0]})")
    return parse_tsv(done.stdout)
