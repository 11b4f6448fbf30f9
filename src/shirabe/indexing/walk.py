"""Which files below a folder an ingest reads: hidden files, lock files and editor leftovers
skipped, each folder once, no symbolic link read through (those that lead outside the root
reported apart), and whether an indexed file is still on disk."""

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


def escape(path: str | Path, inside: Path, skip: Sequence[Path] = ()) -> str | None:
    """Why ``path`` may not be read through: its target (symbolic links resolved) is missing,
    lies outside the folder ``inside``, or in one of the areas ``skip`` (the uploads folder);
    None when it is a file or folder of ``inside`` itself."""
    target = os.path.realpath(path)
    if not os.path.exists(target):
        return "broken symbolic link: its target does not exist"
    if any(place_of(target, area) is not None for area in skip):
        return "symbolic link into the uploads folder: not followed"
    if place_of(target, os.path.realpath(inside)) is None:
        return "symbolic link to outside the document root: not followed"
    return None


def _link(path: Path, folder: Path, inside: Path, skip: Sequence[Path]) -> str | None:
    """What to do with a symbolic link met while walking ``folder``: ``None`` when its target
    lies inside the document root ``inside``, where it is read at its own place (the link is
    never read through), else why it is not followed."""
    reason = escape(path, inside, skip)
    if reason is not None:
        return reason
    target, here = os.path.realpath(path), os.path.realpath(folder)
    if os.path.isdir(target) and (here == target or here.startswith(target.rstrip("/") + "/")):
        return "symbolic link loop: it points to a folder that holds it"
    return None


def _ignore(_path: Path, _reason: str) -> None:
    pass


def walk(
    root: Path,
    problem: Problem | None = None,
    skip: Sequence[Path] = (),
    inside: Path | None = None,
    *,
    links: Problem | None = None,
) -> Iterator[Path]:
    """Supported files below ``root`` in sorted order. Folders in ``skip`` (the uploads area)
    are never read.

    No symbolic link is read through. One whose target lies inside the document root
    ``inside`` is passed over: its target is read at its own place, with the readers of that
    place, when the walk of the root reaches it. Every other link (to outside the root, into
    a folder in ``skip``, to nothing, or a loop) is given to ``links`` with the reason: the
    run's report to admins, never a failure of the link's place. Without ``inside``, the
    folder walked is the root: only links to its own files and folders lead anywhere.

    Folders that cannot be listed are given to ``problem`` with the reason.
    """
    extensions = supported_extensions()
    skipped = _identities(skip)
    seen = set(skipped)
    base = Path(os.path.realpath(inside if inside is not None else root))

    def report(path: Path, reason: str, to: Problem | None = problem) -> None:
        log.info("%s: %s", path, reason)
        (to or _ignore)(path, reason)

    def visit(folder: Path) -> Iterator[Path]:
        try:
            st = folder.stat()
        except OSError as exc:
            report(folder, f"cannot read folder: {exc.strerror or exc}")
            return
        if (st.st_dev, st.st_ino) in skipped:
            return  # kept by the server as uploads, with readers of their own place
        if (st.st_dev, st.st_ino) in seen:
            report(folder, "folder loop: this folder is already being read")
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
            if entry.is_symlink():
                reason = _link(path, folder, base, skip)
                if reason is not None:
                    report(path, reason, links)
                return
            if entry.is_dir():
                yield from visit(path)
            elif entry.is_file() and path.suffix.lower() in extensions:
                yield path
        except OSError as exc:
            report(path, exc.strerror or str(exc))

    yield from visit(root)


def on_disk(key: str, inside: Path) -> bool:
    """Whether a key not seen by the walk is still a file on disk, as written, inside the root
    ``inside``. Keys that are no path as written (NFD names of an older index, undecodable
    names) were not seen: gone; so is one a symbolic link now leads out of the root from. A
    file that cannot even be looked at is kept."""
    try:
        return (
            Path(key).is_file()
            and readable_path(key) == key
            and place_of(os.path.realpath(key), os.path.realpath(inside)) is not None
        )
    except OSError:
        return True
