"""Loader for plain ``.txt`` files, plus the reading helpers the Markdown loader shares.

Plain text gets its encoding detected and its ``第1章``/``【...】`` structure turned into
Markdown headings, so chunks of a plain-text rule book still carry a heading path.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import ClassVar

from shirabe.loaders.plaintext import plain_text_to_markdown
from shirabe.loaders.protocol import LoadError, LoadOptions, read_failure
from shirabe.records import Document, Part
from shirabe.text.encoding import EncodingError, decode_bytes
from shirabe.text.markdown import atx_heading, closes_fence, fence_marker

logger = logging.getLogger(__name__)


class TextLoader:
    """Plain text in any supported Japanese encoding, as one Markdown part."""

    extensions: ClassVar[tuple[str, ...]] = (".txt",)

    def load(self, path: Path, options: LoadOptions) -> Document:
        text = read_text(path)
        markdown = plain_text_to_markdown(text)
        warnings = [] if text.strip() else ["empty file"]
        return Document(
            path=str(path),
            parts=[Part(markdown)],
            title=first_heading(markdown),
            warnings=warnings,
        )


def read_text(path: Path) -> str:
    """The decoded text of ``path``; raises :class:`LoadError` with a user-facing reason."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise read_failure(path, exc) from exc
    try:
        return decode_bytes(data, str(path))
    except EncodingError as exc:
        logger.debug("cannot decode %s: %s", path, exc.reason)
        raise LoadError(path, exc.reason) from exc


def first_heading(markdown: str, max_level: int = 6) -> str | None:
    """The text of the first ATX heading of level ``max_level`` or above, outside code fences,
    as the chunker reads headings and fences."""
    fence: str | None = None
    for line in markdown.split("\n"):
        if fence is not None:
            if closes_fence(line, fence):
                fence = None
            continue
        fence = fence_marker(line)
        if fence is not None:
            continue
        heading = atx_heading(line)
        if heading is not None and heading[0] <= max_level:
            return heading[1]
    return None
