"""Reading a file's bytes for the ingest: never through a symbolic link, fingerprinted as
read, and handed to a loader as a private copy of exactly those bytes."""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from shirabe.stores.protocol import SourceRecord

SWAPPED = "symbolic link: the file became a link after its folder was read (not followed)"


def fingerprint(key: str, st: os.stat_result, data: bytes) -> SourceRecord:
    return SourceRecord(
        path=key,
        sha256=hashlib.sha256(data).hexdigest(),
        size=st.st_size,
        mtime=st.st_mtime,
    )


def opened(path: Path) -> int:
    """A descriptor of the file at ``path``, never through a symbolic link (OSError ELOOP):
    between the walk's check and this read, a file swapped for a link is not read."""
    return os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))


@contextmanager
def private_copy(path: Path, data: bytes) -> Iterator[Path]:
    """``data``, the bytes read from ``path`` through :func:`opened`, as a file of the same
    name in a folder only this user may enter, removed afterwards. A loader reads this copy,
    never ``path`` again: whatever ``path`` becomes meanwhile (a link to outside the root, and
    back), what is indexed is what was read and fingerprinted."""
    with tempfile.TemporaryDirectory(prefix="shirabe-read-") as folder:
        copy = Path(folder) / path.name
        fd = os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        yield copy


def named(reason: str, copied: str, key: str) -> str:
    """A loader's ``reason`` with the private copy it read named as the file it is of."""
    return reason.replace(copied, key) if copied else reason
