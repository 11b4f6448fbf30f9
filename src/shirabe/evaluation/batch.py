"""Answer a CSV of questions into a predictions CSV, resumably.

Long runs against a model server get interrupted (Ctrl-C, a crash, a reboot), so every answer
is appended and flushed as soon as it is written and a rerun skips the ids already answered.
Rows that failed (model server down, any error while answering) are recorded with an ``error``
instead of stopping the run, and are retried by the next run.

Rationales (the passages behind each answer) are written before their prediction, so a crash
between the two leaves rationale rows without a prediction; those are dropped on resume, and the
two files always describe the same answered ids.
"""

from __future__ import annotations

import csv
import io
import logging
import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from shirabe.errors import GeneratorError, ShirabeError
from shirabe.records import Answer
from shirabe.text.encoding import EncodingError, decode_bytes

if TYPE_CHECKING:
    from shirabe.engine import Shirabe
    from shirabe.records import Filters

logger = logging.getLogger(__name__)

QUESTION_FIELDS = ("id", "question")
PREDICTION_FIELDS = ("id", "answer", "error")
RATIONALE_FIELDS = (
    "id",
    "rank",
    "file",
    "page",
    "sheet",
    "row",
    "slide",
    "heading_path",
    "score",
    "text",
)
RATIONALE_HEADING_SEPARATOR = " > "
# Excel opens UTF-8 CSV files correctly only when they start with a BOM.
OUTPUT_ENCODING = "utf-8-sig"


class BatchError(ShirabeError):
    """An input or output file that cannot be used; the message names the file and line."""


@dataclass(frozen=True, slots=True)
class Question:
    id: str
    question: str
    line: int


@dataclass(frozen=True, slots=True)
class Previous:
    """What an earlier run left behind: the rows to keep and the ids that need no new answer.

    Failed rows (non-empty ``error``) are not kept, so their ids are asked again.
    """

    predictions: list[dict[str, str]] = field(default_factory=list)
    rationales: list[dict[str, str]] = field(default_factory=list)

    @property
    def done(self) -> set[str]:
        return {row["id"] for row in self.predictions}


@dataclass(frozen=True, slots=True)
class RowResult:
    """The outcome of one question: ``answered``, ``refused`` or ``failed``."""

    id: str
    outcome: str
    seconds: float
    error: str = ""


@dataclass(slots=True)
class Summary:
    questions: int = 0
    answered: int = 0
    refused: int = 0
    failed: int = 0
    skipped: int = 0
    seconds: float = 0.0
    interrupted: bool = False
    failures: list[RowResult] = field(default_factory=list)

    @property
    def asked(self) -> int:
        return self.answered + self.refused + self.failed

    @property
    def seconds_per_question(self) -> float | None:
        return self.seconds / self.asked if self.asked else None

    @property
    def remaining(self) -> int:
        return self.questions - self.skipped - self.asked

    def add(self, result: RowResult) -> None:
        self.seconds += result.seconds
        if result.outcome == "answered":
            self.answered += 1
        elif result.outcome == "refused":
            self.refused += 1
        else:
            self.failed += 1
            self.failures.append(result)

    def as_dict(self) -> dict[str, Any]:
        per = self.seconds_per_question
        return {
            "questions": self.questions,
            "answered": self.answered,
            "refused": self.refused,
            "failed": self.failed,
            "skipped": self.skipped,
            "remaining": self.remaining,
            "interrupted": self.interrupted,
            "seconds": round(self.seconds, 3),
            "seconds_per_question": round(per, 3) if per is not None else None,
            "failures": [{"id": f.id, "error": f.error} for f in self.failures],
        }


# --- reading -------------------------------------------------------------------------------


def _read_text(path: Path, what: str) -> str:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise BatchError(f"cannot read {what} {path}: {exc.strerror or exc}") from exc
    try:
        return decode_bytes(data, str(path))
    except EncodingError as exc:
        raise BatchError(f"{path}: {exc.reason}") from exc


def _records(text: str, name: str) -> Iterable[tuple[int, list[str]]]:
    """CSV records with the line each starts on (records may span lines inside quotes)."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    start = 1
    try:
        for record in reader:
            yield start, record
            start = reader.line_num + 1
    except csv.Error as exc:
        raise BatchError(f"{name}, line {start}: not valid CSV ({exc})") from exc


def _header(records: Iterable[tuple[int, list[str]]], name: str) -> dict[str, int]:
    for _line, header in records:
        if not any(cell.strip() for cell in header):
            continue
        return {cell.strip().lower(): i for i, cell in reversed(list(enumerate(header)))}
    return {}


def parse_questions(text: str, name: str = "<questions>") -> list[Question]:
    """Questions from CSV text with an ``id,question`` header; other columns are ignored.

    Raises :class:`BatchError` naming the file, line and field for a missing column, an
    empty or duplicate id, or an empty question.
    """
    records = iter(_records(text, name))
    columns = _header(records, name)
    if not columns:
        raise BatchError(f"{name}: empty file; expected a header row `id,question`")
    missing = [c for c in QUESTION_FIELDS if c not in columns]
    if missing:
        raise BatchError(
            f"{name}, line 1: missing column {', '.join(missing)} "
            "(the first row must name the columns: id,question)"
        )
    id_col, q_col = columns["id"], columns["question"]
    questions: list[Question] = []
    seen: dict[str, int] = {}
    for line, record in records:
        if not any(cell.strip() for cell in record):
            continue
        qid = record[id_col].strip() if id_col < len(record) else ""
        question = record[q_col].strip() if q_col < len(record) else ""
        if not qid:
            raise BatchError(f"{name}, line {line}, field id: empty id")
        if qid in seen:
            raise BatchError(
                f"{name}, line {line}, field id: duplicate id {qid!r} (first on line {seen[qid]})"
            )
        if not question:
            raise BatchError(f"{name}, line {line}, field question: empty question for id {qid!r}")
        seen[qid] = line
        questions.append(Question(qid, question, line))
    return questions


def read_questions(path: Path) -> list[Question]:
    """:func:`parse_questions` on a file in any encoding the project detects."""
    return parse_questions(_read_text(path, "questions"), str(path))


def _complete(text: str) -> str:
    """``text`` without a last record cut off before its line end (a crash mid-write)."""
    if not text or text.endswith("\n"):
        return text
    cut = text.rfind("\n")
    logger.info("dropping an incomplete last row")
    return text[: cut + 1] if cut >= 0 else ""


def parse_rows(text: str, name: str, required: Sequence[str]) -> list[dict[str, str]]:
    """Rows of an output CSV written by an earlier run, keyed by the known column names."""
    records = iter(_records(_complete(text), name))
    columns = _header(records, name)
    if not columns:
        return []
    missing = [c for c in required if c not in columns]
    if missing:
        raise BatchError(
            f"{name}, line 1: missing column {', '.join(missing)}; "
            "is this a file written by `shirabe batch`?"
        )
    rows: list[dict[str, str]] = []
    for _line, record in records:
        if not any(cell.strip() for cell in record):
            continue
        rows.append({c: record[i] if i < len(record) else "" for c, i in columns.items() if c})
    return rows


def resume(predictions: list[dict[str, str]], rationales: list[dict[str, str]]) -> Previous:
    """The rows of an earlier run worth keeping.

    A prediction counts as done when it has no error; for a repeated id the last row wins.
    Rationale rows are kept only for done ids.
    """
    latest: dict[str, dict[str, str]] = {}
    for row in predictions:
        qid = row.get("id", "").strip()
        if qid:
            latest.pop(qid, None)
            latest[qid] = row
    kept = [
        {"id": qid, "answer": row.get("answer", ""), "error": ""}
        for qid, row in latest.items()
        if not row.get("error", "").strip()
    ]
    done = {row["id"] for row in kept}
    reasons = [r for r in rationales if r.get("id", "").strip() in done]
    return Previous(predictions=kept, rationales=reasons)


def read_previous(predictions: Path, rationales: Path | None) -> Previous:
    """:func:`resume` over the output files of an earlier run (missing files are empty)."""
    pred_rows: list[dict[str, str]] = []
    if predictions.exists():
        pred_rows = parse_rows(
            _read_text(predictions, "predictions"), str(predictions), ("id", "answer")
        )
    reason_rows: list[dict[str, str]] = []
    if rationales is not None and rationales.exists():
        reason_rows = parse_rows(_read_text(rationales, "rationales"), str(rationales), ("id",))
    return resume(pred_rows, reason_rows)


# --- writing -------------------------------------------------------------------------------


def csv_row(values: Sequence[object]) -> str:
    """One CSV record as text, so it can be written with a single call."""
    buffer = io.StringIO(newline="")
    csv.writer(buffer, lineterminator="\r\n").writerow(values)
    return buffer.getvalue()


def rationale_rows(
    qid: str, answer: Answer, show_path: Callable[[str], str] | None = None
) -> list[dict[str, str]]:
    """One row per passage the answer was built from, best first."""
    rows: list[dict[str, str]] = []
    for rank, hit in enumerate(answer.hits, start=1):
        chunk = hit.chunk
        loc = chunk.locator
        rows.append(
            {
                "id": qid,
                "rank": str(rank),
                "file": show_path(chunk.source) if show_path else chunk.source,
                "page": str(loc.get("page", "")),
                "sheet": str(loc.get("sheet", "")),
                "row": str(loc.get("row", "")),
                "slide": str(loc.get("slide", "")),
                "heading_path": RATIONALE_HEADING_SEPARATOR.join(chunk.heading_path),
                "score": f"{hit.score:.6g}",
                "text": chunk.text,
            }
        )
    return rows


class _Output:
    """An output CSV rewritten with the kept rows, then appended to and flushed per row."""

    def __init__(self, path: Path, fields: Sequence[str], rows: list[dict[str, str]]) -> None:
        self.path = path
        self.fields = fields
        tmp = path.with_name(path.name + ".tmp")
        try:
            with tmp.open("w", encoding=OUTPUT_ENCODING, newline="") as f:
                f.write(csv_row(fields))
                for row in rows:
                    f.write(csv_row([row.get(c, "") for c in fields]))
            os.replace(tmp, path)
            # Appending must not add a second BOM, so the file is reopened as plain UTF-8.
            self.file: TextIO = path.open("a", encoding="utf-8", newline="")
        except OSError as exc:
            raise BatchError(f"cannot write {path}: {exc.strerror or exc}") from exc

    def write(self, rows: Iterable[dict[str, str]]) -> None:
        text = "".join(csv_row([row.get(c, "") for c in self.fields]) for row in rows)
        if text:
            self.file.write(text)
            self.file.flush()

    def close(self) -> None:
        self.file.close()


def _message(exc: Exception) -> str:
    text = str(exc).replace("\n", " ").strip()
    if isinstance(exc, (GeneratorError, ShirabeError)):
        return text or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def run(
    shirabe: Shirabe,
    questions: Sequence[Question],
    predictions: Path,
    rationales: Path | None = None,
    *,
    filters: Filters | None = None,
    show_path: Callable[[str], str] | None = None,
    on_start: Callable[[int], None] | None = None,
    on_row: Callable[[RowResult], None] | None = None,
) -> Summary:
    """Answer the questions not yet answered in ``predictions``, appending as it goes.

    ``on_start`` gets the number of questions to ask, ``on_row`` each outcome. Ctrl-C stops
    after the rows already written; the summary says ``interrupted``.
    """
    if rationales is not None and rationales.resolve() == predictions.resolve():
        raise BatchError("--rationales must be a different file from --out")
    previous = read_previous(predictions, rationales)
    done = previous.done
    pending = [q for q in questions if q.id not in done]
    summary = Summary(questions=len(questions), skipped=len(questions) - len(pending))
    out = _Output(predictions, PREDICTION_FIELDS, previous.predictions)
    reasons = (
        _Output(rationales, RATIONALE_FIELDS, previous.rationales)
        if rationales is not None
        else None
    )
    if on_start is not None:
        on_start(len(pending))
    try:
        for q in pending:
            result = _answer_one(shirabe, q, out, reasons, filters, show_path)
            summary.add(result)
            if on_row is not None:
                on_row(result)
    except KeyboardInterrupt:
        summary.interrupted = True
        logger.info("interrupted after %d of %d questions", summary.asked, len(pending))
    finally:
        out.close()
        if reasons is not None:
            reasons.close()
    return summary


def _answer_one(
    shirabe: Shirabe,
    q: Question,
    out: _Output,
    reasons: _Output | None,
    filters: Filters | None,
    show_path: Callable[[str], str] | None,
) -> RowResult:
    started = time.perf_counter()
    try:
        answer = shirabe.ask(q.question, filters=filters)
    except Exception as exc:  # one failed row must not stop the run
        seconds = time.perf_counter() - started
        message = _message(exc)
        logger.info("question %s failed: %s", q.id, message)
        logger.debug("question %s failed", q.id, exc_info=True)
        out.write([{"id": q.id, "answer": "", "error": message}])
        return RowResult(q.id, "failed", seconds, message)
    seconds = time.perf_counter() - started
    if reasons is not None:
        reasons.write(rationale_rows(q.id, answer, show_path))
    out.write([{"id": q.id, "answer": answer.text, "error": ""}])
    return RowResult(q.id, "refused" if answer.refused else "answered", seconds)
