"""shirabe (調べ): offline Japanese document search and question answering with citations."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from shirabe.engine import Shirabe
    from shirabe.records import Answer, Chunk, Citation, Document, Filters, Hit, IngestReport, Part
    from shirabe.settings import Settings

__all__ = [
    "Answer",
    "Chunk",
    "Citation",
    "Document",
    "Filters",
    "Hit",
    "IngestReport",
    "Part",
    "Settings",
    "Shirabe",
]

_HOMES = {"Shirabe": "shirabe.engine", "Settings": "shirabe.settings"}
"""Where each public name lives; the others are records."""


def __getattr__(name: str) -> Any:
    """Public names resolve on first use so ``import shirabe`` stays cheap."""
    if name in __all__:
        import importlib

        return getattr(importlib.import_module(_HOMES.get(name, "shirabe.records")), name)
    raise AttributeError(f"module 'shirabe' has no attribute {name!r}")
