"""The loader interface: one file in, structured Markdown parts out."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Protocol

from shirabe.records import Document


class LoadError(Exception):
    """A file could not be turned into text; ``reason`` is shown to the user."""

    def __init__(self, path: str | Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = str(path)
        self.reason = reason


class Loader(Protocol):
    """Turns one file into a :class:`Document` whose parts are Markdown.

    ``extensions`` lists the lower-case suffixes (with dot) the loader handles. Heavy third-party
    imports happen inside ``load``, never at module import.
    """

    extensions: ClassVar[tuple[str, ...]]

    def load(self, path: Path) -> Document: ...
