"""Loader for plain ``.txt`` files.

Plain text gets its encoding detected and its ``第1章``/``【...】`` structure turned into
Markdown headings, so chunks of a plain-text rule book still carry a heading path.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from shirabe.loaders.plaintext import plain_text_to_markdown
from shirabe.loaders.protocol import LoadOptions, read_text
from shirabe.records import Document, Part
from shirabe.text.markdown import first_heading


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
