"""Checks shared by the Office Open XML loaders (docx, xlsx, pptx) before any parsing."""

from __future__ import annotations

import zipfile
from pathlib import Path

from shirabe.loaders.protocol import LoadError

_OLE_SIGNATURE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"


def check_package(path: Path, *, max_unzipped_bytes: int, part: str) -> None:
    """Raise ``LoadError`` with a clear reason unless ``path`` is a sane OOXML package.

    Encrypted Office files are OLE compound files, not zips; a package whose members would
    expand beyond ``max_unzipped_bytes`` is refused before anything is decompressed; ``part``
    is the member every valid package of the format has (``word/document.xml``).
    """
    try:
        with path.open("rb") as fh:
            head = fh.read(8)
    except OSError as exc:
        raise LoadError(path, exc.strerror or str(exc)) from exc
    if head == _OLE_SIGNATURE:
        raise LoadError(
            path, "encrypted, password required (or an old binary Office format, not supported)"
        )
    try:
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
            names = {info.filename for info in infos}
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise LoadError(path, f"corrupt or truncated Office file ({exc})") from exc
    total = sum(info.file_size for info in infos)
    if total > max_unzipped_bytes:
        raise LoadError(
            path,
            f"too large when unzipped ({total:,} bytes; limit {max_unzipped_bytes:,}): "
            "possible zip bomb",
        )
    if part not in names:
        raise LoadError(path, f"not a valid Office file (no {part})")
