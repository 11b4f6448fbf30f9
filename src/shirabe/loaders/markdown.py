"""Loader for Markdown files, which are already in the form the chunker reads.

YAML front matter is stripped from the text so it is not indexed as prose; its simple
``key: value`` pairs become metadata and its ``title`` the document title.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import ClassVar

from shirabe.loaders.protocol import LoadOptions, read_text
from shirabe.records import Document, Part
from shirabe.text.markdown import first_heading

_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(?P<body>(?:.*\n)*?)(?:---|\.\.\.)[ \t]*(?:\n|\Z)")
_PAIR = re.compile(r"^(?P<key>[A-Za-z_][\w.-]*)[ \t]*:(?:[ \t]+(?P<value>.*?))?[ \t]*$")
_NON_STRING_START = tuple("[{|>&*!")


class MarkdownLoader:
    """Markdown as one part, with front matter moved into the title and metadata."""

    extensions: ClassVar[tuple[str, ...]] = (".md", ".markdown")

    def load(self, path: Path, options: LoadOptions) -> Document:
        text = read_text(path)
        metadata, body = split_front_matter(text)
        title = metadata.get("title") or first_heading(body, max_level=1)
        warnings = [] if body.strip() else ["empty file"]
        return Document(
            path=str(path),
            parts=[Part(body)],
            title=title,
            metadata=metadata,
            warnings=warnings,
        )


def split_front_matter(text: str) -> tuple[dict[str, str], str]:
    """Simple string pairs of a leading ``---`` YAML block, and the text after it.

    Text without front matter comes back unchanged with empty metadata. Nested mappings,
    lists and block scalars are skipped rather than parsed: only plain ``key: value`` lines
    are kept.
    """
    match = _FRONT_MATTER.match(text)
    if match is None:
        return {}, text
    lines = [
        line
        for line in match["body"].split("\n")
        if line.strip() and not line.lstrip().startswith("#")
    ]
    if lines and not _PAIR.match(lines[0]):
        return {}, text  # a thematic break, not YAML
    metadata: dict[str, str] = {}
    for line in lines:
        pair = _PAIR.match(line)
        if pair is None or not pair["value"]:
            continue
        value = _scalar(pair["value"])
        if value is not None:
            metadata[pair["key"]] = value
    return metadata, text[match.end() :]


def _scalar(raw: str) -> str | None:
    """The string value of a one-line YAML scalar, or ``None`` for anything structured."""
    if raw.startswith(_NON_STRING_START):
        return None
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'":
        inner = raw[1:-1]
        return inner.replace("''", "'") if raw[0] == "'" else inner.replace('\\"', '"')
    return raw.split(" #", 1)[0].strip() or None
