"""The uploads area: where an uploaded file goes, who will read it, and whether its uploader
may put it there.

An upload lives in its category's folder of the area, and its readers are those the access map
gives that place, as for any file. A user may upload only where every reader group is one of
theirs (or ``public``), and replace only what they uploaded themselves; admins may do both
anywhere.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

from shirabe.access.map import AccessMap
from shirabe.errors import UploadConflictError, UploadError, UploadForbiddenError
from shirabe.indexing.places import place_of
from shirabe.loaders.registry import loader_for
from shirabe.records import PUBLIC, UPLOADED_BY, Reader
from shirabe.stores.protocol import Store
from shirabe.text.paths import canonical_name, mixed_scripts

MAX_NAME_BYTES = 200
"""Uploaded names are shortened to this many UTF-8 bytes, their suffix kept: file systems hold
255 bytes a name, and a file being received has ``.part`` added."""
_UNSAFE = re.compile(r'[\x00-\x1f<>:"|?*\\/]')


def safe_name(filename: str) -> str | None:
    """The last path component of an uploaded name, if it is a usable file name. Format
    characters are dropped: a right-to-left override would show ``ok\u202egpj.md`` as
    ``okdm.jpg``."""
    name = unicodedata.normalize("NFC", filename.replace("\\", "/").rsplit("/", 1)[-1])
    name = "".join(ch for ch in name if unicodedata.category(ch) != "Cf").strip()
    if not name or name in {".", ".."} or name.startswith(".") or _UNSAFE.search(name):
        return None
    return shortened(name)


def shortened(name: str, limit: int = MAX_NAME_BYTES) -> str:
    """``name`` cut to ``limit`` UTF-8 bytes at a character boundary, its suffix kept."""
    if len(name.encode("utf-8")) <= limit:
        return name
    suffix = Path(name).suffix if len(Path(name).suffix) <= 16 else ""
    room = limit - len(suffix.encode("utf-8"))
    stem = name[: len(name) - len(suffix)].encode("utf-8")[:room].decode("utf-8", "ignore")
    return stem + suffix


class Uploads:
    """Decides where each upload goes and whether its uploader may put it there."""

    def __init__(self, area: Path, store: Store, access: AccessMap) -> None:
        self.area = area
        self._store = store
        self._access = access

    def folder(self, category: str) -> Path:
        """The folder of ``category`` in the area (made only once the upload is allowed),
        named in its canonical form: ``⼈事`` or ``人事.`` is the category ``人事``, with its
        readers. A name that mixes look-alike alphabets (``НR`` with a Cyrillic Н) is refused:
        it would be shown as another category's name."""
        name = safe_name(canonical_name(category))
        if name is None:
            raise UploadError(f"category: {category!r} is not a folder name")
        mixed = mixed_scripts(name)
        if mixed:
            raise UploadError(
                f"category: {category!r} mixes {' and '.join(s.title() for s in mixed)} "
                "letters, which look alike; write it in one alphabet"
            )
        return self.area / name

    @staticmethod
    def target(folder: Path, filename: str) -> Path | None:
        """Where the upload named ``filename`` is written in ``folder``; None when the name is
        no file name (nothing can be kept of it)."""
        name = safe_name(filename)
        return None if name is None else folder / name

    @staticmethod
    def unsupported(target: Path) -> str | None:
        """Why no loader reads ``target``, or None when one does."""
        if loader_for(target) is not None:
            return None
        return f"unsupported file type {target.suffix or '(none)'}"

    def readers(self, reader: Reader, uploader: str | None, target: Path) -> tuple[str, ...]:
        """The groups that will read the upload at ``target``; refused before anything is
        saved when ``reader`` (the user ``uploader``, or anonymous) may not give it those
        readers (:class:`UploadForbiddenError`) or may not replace the document there
        (:class:`UploadConflictError`)."""
        place = place_of(target, self.area)
        if place is None:
            raise UploadError(f"{target.name}: not in the uploads area")
        relative = place.relative
        readers = self._access.groups_for(relative)
        if reader.admin:
            return readers
        own = reader.visible or frozenset({PUBLIC})
        outside = [g for g in readers if g not in own]
        if outside:
            raise UploadForbiddenError(
                f"{relative} would be readable by {', '.join(outside)}, which you are not in; "
                "upload it into a category of your own groups"
            )
        if not self._may_replace(uploader, target, place.key):
            raise UploadConflictError(
                f"{relative} already exists and was not uploaded by you; only an admin can "
                "replace it (upload it under another name or category)"
            )
        return readers

    def _may_replace(self, uploader: str | None, target: Path, key: str) -> bool:
        """Whether ``uploader`` may write the document at ``target`` (stored under ``key``): a
        new one, or one they uploaded. A file there that is not indexed yet (another upload
        waiting for its ingest, or a file put there by hand) is nobody's to replace but an
        admin's."""
        existing = self._store.get_source(key)
        if existing is None:
            return not target.exists()
        return uploader is not None and existing.metadata.get(UPLOADED_BY) == uploader
