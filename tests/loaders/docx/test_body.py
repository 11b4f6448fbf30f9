"""Rendering body blocks as Markdown."""

from __future__ import annotations

from shirabe.loaders.docx.body import Block, render


def test_render_levels_headings_against_the_title() -> None:
    blocks = [Block("heading", "T", 0), Block("heading", "A", 1), Block("paragraph", "x")]
    assert render(blocks) == "# T\n\n## A\n\nx"
    assert render(blocks[1:]) == "# A\n\nx"
    items = [Block("item", "- a"), Block("item", "- b", 1), Block("paragraph", "p")]
    assert render(items) == "- a\n  - b\n\np"
