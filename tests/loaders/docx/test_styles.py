"""Heading levels from style names."""

from __future__ import annotations

import pytest

from shirabe.loaders.docx.styles import heading_level_of_name


@pytest.mark.parametrize(
    ("name", "level"),
    [
        ("Title", 0),
        ("表題", 0),
        ("heading 1", 1),
        ("Heading 3", 3),
        ("見出し 1", 1),
        ("見出し１", 1),
        ("見出し　２", 2),
        ("Normal", None),
        ("TOC Heading", None),
        ("Heading", None),
    ],
)
def test_heading_level_of_name(name: str, level: int | None) -> None:
    assert heading_level_of_name(name) == level
