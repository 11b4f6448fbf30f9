"""The loader interface: one file in, structured Markdown parts out."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Protocol

from shirabe.records import Document
from shirabe.text.encoding import EncodingError, decode_bytes
from shirabe.text.globs import glob_matches
from shirabe.text.paths import readable_path


@dataclass(frozen=True, slots=True)
class LoadOptions:
    """What loaders may need beyond the file itself; built from the settings."""

    passwords: Mapping[str, str] = field(default_factory=dict)
    """Path glob → password, for encrypted PDFs (:mod:`shirabe.text.globs`: a glob not starting
    with ``/`` matches at any folder depth, so a file name is enough)."""
    max_unzipped_bytes: int = 1024 * 1024 * 1024
    """Refuse OOXML packages (docx, xlsx, pptx) that would expand beyond this (zip bombs)."""
    max_loader_memory: int | None = 2 * 1024 * 1024 * 1024
    """Bytes of memory the process reading files may use (a file needing more fails, the
    next one is read by a fresh process); ``None``: no limit."""
    ocr: bool = True
    """Run Tesseract on PDF pages without a usable text layer, when it is installed."""
    ocr_languages: str = "jpn+eng"

    def password_for(self, path: Path) -> str | None:
        """The password of the first glob matching ``path``, if any."""
        for glob, password in self.passwords.items():
            if glob_matches(glob, readable_path(path)):
                return password
        return None


_progress_hooks: list[Callable[[], None]] = []
_last_progress = [0.0]
PROGRESS_INTERVAL = 1.0
"""Seconds between two progress reports that reach the hook; more frequent calls are dropped."""


def report_progress() -> None:
    """Tell whoever supervises this load that reading moves on (a page, a sheet, rows).

    Long files call it as they go; the time limit then counts from the last report rather
    than from the start of the file, so a 500-page scan is read while a parser stuck on one
    page is still stopped. Cheap to call often: reports are throttled.
    """
    if not _progress_hooks:
        return
    now = time.monotonic()
    if now - _last_progress[0] < PROGRESS_INTERVAL:
        return
    _last_progress[0] = now
    for hook in _progress_hooks:
        hook()


def set_progress_hook(hook: Callable[[], None] | None) -> None:
    """Install (or with ``None`` remove) the function :func:`report_progress` calls."""
    _progress_hooks.clear()
    _last_progress[0] = 0.0
    if hook is not None:
        _progress_hooks.append(hook)


class LoadError(Exception):
    """A file could not be turned into text; ``reason`` is shown to the user."""

    def __init__(self, path: str | Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = str(path)
        self.reason = reason

    def __reduce__(self) -> tuple[type[LoadError], tuple[str, str]]:
        return (LoadError, (self.path, self.reason))


class Loader(Protocol):
    """Turns one file into a :class:`Document` whose parts are Markdown.

    ``extensions`` lists the lower-case suffixes (with dot) the loader handles. Heavy third-party
    imports happen inside ``load``, never at module import; a missing one raises ``LoadError``
    naming the install command. Problems that still let part of the file in (a page needing
    OCR) go to ``Document.warnings``.
    """

    extensions: ClassVar[tuple[str, ...]]

    def load(self, path: Path, options: LoadOptions) -> Document: ...


def describe_error(exc: BaseException) -> str:
    """A short one-line description of a parser exception, for failure reasons."""
    message = " ".join(str(exc).split())
    if len(message) > 120:
        message = message[:117] + "..."
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def read_failure(path: str | Path, exc: OSError) -> LoadError:
    """The :class:`LoadError` for a file the system would not let us read."""
    if isinstance(exc, PermissionError):
        return LoadError(path, "permission denied")
    if isinstance(exc, FileNotFoundError):
        return LoadError(path, "file not found")
    if isinstance(exc, IsADirectoryError):
        return LoadError(path, "is a directory, not a file")
    return LoadError(path, f"cannot read file ({exc.strerror or exc})")


def read_text(path: Path) -> str:
    """The decoded text of ``path``; raises :class:`LoadError` with a user-facing reason."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise read_failure(path, exc) from exc
    try:
        return decode_bytes(data, str(path))
    except EncodingError as exc:
        raise LoadError(path, exc.reason) from exc
