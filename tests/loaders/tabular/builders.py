"""Rows written as plain values, for the tabular tests."""

from __future__ import annotations

from shirabe.loaders.tabular.rows import Cell, Row
from shirabe.loaders.tabular.values import format_value, infer_kind


def row(number: int, *values: object, start: int = 1) -> Row:
    """A row from plain values (``None`` leaves a cell empty); kinds as a CSV reader infers."""
    cells = []
    for offset, value in enumerate(values):
        if value is None:
            continue
        if isinstance(value, Cell):
            cells.append(value)
            continue
        formatted = format_value(value)
        assert formatted is not None
        text, kind = formatted
        cells.append(Cell(start + offset, text, infer_kind(text) if kind == "text" else kind))
    return Row(number, tuple(cells))
