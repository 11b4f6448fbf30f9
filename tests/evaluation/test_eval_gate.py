"""The regression gate: the sample cases must not score worse than eval/baseline.json; and the
``shirabe eval`` command end to end on a tiny corpus."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from shirabe.cli.app import app
from shirabe.engine import Shirabe
from shirabe.evaluation.baseline import (
    LOWER_IS_BETTER,
    Comparison,
    check_baseline,
    compare,
    newly_failing,
    passed,
)
from shirabe.evaluation.cases import load_cases
from shirabe.evaluation.metrics import LATENCY_METRICS, report
from shirabe.evaluation.run import run, run_settings

from tests.support import ROOT

pytestmark = pytest.mark.slow

CASES = ROOT / "eval" / "sample_docs.yaml"
BASELINE = ROOT / "eval" / "baseline.json"

runner = CliRunner()


def table(rows: list[Comparison], newly: list[str]) -> str:
    lines = [f"{'metric':<34}{'baseline':>10}{'now':>10}{'delta':>10}  verdict"]
    for r in rows:
        base = "—" if r.baseline is None else f"{r.baseline:.3f}"
        now = "—" if r.now is None else f"{r.now:.3f}"
        delta = "—" if r.delta is None else f"{r.delta:+.3f}"
        lines.append(f"{r.metric:<34}{base:>10}{now:>10}{delta:>10}  {r.verdict}")
    lines.append(f"newly failing cases: {', '.join(newly) or 'none'}")
    return "\n".join(lines)


def test_sample_cases_do_not_regress(sample_app: Shirabe) -> None:
    baseline = check_baseline(json.loads(BASELINE.read_text(encoding="utf-8")), str(BASELINE))
    results = run(sample_app, load_cases(CASES))
    current = report(results, run_settings(sample_app))
    assert current["settings"] == baseline["settings"], "baseline written with other settings"
    rows = compare(baseline, current)
    newly = newly_failing(baseline, current)
    assert passed(rows), "regression against eval/baseline.json:\n" + table(rows, newly)


TINY_CASES = """\
cases:
  - id: leave-apply
    kind: fact
    question: 有給休暇は何日前までに申請しますか？
    expect_answer: ["3営業日前"]
    expect_source:
      file: 人事/休暇.md
  - id: hotel
    kind: paraphrase
    question: 出張のホテル代の上限はいくらですか？
    expect_answer: ["12,000円"]
    expect_source:
      file: 経理/経費.md
  - id: stock
    kind: refusal
    question: 会社の株価はいくらですか？
    expect_refusal: true
"""


@pytest.fixture
def tiny(tmp_path: Path) -> tuple[Path, Path]:
    docs = tmp_path / "docs"
    (docs / "人事").mkdir(parents=True)
    (docs / "経理").mkdir()
    (docs / "人事" / "休暇.md").write_text(
        "# 休暇規程\n\n## 申請方法\n\n有給休暇はミナモ勤怠から3営業日前までに申請する。\n",
        encoding="utf-8",
    )
    (docs / "経理" / "経費.md").write_text(
        "# 経費精算規程\n\n## 宿泊費\n\n出張の宿泊費は1泊12,000円を上限とする。\n",
        encoding="utf-8",
    )
    cases = tmp_path / "cases.yaml"
    cases.write_text(TINY_CASES, encoding="utf-8")
    return docs, cases


def test_eval_cli_writes_baseline_and_gates(tiny: tuple[Path, Path], tmp_path: Path) -> None:
    docs, cases = tiny
    index = str(tmp_path / "index")
    base = tmp_path / "base.json"
    result = runner.invoke(
        app, ["eval", str(cases), "--index", index, "--ingest", str(docs), "--out", str(base)]
    )
    assert result.exit_code == 0, result.output
    assert "hit@1" in result.stdout
    written = json.loads(base.read_text(encoding="utf-8"))
    assert written["counts"]["cases"] == 3
    assert [c["id"] for c in written["cases"]] == ["leave-apply", "hotel", "stock"]
    assert written["cases"][0]["rank"] == 1
    assert written["metrics"]["hit@5"] == 1.0

    # the same index against its own baseline passes, as JSON too
    result = runner.invoke(
        app, ["eval", str(cases), "--index", index, "--against", str(base), "--json"]
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["passed"] is True
    assert {r["verdict"] for r in payload["comparison"]} <= {"ok", "info", "n/a"}

    # a baseline better than reality on every gating metric fails with exit code 3
    better: dict[str, Any] = json.loads(base.read_text(encoding="utf-8"))
    for name, value in better["metrics"].items():
        if value is not None and name not in LATENCY_METRICS:
            step = -0.5 if name in LOWER_IS_BETTER else 0.5
            better["metrics"][name] = value + step
    doctored = tmp_path / "better.json"
    doctored.write_text(json.dumps(better), encoding="utf-8")
    result = runner.invoke(app, ["eval", str(cases), "--index", index, "--against", str(doctored)])
    assert result.exit_code == 3, result.output
    assert "regression" in result.stdout
    assert "worse" in result.stdout
    # a looser tolerance accepts the same drop
    result = runner.invoke(
        app,
        ["eval", str(cases), "--index", index, "--against", str(doctored), "--tolerance", "0.6"],
    )
    assert result.exit_code == 0, result.output


def test_eval_cli_rejects_malformed_case(tiny: tuple[Path, Path], tmp_path: Path) -> None:
    _, cases = tiny
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        cases.read_text(encoding="utf-8").replace("      file: 経理/経費.md\n", "      page: 3\n"),
        encoding="utf-8",
    )
    result = runner.invoke(app, ["eval", str(bad), "--index", str(tmp_path / "index")])
    assert result.exit_code == 1
    assert "case 'hotel': expect_source.file" in result.stderr

    result = runner.invoke(
        app,
        ["eval", str(cases), "--index", str(tmp_path / "i"), "--against", str(bad)],
    )
    assert result.exit_code == 1
    assert "not valid JSON" in result.stderr


def test_eval_help_names_exit_code() -> None:
    result = runner.invoke(app, ["eval", "--help"])
    assert result.exit_code == 0
    assert "exit code 3" in result.stdout.lower()


DIALOGUE = """\
dialogues:
  - id: hotel
    turns:
      - question: 出張の宿泊費の上限はいくらですか？
        expect_answer: ["12,000円"]
      - question: 東京の場合は？
        expect_source: {file: 経理/経費.md}
"""


def test_a_dialogues_follow_up_shows_the_question_it_was_searched_as(
    tiny: tuple[Path, Path], tmp_path: Path
) -> None:
    docs, _ = tiny
    cases = tmp_path / "dialogue.yaml"
    cases.write_text(DIALOGUE, encoding="utf-8")
    index = str(tmp_path / "index")
    command = ["eval", str(cases), "--index", index, "--ingest", str(docs), "--json"]
    result = runner.invoke(app, command)
    assert result.exit_code == 0, result.output
    first, follow_up = json.loads(result.stdout)["cases"]
    assert (first["kind"], first["standalone"]) == ("first", None)
    assert follow_up["kind"] == "followup"
    assert "東京" in follow_up["standalone"] and "宿泊費" in follow_up["standalone"]
