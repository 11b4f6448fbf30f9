"""The learned answer model: gradient-boosted trees read from a small JSON file.

Two models share the file. The line model scores each candidate line (does it hold the
answer?); the question model says whether the candidates answer the question at all, and its
score is calibrated (isotonic) into a probability. The file names the features each model was
trained with, the data it was trained on, and the refusal threshold chosen for it; a file made
for other features than the code computes is refused with a message that says so.

The trees are evaluated here with NumPy, all trees of a model at once, so answering needs no
training library. Training (``shirabe answerer train``) writes the file with LightGBM.
"""

from __future__ import annotations

import gzip
import json
import math
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from shirabe.answering.features import LINE_FEATURES, QUESTION_FEATURES
from shirabe.answering.spans import SPAN_FEATURES
from shirabe.errors import ConfigurationError

FORMAT: Final = 1
DEFAULT_FILE: Final = "answerer.json.gz"

Array = npt.NDArray[np.float64]


class ModelFileError(ConfigurationError):
    """An answer model file that cannot be used; the message names the file and why."""


@dataclass(frozen=True, slots=True)
class Forest:
    """Trees flattened into arrays: node ``i`` splits on ``feature[i]`` at ``threshold[i]``
    (``<=`` goes left) or, when ``feature[i] < 0``, is a leaf worth ``value[i]``. ``value`` of
    an inner node is the mean of its leaves (for explanations)."""

    feature: npt.NDArray[np.int64]
    threshold: Array
    left: npt.NDArray[np.int64]
    right: npt.NDArray[np.int64]
    value: Array
    roots: npt.NDArray[np.int64]
    depth: int
    base: float = 0.0

    def raw(self, rows: Array) -> Array:
        """The summed tree outputs for each row (log-odds for a binary model). Every
        (row, tree) pair walks down at once, level by level; pairs that reached a leaf drop
        out of the walk."""
        if rows.ndim != 2:
            raise ValueError("rows must be a 2-D array")
        n, trees = rows.shape[0], self.roots.size
        if n == 0 or trees == 0:
            return np.full(n, self.base)
        node = np.tile(self.roots, n)
        row = np.repeat(np.arange(n), trees)
        walking = np.arange(node.size)
        while walking.size:
            at = node[walking]
            feat = self.feature[at]
            inner = feat >= 0
            walking, at, feat = walking[inner], at[inner], feat[inner]
            node[walking] = self._child(at, rows[row[walking], feat])
        total: Array = self.value[node].reshape(n, trees).sum(axis=1) + self.base
        return total

    def contributions(self, row: Sequence[float]) -> Array:
        """How much each feature moved this row's output (Saabas: the change of the expected
        value at each split along the path), one figure per feature."""
        out = np.zeros(int(self.feature.max(initial=-1)) + 1)
        values = np.asarray(row, dtype=np.float64)
        node = self.roots.copy()
        while node.size:
            feat = self.feature[node]
            inner = feat >= 0
            node, feat = node[inner], feat[inner]
            step = self._child(node, values[feat])
            np.add.at(out, feat, self.value[step] - self.value[node])
            node = step
        return out

    def _child(self, node: npt.NDArray[np.int64], x: Array) -> npt.NDArray[np.int64]:
        """The child each inner ``node`` sends its value ``x`` to (``<=`` goes left)."""
        child: npt.NDArray[np.int64] = np.where(
            x <= self.threshold[node], self.left[node], self.right[node]
        )
        return child

    @classmethod
    def of(cls, spec: Mapping[str, Any]) -> Forest:
        return cls(
            feature=np.asarray(spec["feature"], dtype=np.int64),
            threshold=np.asarray(spec["threshold"], dtype=np.float64),
            left=np.asarray(spec["left"], dtype=np.int64),
            right=np.asarray(spec["right"], dtype=np.int64),
            value=np.asarray(spec["value"], dtype=np.float64),
            roots=np.asarray(spec["roots"], dtype=np.int64),
            depth=int(spec["depth"]),
            base=float(spec.get("base", 0.0)),
        )


def forest_from_lightgbm(dump: Mapping[str, Any]) -> dict[str, Any]:
    """A LightGBM ``Booster.dump_model()`` as the arrays of :class:`Forest` (numerical
    ``<=`` splits only; missing values are not expected)."""
    feature: list[int] = []
    threshold: list[float] = []
    left: list[int] = []
    right: list[int] = []
    value: list[float] = []
    roots: list[int] = []
    depth = 0

    def add(node: Mapping[str, Any], level: int) -> int:
        nonlocal depth
        depth = max(depth, level)
        i = len(feature)
        feature.append(-1)
        threshold.append(0.0)
        left.append(i)
        right.append(i)
        if "leaf_value" in node:
            value.append(float(node["leaf_value"]))
            return i
        if node.get("decision_type", "<=") != "<=":
            raise ValueError(f"unsupported split {node.get('decision_type')}")
        value.append(float(node.get("internal_value", 0.0)))
        feature[i] = int(node["split_feature"])
        threshold[i] = float(node["threshold"])
        left[i] = add(node["left_child"], level + 1)
        right[i] = add(node["right_child"], level + 1)
        return i

    for tree in dump["tree_info"]:
        roots.append(add(tree["tree_structure"], 0))
    return {
        "feature": feature,
        "threshold": threshold,
        "left": left,
        "right": right,
        "value": [round(v, 8) for v in value],
        "roots": roots,
        "depth": depth + 1,
    }


@dataclass(frozen=True, slots=True)
class Calibration:
    """Isotonic calibration: a raw score to a probability, by linear interpolation between
    the fitted points (constant beyond them)."""

    x: Array
    y: Array

    def __call__(self, raw: float) -> float:
        if self.x.size == 0:
            return 1.0 / (1.0 + math.exp(-raw))
        return float(np.interp(raw, self.x, self.y))


@dataclass(frozen=True, slots=True)
class AnswerModel:
    lines: Forest
    questions: Forest
    calibration: Calibration
    threshold: float
    """The default refusal threshold on the calibrated probability."""
    meta: dict[str, Any]
    source: str
    spans: Forest | None = None
    """The span model: which part of the answering line is the short answer."""
    span_threshold: float = 0.5
    """The span probability from which a span is given as the short answer."""

    def line_scores(self, rows: Sequence[Sequence[float]]) -> list[float]:
        """Each candidate line's probability of holding the answer (uncalibrated, for
        ranking)."""
        if not rows:
            return []
        raw = self.lines.raw(np.asarray(rows, dtype=np.float64))
        return [float(v) for v in 1.0 / (1.0 + np.exp(-raw))]

    def span_scores(self, rows: Sequence[Sequence[float]]) -> list[float]:
        """Each span's probability of being the short answer ([] without a span model)."""
        if not rows or self.spans is None:
            return []
        raw = self.spans.raw(np.asarray(rows, dtype=np.float64))
        return [float(v) for v in 1.0 / (1.0 + np.exp(-raw))]

    def answerable(self, row: Sequence[float]) -> float:
        """The calibrated probability that the candidates answer the question."""
        raw = float(self.questions.raw(np.asarray([row], dtype=np.float64))[0])
        return self.calibration(raw)

    def explain(self, row: Sequence[float], limit: int = 5) -> list[tuple[str, float]]:
        """The question features that moved the answerability score most, with how much
        (log-odds), largest first."""
        moved = self.questions.contributions(row)
        named = [(QUESTION_FEATURES[i], float(v)) for i, v in enumerate(moved) if v]
        named.sort(key=lambda kv: -abs(kv[1]))
        return named[:limit]

    @classmethod
    def of(cls, spec: Mapping[str, Any], source: str) -> AnswerModel:
        """A model from the file's parsed JSON; refused unless made for this code's features."""
        if spec.get("format") != FORMAT:
            raise ModelFileError(
                f"{source}: answer model format {spec.get('format')!r}, expected {FORMAT}"
            )
        features = spec.get("features", {})
        named = [("line", LINE_FEATURES), ("question", QUESTION_FEATURES)]
        if spec.get("span") is not None:
            named.append(("span", SPAN_FEATURES))
        for name, expected in named:
            got = tuple(features.get(name, ()))
            if got != expected:
                extra = sorted(set(got) - set(expected))
                lacking = sorted(set(expected) - set(got))
                raise ModelFileError(
                    f"{source}: the answer model's {name} features do not match this version "
                    f"of shirabe (unknown to the code: {extra or 'none'}; not in the file: "
                    f"{lacking or 'none'}; order differs: {not extra and not lacking}). "
                    "Retrain it with `shirabe answerer train`."
                )
        calib = spec["calibration"]
        return cls(
            lines=Forest.of(spec["line"]),
            questions=Forest.of(spec["question"]),
            calibration=Calibration(
                np.asarray(calib["x"], dtype=np.float64), np.asarray(calib["y"], dtype=np.float64)
            ),
            threshold=float(spec["threshold"]),
            meta=dict(spec.get("meta", {})),
            source=source,
            spans=Forest.of(spec["span"]) if spec.get("span") is not None else None,
            span_threshold=float(spec.get("span_threshold", 0.5)),
        )


def read_spec(path: Path) -> dict[str, Any]:
    """The parsed JSON of a model file (gzipped when the name ends in ``.gz``), unchecked."""
    try:
        raw = path.read_bytes()
        if path.name.endswith(".gz"):
            raw = gzip.decompress(raw)
        spec = json.loads(raw.decode("utf-8"))
    except (OSError, EOFError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelFileError(f"{path}: not a readable answer model file ({exc})") from exc
    if not isinstance(spec, dict):
        raise ModelFileError(f"{path}: not a readable answer model file (not an object)")
    return spec


def read_model(path: Path) -> AnswerModel:
    """The model in ``path`` (JSON, gzipped when the name ends in ``.gz``)."""
    spec = read_spec(path)
    try:
        return AnswerModel.of(spec, str(path))
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelFileError(f"{path}: answer model file lacks a field ({exc})") from exc


_lock = threading.Lock()


@cache
def _shipped() -> AnswerModel:
    with resources.as_file(resources.files("shirabe.answering") / "model" / DEFAULT_FILE) as p:
        return read_model(p)


def load_model(path: Path | None = None) -> AnswerModel:
    """The model at ``path``, or the one shipped with shirabe (read once per process)."""
    if path is not None:
        return read_model(path)
    with _lock:
        return _shipped()


def write_model(path: Path, spec: Mapping[str, Any]) -> None:
    """Writes a model file (gzipped JSON when the name ends in ``.gz``) after checking that
    it reads back."""
    AnswerModel.of(spec, str(path))
    data = json.dumps(spec, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(data, mtime=0) if path.name.endswith(".gz") else data)
