"""Which files below a folder an ingest reads: hidden files, lock files and editor leftovers
skipped, each folder once (links that loop or lead outside the root reported, not followed),
and whether an indexed file is still on disk."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from shirabe.indexing.places import place_of
from shirabe.loaders.registry import supported_extensions
from shirabe.text.paths import readable_path

log = logging.getLogger(__name__)

_TEMP_SUFFIXES = ("~", ".tmp", ".temp", ".swp", ".swo", ".bak", ".part", ".crdownload")


def is_ignored(name: str) -> bool:
    """Hidden files, Office lock files (``~$x.docx``) and editor or download leftovers."""
    return (
        name.startswith((".", "~$", "#"))
        or name.endswith(_TEMP_SUFFIXES)
        or name in {"Thumbs.db", "desktop.ini"}
    )


Problem = Callable[[Path, str], None]
"""Told of a path below a walked folder that cannot be read, and why."""


def _identities(folders: Sequence[Path]) -> set[tuple[int, int]]:
    """The (device, inode) of each folder that exists."""
    found = set()
    for folder in folders:
        try:
            st = folder.stat()
        except OSError:
            continue
        found.add((st.st_dev, st.st_ino))
    return found


def _link(path: Path, folder: Path, inside: Path | None) -> str | None:
    """What to do with a symbolic link met while walking ``folder``: ``None`` to follow it,
    ``"skip"`` when its target lies inside the document root ``inside`` (resolved), where it
    is read at its own place, or the reason it is a failure of the run."""
    target = os.path.realpath(path)
    if not os.path.exists(target):
        return "broken symbolic link: its target does not exist"
    if inside is None or place_of(target, inside) is None:
        return None  # a way out of the root: read where it is written
    here = os.path.realpath(folder)
    if os.path.isdir(target) and (here == target or here.startswith(target.rstrip("/") + "/")):
        return "symbolic link loop: it points to a folder that holds it"
    return "skip"


def _ignore(_path: Path, _reason: str) -> None:
    pass


def walk(
    root: Path,
    problem: Problem | None = None,
    skip: Sequence[Path] = (),
    inside: Path | None = None,
) -> Iterator[Path]:
    """Supported files below ``root`` in sorted order. Folders in ``skip`` (the uploads area)
    are never read. Symbolic links into the document root ``inside`` are not followed (their
    targets are read at their own place); other symlinked folders are followed once.

    Folders that cannot be listed, symbolic link loops and links whose target is missing are
    given to ``problem`` with the reason.
    """
    extensions = supported_extensions()
    skipped = _identities(skip)
    seen = set(skipped)
    base = Path(os.path.realpath(inside)) if inside is not None else None

    def report(path: Path, reason: str) -> None:
        log.info("%s: %s", path, reason)
        (problem or _ignore)(path, reason)

    def visit(folder: Path) -> Iterator[Path]:
        try:
            st = folder.stat()
        except OSError as exc:
            report(folder, f"cannot read folder: {exc.strerror or exc}")
            return
        if (st.st_dev, st.st_ino) in skipped:
            return  # kept by the server as uploads, with readers of their own place
        if (st.st_dev, st.st_ino) in seen:
            report(folder, "symbolic link loop: this folder is already being read")
            return
        seen.add((st.st_dev, st.st_ino))
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            report(folder, f"cannot list folder: {exc.strerror or exc}")
            return
        for entry in entries:
            if not is_ignored(entry.name):
                yield from visit_entry(entry, folder)

    def visit_entry(entry: os.DirEntry[str], folder: Path) -> Iterator[Path]:
        path = Path(entry.path)
        try:
            verdict = _link(path, folder, base) if entry.is_symlink() else None
            if verdict == "skip":
                return
            if verdict is not None:
                report(path, verdict)
            elif entry.is_dir():
                yield from visit(path)
            elif entry.is_file() and path.suffix.lower() in extensions:
                yield path
        except OSError as exc:
            report(path, exc.strerror or str(exc))

    yield from visit(root)


def on_disk(key: str) -> bool:
    """Whether a key not seen by the walk is still a file on disk, as written. Keys that are no
    path as written (NFD names of an older index, undecodable names) were not seen: gone.
    A file that cannot even be looked at is kept."""
    try:
        return Path(key).is_file() and readable_path(key) == key
    except OSError:
        return True
