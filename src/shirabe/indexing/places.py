"""Where a document lives: its key, its path below the index's document root, its category.

A document's identity and the tags that decide who may read it come from its place below
the document root only, never from how a command named it: ``ingest docs``, ``ingest
docs/人事`` and ``ingest docs/人事/規程.md`` give ``docs/人事/規程.md`` one key, one category
(``人事``) and one relative path for the access map (``人事/規程.md``).

Names are compared in NFC (macOS writes NFD), and names that are not valid UTF-8 (Shift_JIS
names from zip archives and SMB shares) are read as CP932 when they are valid CP932, else
their undecodable bytes are shown as ``\\xNN``.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


def readable_name(name: str) -> str:
    """One path component as text: NFC, undecodable bytes read as CP932 or escaped.

    Python gives undecodable bytes of a file name as lone surrogates (``surrogateescape``);
    they cannot be stored or shown, so they are decoded again here.
    """
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        raw = os.fsencode(name)
        try:
            name = raw.decode("cp932")
            if any(unicodedata.category(ch) in {"Cc", "Co"} for ch in name):
                raise UnicodeDecodeError("cp932", raw, 0, len(raw), "not a name")
        except UnicodeDecodeError:  # neither UTF-8 nor CP932 text (CP932 gives 0xff as U+F8F3)
            name = raw.decode("utf-8", "backslashreplace")
    return unicodedata.normalize("NFC", name)


def readable_path(path: str | Path) -> str:
    """An absolute path as text, each component made readable (:func:`readable_name`)."""
    parts = Path(os.path.abspath(path)).parts
    return os.path.join(parts[0], *(readable_name(p) for p in parts[1:]))


@dataclass(frozen=True, slots=True)
class Place:
    """A file's place below a root."""

    key: str
    """The document's identity in the index: the root joined with ``relative``."""
    relative: str
    """The ``/``-separated path below the root (what access-map globs match)."""

    @property
    def category(self) -> str | None:
        """The first folder below the root; None for a file directly in it."""
        head, sep, _rest = self.relative.partition("/")
        return head if sep else None


def _below(path: Path, root: Path) -> list[str] | None:
    names = [readable_name(p) for p in path.parts]
    base = [readable_name(p) for p in root.parts]
    if names[: len(base)] != base:
        return None
    return names[len(base) :]


def place_of(path: str | Path, root: str | Path) -> Place | None:
    """Where ``path`` lives below ``root`` (``root`` itself: an empty relative path); None
    when it is not below it.

    Compared as written (symlinks kept) and, failing that, with symlinks resolved, so that a
    file reached through a link into the root has the same place as the file itself.
    """
    given, base = Path(os.path.abspath(path)), Path(os.path.abspath(root))
    relative = _below(given, base)
    if relative is None:
        relative = _below(Path(os.path.realpath(given)), Path(os.path.realpath(base)))
    if relative is None:
        return None
    return Place(os.path.join(readable_path(base), *relative), "/".join(relative))


def common_root(paths: Sequence[str | Path]) -> Path:
    """The folder a first ingest of ``paths`` makes the document root: the one folder given,
    a single file's folder, or the deepest folder holding everything given."""
    folders = [
        os.path.abspath(p) if Path(p).is_dir() else os.path.dirname(os.path.abspath(p))
        for p in paths
    ]
    return Path(os.path.commonpath(folders))
