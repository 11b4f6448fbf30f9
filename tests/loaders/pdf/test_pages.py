"""Table rows as extracted from a page."""

from __future__ import annotations

from shirabe.loaders.pdf.pages import merge_sparse_columns


def test_merge_sparse_columns() -> None:
    rows = [["１．見出し", "", "", ""], ["", "項目", "", "期限"], ["(1)", "", "評価書", "令和3年"]]
    assert merge_sparse_columns(rows) == [
        ["１．見出し", "", ""],
        ["項目", "", "期限"],
        ["(1)", "評価書", "令和3年"],
    ]
