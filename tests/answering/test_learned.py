"""The answer model file: trees evaluated with NumPy as LightGBM evaluates them, calibration,
and files made for other features refused."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from shirabe.answering.features import LINE_FEATURES, QUESTION_FEATURES
from shirabe.answering.learned import (
    FORMAT,
    AnswerModel,
    Calibration,
    Forest,
    ModelFileError,
    forest_from_lightgbm,
    read_model,
    write_model,
)


def _booster(rows: np.ndarray, labels: np.ndarray) -> object:
    import lightgbm as lgb

    params = {
        "objective": "binary",
        "num_leaves": 7,
        "verbosity": -1,
        "seed": 1,
        "min_data_in_leaf": 5,
        "deterministic": True,
        "num_threads": 1,
    }
    return lgb.train(params, lgb.Dataset(rows, label=labels), num_boost_round=20)


def test_forest_gives_lightgbm_raw_scores() -> None:
    rng = np.random.default_rng(3)
    rows = rng.normal(size=(400, 5))
    labels = (rows[:, 0] + 0.5 * rows[:, 3] ** 2 > 0.3).astype(float)
    booster = _booster(rows, labels)
    forest = Forest.of(forest_from_lightgbm(booster.dump_model()))  # type: ignore[attr-defined]
    fresh = rng.normal(size=(50, 5))
    expected = booster.predict(fresh, raw_score=True)  # type: ignore[attr-defined]
    assert np.allclose(forest.raw(fresh), expected, atol=1e-6)


def test_contributions_sum_to_the_raw_score_less_the_roots() -> None:
    rng = np.random.default_rng(4)
    rows = rng.normal(size=(300, 4))
    labels = (rows[:, 1] > 0).astype(float)
    forest = Forest.of(forest_from_lightgbm(_booster(rows, labels).dump_model()))  # type: ignore[attr-defined]
    row = rows[0]
    roots = forest.value[forest.roots].sum()
    moved = forest.contributions(row.tolist())
    assert moved.sum() + roots == pytest.approx(forest.raw(row[None, :])[0], abs=1e-6)
    assert abs(moved[1]) == max(abs(moved))  # the only feature that decides the label


def test_hand_made_tree() -> None:
    # x0 <= 1 ? (x1 <= 0 ? -1 : 2) : 5
    forest = Forest.of(
        {
            "feature": [0, 1, -1, -1, -1],
            "threshold": [1, 0, 0, 0, 0],
            "left": [1, 2, 2, 3, 4],
            "right": [4, 3, 2, 3, 4],
            "value": [0, 0, -1, 2, 5],
            "roots": [0],
            "depth": 3,
        }
    )
    rows = np.asarray([[0.5, -1.0], [0.5, 3.0], [1.0, 9.0], [1.5, -9.0]])
    assert forest.raw(rows).tolist() == [-1.0, 2.0, 2.0, 5.0]


def test_isotonic_calibration_interpolates_and_clips() -> None:
    calibrate = Calibration(np.asarray([-1.0, 0.0, 2.0]), np.asarray([0.1, 0.5, 0.9]))
    assert calibrate(-5.0) == pytest.approx(0.1)
    assert calibrate(1.0) == pytest.approx(0.7)
    assert calibrate(9.0) == pytest.approx(0.9)


def leaf_spec(line: list[str], question: list[str]) -> dict[str, object]:
    """A model file whose every tree is one leaf worth 0, for the features named."""
    leaf = {
        "feature": [-1],
        "threshold": [0],
        "left": [0],
        "right": [0],
        "value": [0.0],
        "roots": [0],
        "depth": 1,
    }
    return {
        "format": FORMAT,
        "features": {"line": line, "question": question},
        "line": leaf,
        "question": leaf,
        "calibration": {"x": [], "y": []},
        "threshold": 0.4,
    }


def test_a_file_for_other_features_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "old.json.gz"
    spec = leaf_spec([*LINE_FEATURES[:-1], "retired"], list(QUESTION_FEATURES))
    path.write_bytes(gzip.compress(json.dumps(spec).encode()))
    with pytest.raises(ModelFileError) as caught:
        read_model(path)
    message = str(caught.value)
    assert str(path) in message and "retired" in message and LINE_FEATURES[-1] in message


def test_a_broken_file_names_itself(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(ModelFileError, match=r"broken\.json"):
        read_model(path)


def test_written_file_reads_back(tmp_path: Path) -> None:
    path = tmp_path / "m.json.gz"
    write_model(path, leaf_spec(list(LINE_FEATURES), list(QUESTION_FEATURES)))
    model = read_model(path)
    assert isinstance(model, AnswerModel) and model.threshold == 0.4
    assert model.line_scores([[0.0] * len(LINE_FEATURES)]) == [0.5]
