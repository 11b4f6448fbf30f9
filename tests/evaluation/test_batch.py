"""Batch answering: CSV input checks, resume bookkeeping, and the command end to end."""

from __future__ import annotations

import csv
import io
import json
import socket
from collections.abc import Sequence
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from shirabe.answering.refusal import REFUSAL_TEXT
from shirabe.cli.app import app
from shirabe.engine import Shirabe
from shirabe.evaluation.batch import (
    BatchError,
    Question,
    csv_row,
    parse_questions,
    parse_rows,
    read_questions,
    resume,
    run,
)
from shirabe.records import Answer, Chunk, Filters, Hit, Turn
from shirabe.settings import Settings

runner = CliRunner()

DOC = "# 休暇規程\n\n## 申請方法\n\n有給休暇はミナモ勤怠から3営業日前までに申請する。\n"
ANSWERABLE = "有給休暇の申請方法は？"
QUESTIONS = {
    "q1": ANSWERABLE,
    "q2": "火星の首都はどこですか？",
    "q3": "有給休暇は何営業日前までに申請しますか？",
}


def _csv(rows: list[list[str]]) -> str:
    return "".join(csv_row(row) for row in rows)


# --- reading questions ---------------------------------------------------------------------


def test_questions_with_extra_columns_and_multiline_question() -> None:
    text = _csv([["memo", "question", "id"], ["x", "一行目\n二行目", " a1 "], ["y", "次", "a2"]])
    questions = parse_questions(text, "q.csv")
    assert [(q.id, q.question, q.line) for q in questions] == [
        ("a1", "一行目\n二行目", 2),
        ("a2", "次", 4),
    ]


@pytest.mark.parametrize(
    ("rows", "expected"),
    [
        ([["id", "text"], ["1", "x"]], "q.csv, line 1: missing column question"),
        ([["question"], ["x"]], "q.csv, line 1: missing column id"),
        ([["id", "question"], ["1", "a"], ["", "b"]], "q.csv, line 3, field id: empty id"),
        (
            [["id", "question"], ["1", "a"], ["2", "b"], ["1", "c"]],
            "q.csv, line 4, field id: duplicate id '1' (first on line 2)",
        ),
        ([["id", "question"], ["1", " "]], "q.csv, line 2, field question: empty question"),
        ([["id", "question"], ["1"]], "q.csv, line 2, field question"),
    ],
)
def test_question_errors_name_file_line_and_field(rows: list[list[str]], expected: str) -> None:
    with pytest.raises(BatchError) as info:
        parse_questions(_csv(rows), "q.csv")
    assert expected in str(info.value)


def test_duplicate_id_line_counts_multiline_records() -> None:
    text = _csv([["id", "question"], ["1", "a\nb\nc"], ["1", "d"]])
    with pytest.raises(BatchError, match=r"line 5, field id: duplicate id '1' \(first on line 2\)"):
        parse_questions(text, "q.csv")


def test_empty_question_file() -> None:
    with pytest.raises(BatchError, match="empty file"):
        parse_questions("", "q.csv")


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "cp932", "utf-16"])
def test_question_file_encodings(tmp_path: Path, encoding: str) -> None:
    path = tmp_path / "q.csv"
    path.write_bytes("id,question\r\n社員1,有給休暇の申請方法は？\r\n".encode(encoding))
    questions = read_questions(path)
    assert [(q.id, q.question) for q in questions] == [("社員1", "有給休暇の申請方法は？")]


def test_unreadable_question_file(tmp_path: Path) -> None:
    with pytest.raises(BatchError, match="cannot read questions"):
        read_questions(tmp_path / "missing.csv")


# --- resume bookkeeping --------------------------------------------------------------------


def test_resume_keeps_answered_and_drops_failed_and_orphans() -> None:
    predictions = [
        {"id": "1", "answer": "A", "error": ""},
        {"id": "2", "answer": "", "error": "cannot connect"},
        {"id": "3", "answer": "C"},  # a file written before the error column existed
        {"id": "4", "answer": "", "error": "timeout"},
        {"id": "4", "answer": "D", "error": ""},  # retried later: the last row wins
        {"id": "5", "answer": "old", "error": ""},
        {"id": "5", "answer": "", "error": "boom"},
    ]
    rationales = [{"id": i, "rank": "1"} for i in ("1", "2", "3", "4", "5", "9")]
    previous = resume(predictions, rationales)
    assert [(r["id"], r["answer"]) for r in previous.predictions] == [
        ("1", "A"),
        ("3", "C"),
        ("4", "D"),
    ]
    assert previous.done == {"1", "3", "4"}
    assert [r["id"] for r in previous.rationales] == ["1", "3", "4"]


def test_output_rows_drop_a_truncated_last_record() -> None:
    text = _csv([["id", "answer", "error"], ["1", "改行\nあり", ""]]) + '2,"途中で切れ'
    rows = parse_rows(text, "p.csv", ("id", "answer"))
    assert rows == [{"id": "1", "answer": "改行\nあり", "error": ""}]


def test_output_file_of_another_kind_is_refused() -> None:
    with pytest.raises(BatchError, match=r"p\.csv, line 1: missing column answer"):
        parse_rows("id,question\r\n1,x\r\n", "p.csv", ("id", "answer"))


class FakeShirabe(Shirabe):
    """Answers from a script: a string answers, an exception is raised from ``ask``. Nothing
    else of the engine is used (it builds its parts on first use, so none is built)."""

    def __init__(self, script: dict[str, str | BaseException]) -> None:
        super().__init__(Settings())
        self.script = script
        self.asked: list[str] = []

    def ask(
        self,
        question: str,
        *,
        k: int | None = None,
        filters: Filters | None = None,
        history: Sequence[Turn] = (),
    ) -> Answer:
        self.asked.append(question)
        outcome = self.script[question]
        if isinstance(outcome, BaseException):
            raise outcome
        chunk = Chunk(
            text="根拠",
            source="/d/a.xlsx",
            heading_path=("表", "売上"),
            locator={"sheet": "売上", "row": 7},
        )
        return Answer(question, outcome, [], outcome == REFUSAL_TEXT, [Hit(chunk, 0.5)])


def test_run_records_errors_and_stops_cleanly_on_ctrl_c(tmp_path: Path) -> None:
    questions = [Question(f"q{i}", f"質問{i}", i + 1) for i in range(1, 5)]
    fake = FakeShirabe(
        {
            "質問1": "答え\n二行",
            "質問2": RuntimeError("boom"),
            "質問3": KeyboardInterrupt(),
            "質問4": "x",
        }
    )
    pred, reasons = tmp_path / "p.csv", tmp_path / "r.csv"
    summary = run(fake, questions, pred, reasons)
    assert summary.interrupted
    assert (summary.answered, summary.failed, summary.remaining) == (1, 1, 2)
    assert fake.asked == ["質問1", "質問2", "質問3"]
    rows = _read_csv(pred)
    assert rows == [
        {"id": "q1", "answer": "答え\n二行", "error": ""},
        {"id": "q2", "answer": "", "error": "RuntimeError: boom"},
    ]
    (reason,) = _read_csv(reasons)
    assert (reason["id"], reason["sheet"], reason["row"], reason["page"]) == ("q1", "売上", "7", "")
    assert reason["heading_path"] == "表 > 売上"

    fake.script = {"質問2": REFUSAL_TEXT, "質問3": "三", "質問4": "四"}
    fake.asked = []
    summary = run(fake, questions, pred, reasons)
    assert fake.asked == ["質問2", "質問3", "質問4"]
    assert (summary.skipped, summary.refused, summary.answered, summary.failed) == (1, 1, 2, 0)
    assert [r["id"] for r in _read_csv(pred)] == ["q1", "q2", "q3", "q4"]
    assert [r["id"] for r in _read_csv(reasons)] == ["q1", "q2", "q3", "q4"]


def test_rationales_must_differ_from_predictions(tmp_path: Path) -> None:
    with pytest.raises(BatchError, match="different file"):
        run(FakeShirabe({}), [], tmp_path / "p.csv", tmp_path / "p.csv")


# --- end to end ----------------------------------------------------------------------------


def _read_csv(path: Path) -> list[dict[str, str]]:
    raw = path.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")  # Excel needs the BOM
    assert raw.count(b"\xef\xbb\xbf") == 1  # appending never adds another
    return list(csv.DictReader(io.StringIO(raw.decode("utf-8-sig"), newline="")))


def _write_questions(path: Path, questions: dict[str, str]) -> None:
    path.write_text(
        _csv([["id", "question"], *([k, v] for k, v in questions.items())]), encoding="utf-8"
    )


@pytest.fixture
def index(tmp_path: Path) -> str:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "休暇.md").write_text(DOC, encoding="utf-8")
    home = str(tmp_path / "index")
    result = runner.invoke(app, ["ingest", str(folder), "--index", home])
    assert result.exit_code == 0, result.output
    return home


def _batch(index: str, tmp_path: Path, *extra: str, env: dict[str, str] | None = None) -> Result:
    args = [
        "batch",
        str(tmp_path / "q.csv"),
        "--out",
        str(tmp_path / "p.csv"),
        "--rationales",
        str(tmp_path / "r.csv"),
        "--index",
        index,
        "--json",
        *extra,
    ]
    return runner.invoke(app, args, env=env)


@pytest.mark.slow
def test_batch_answers_then_skips_on_rerun(index: str, tmp_path: Path) -> None:
    _write_questions(tmp_path / "q.csv", QUESTIONS)
    result = _batch(index, tmp_path)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    predictions = _read_csv(tmp_path / "p.csv")
    answers = {r["id"]: r["answer"] for r in predictions}
    assert list(answers) == list(QUESTIONS)
    assert "ミナモ勤怠" in answers["q1"]
    assert answers["q2"] == REFUSAL_TEXT
    assert all(r["error"] == "" for r in predictions)
    refused = sum(1 for a in answers.values() if a == REFUSAL_TEXT)
    assert summary["refused"] == refused
    assert summary["answered"] == len(QUESTIONS) - refused
    assert summary["failed"] == summary["skipped"] == 0
    assert summary["seconds_per_question"] > 0

    rationales = _read_csv(tmp_path / "r.csv")
    first = [r for r in rationales if r["id"] == "q1"]
    assert first[0]["rank"] == "1"
    assert first[0]["heading_path"] == "休暇規程 > 申請方法"
    assert first[0]["file"].endswith("休暇.md")
    assert "ミナモ勤怠" in first[0]["text"]
    assert [int(r["rank"]) for r in first] == list(range(1, len(first) + 1))

    before = ((tmp_path / "p.csv").read_bytes(), (tmp_path / "r.csv").read_bytes())
    result = _batch(index, tmp_path)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["skipped"] == len(QUESTIONS)
    assert summary["answered"] == summary["refused"] == summary["failed"] == 0
    assert ((tmp_path / "p.csv").read_bytes(), (tmp_path / "r.csv").read_bytes()) == before


@pytest.mark.slow
def test_interrupted_run_completes_the_rest(index: str, tmp_path: Path) -> None:
    _write_questions(tmp_path / "q.csv", QUESTIONS)
    # As left by an interrupted run: q1 answered (with a multi-line answer), q2 failed,
    # rationales for q1 plus an orphan for q3 whose prediction was never written.
    (tmp_path / "p.csv").write_text(
        _csv([["id", "answer", "error"], ["q1", "前回の\n回答", ""], ["q2", "", "cannot connect"]]),
        encoding="utf-8-sig",
    )
    (tmp_path / "r.csv").write_text(
        _csv([["id", "rank", "text"], ["q1", "1", "前回"], ["q3", "1", "孤立"]]),
        encoding="utf-8-sig",
    )
    result = _batch(index, tmp_path)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["skipped"] == 1
    assert summary["answered"] + summary["refused"] == 2

    predictions = _read_csv(tmp_path / "p.csv")
    assert [r["id"] for r in predictions] == ["q1", "q2", "q3"]
    assert predictions[0]["answer"] == "前回の\n回答"  # kept as it was
    assert predictions[1]["answer"] == REFUSAL_TEXT
    assert "3営業日前" in predictions[2]["answer"]
    assert all(r["error"] == "" for r in predictions)

    rationales = _read_csv(tmp_path / "r.csv")
    assert next(r for r in rationales if r["id"] == "q1")["text"] == "前回"
    q3 = [r for r in rationales if r["id"] == "q3"]
    assert q3 and "孤立" not in {r["text"] for r in q3}
    assert {r["id"] for r in rationales} == {"q1", "q2", "q3"}


@pytest.mark.slow
def test_failures_are_recorded_and_retried(index: str, tmp_path: Path) -> None:
    _write_questions(tmp_path / "q.csv", {"q1": ANSWERABLE})
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    env = {"SHIRABE_CHAT_MODEL__RETRIES": "0", "SHIRABE_CHAT_MODEL__MODEL": "any"}
    result = _batch(index, tmp_path, "--llm-base-url", url, env=env)
    assert result.exit_code == 3, result.output
    summary = json.loads(result.stdout)
    assert summary["failed"] == 1
    assert summary["failures"][0]["id"] == "q1"
    assert "Traceback" not in result.output
    predictions = _read_csv(tmp_path / "p.csv")
    assert len(predictions) == 1
    assert predictions[0]["answer"] == ""
    assert "cannot connect" in predictions[0]["error"]
    assert url in predictions[0]["error"]
    assert _read_csv(tmp_path / "r.csv") == []

    result = _batch(index, tmp_path)  # the extractive default succeeds: the row is retried
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["skipped"] == 0
    assert summary["answered"] == 1
    predictions = _read_csv(tmp_path / "p.csv")
    assert len(predictions) == 1
    assert "ミナモ勤怠" in predictions[0]["answer"]
    assert predictions[0]["error"] == ""


@pytest.mark.slow
def test_bad_question_file_is_an_error(index: str, tmp_path: Path) -> None:
    (tmp_path / "q.csv").write_text("id,question\r\nq1,a\r\nq1,b\r\n", encoding="utf-8")
    result = _batch(index, tmp_path)
    assert result.exit_code == 1
    assert "line 3, field id: duplicate id" in result.stderr
    assert not (tmp_path / "p.csv").exists()


def test_help_explains_exit_codes() -> None:
    result = runner.invoke(app, ["batch", "--help"])
    assert result.exit_code == 0
    assert "some questions failed" in result.stdout
