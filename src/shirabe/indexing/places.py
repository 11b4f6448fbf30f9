"""Where a document lives: its key, its path below the index's document root, its category.

A document's identity and the tags that decide who may read it come from its place below
the document root only, never from how a command named it: ``ingest docs``, ``ingest
docs/人事`` and ``ingest docs/人事/規程.md`` give ``docs/人事/規程.md`` one key, one category
(``人事``) and one relative path for the access map (``人事/規程.md``).

Names are compared in NFC, and names that are not valid UTF-8 are made readable
(:mod:`shirabe.text.paths`). A symbolic link that points into the root has the place of its
target, so a file has one place however it is reached.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from shirabe.text.paths import canonical_name, readable_name, readable_path


@dataclass(frozen=True, slots=True)
class Place:
    """A file's place below a root."""

    key: str
    """The document's identity in the index: the root joined with ``relative``."""
    relative: str
    """The ``/``-separated path below the root (what access-map globs match)."""

    def child(self, parts: Sequence[str]) -> Place:
        """The place of a path ``parts`` below this one (a file found walking a folder)."""
        names = [readable_name(p) for p in parts]
        relative = "/".join([self.relative, *names] if self.relative else names)
        return Place(os.path.join(self.key, *names), relative)

    @property
    def category(self) -> str | None:
        """The first folder below the root, in its canonical form (:func:`canonical_name`:
        ``⼈事`` and ``人事.`` are the category ``人事``); None for a file directly in it."""
        head, sep, _rest = self.relative.partition("/")
        return canonical_name(head) if sep else None


def _below(path: Path, root: Path) -> list[str] | None:
    names = [readable_name(p) for p in path.parts]
    base = [readable_name(p) for p in root.parts]
    if names[: len(base)] != base:
        return None
    return names[len(base) :]


def place_of(path: str | Path, root: str | Path) -> Place | None:
    """Where ``path`` lives below ``root`` (``root`` itself: an empty relative path); None
    when it is not below it.

    A path whose target (symbolic links resolved) lies below the root has the target's place:
    a link inside the root, or a way into it from outside, never makes a second document. A
    link from inside the root to elsewhere has the place where it is written (where the ingest
    reports it to admins; it is never read through, :mod:`shirabe.indexing.walk`).
    """
    given, base = Path(os.path.abspath(path)), Path(os.path.abspath(root))
    relative = _below(Path(os.path.realpath(given)), Path(os.path.realpath(base)))
    if relative is None:
        relative = _below(given, base)
    if relative is None:
        return None
    return Place(os.path.join(readable_path(base), *relative), "/".join(relative))


def common_root(paths: Sequence[str | Path]) -> Path | None:
    """The folder a first ingest of ``paths`` makes the document root: the one folder given,
    a single file's folder, or the deepest folder holding everything given; None when none of
    them exists (a mistyped path must not become the root)."""
    folders = [
        os.path.abspath(p) if Path(p).is_dir() else os.path.dirname(os.path.abspath(p))
        for p in paths
        if os.path.exists(p)
    ]
    return Path(os.path.commonpath(folders)) if folders else None
