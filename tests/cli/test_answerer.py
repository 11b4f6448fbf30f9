"""``shirabe answerer train``: a model trained from a SQuAD-format file, compared with the
one in use on held-out articles, and then used to answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from shirabe.answering.features import LINE_FEATURES, QUESTION_FEATURES
from shirabe.answering.learned import read_model
from shirabe.cli.app import app

from tests.answering.test_learned import leaf_spec
from tests.support import SHARED, shared

pytestmark = pytest.mark.slow

runner = CliRunner()


def _small_squad(tmp_path: Path) -> Path:
    """The first paragraph of each of the first 20 JSQuAD articles."""
    source = shared(SHARED / "data" / "jsquad" / "valid-v1.3.json")
    data = json.loads(source.read_text(encoding="utf-8"))
    articles = [{"title": a["title"], "paragraphs": a["paragraphs"][:1]} for a in data["data"][:20]]
    path = tmp_path / "small.json"
    path.write_text(json.dumps({"data": articles}, ensure_ascii=False), encoding="utf-8")
    return path


def test_train_writes_a_model_that_answers(tmp_path: Path) -> None:
    squad = _small_squad(tmp_path)
    model = tmp_path / "answerer.json.gz"
    result = runner.invoke(
        app,
        ["answerer", "train", str(squad), "--out", str(model), "--work", str(tmp_path / "w")],
    )
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "held-out questions (not trained on)" in result.stdout
    assert "answerable_refused" in result.stdout and "→" in result.stdout
    trained = read_model(model)
    assert trained.meta["data"].startswith("small.json")
    assert 0.0 <= trained.threshold <= 1.0
    assert trained.meta["question_positives"] > 0
    assert trained.meta["question_rows"] > trained.meta["question_positives"]  # negatives too
    assert trained.spans is not None and 0.0 < trained.span_threshold < 1.0  # short answers

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "休暇.md").write_text(
        "# 休暇規程\n\n## 申請方法\n\n有給休暇はミナモ勤怠から3営業日前までに申請する。\n",
        encoding="utf-8",
    )
    index = str(tmp_path / "index")
    assert runner.invoke(app, ["ingest", str(docs), "--index", index]).exit_code == 0
    result = runner.invoke(
        app,
        ["ask", "有給休暇の申請方法は？", "--index", index, "--json"],
        env={"SHIRABE_ANSWERING__MODEL": str(model), "SHIRABE_ANSWERING__THRESHOLD": "0"},
    )
    assert result.exit_code == 0, result.stderr
    answer = json.loads(result.stdout)
    assert "ミナモ勤怠" in answer["answer"]
    assert 0.0 <= answer["confidence"] <= 1.0
    assert {f["feature"] for f in answer["confidence_factors"]} <= set(QUESTION_FEATURES)


def test_a_model_for_other_features_is_refused_when_answering(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# 規程\n\n申請は3日前まで。\n", encoding="utf-8")
    index = str(tmp_path / "index")
    assert runner.invoke(app, ["ingest", str(docs), "--index", index]).exit_code == 0
    old = tmp_path / "old.json"
    spec = leaf_spec(list(LINE_FEATURES[:-1]), list(QUESTION_FEATURES))
    old.write_text(json.dumps(spec), encoding="utf-8")
    result = runner.invoke(
        app,
        ["ask", "申請はいつまで？", "--index", index],
        env={"SHIRABE_ANSWERING__MODEL": str(old)},
    )
    assert result.exit_code != 0
    assert "old.json" in result.stderr and "answerer train" in result.stderr
