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

_HOMES = {
    "Shirabe": "shirabe.engine",
    "Settings": "shirabe.settings",
    **{
        name: "shirabe.records"
        for name in (
            "Answer",
            "Chunk",
            "Citation",
            "Document",
            "Filters",
            "Hit",
            "IngestReport",
            "Part",
        )
    },
}


def __getattr__(name: str) -> Any:
    """Public names resolve on first use so ``import shirabe`` stays cheap."""
    if name in _HOMES:
        import importlib

        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module 'shirabe' has no attribute {name!r}")
