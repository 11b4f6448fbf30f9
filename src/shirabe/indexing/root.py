"""The document root: the folder documents are known by where they live below.

The first ingest records it (in the control settings kept with the accounts, so every process
of one index sees the same root); only ``shirabe root`` moves it. A server's uploads have an
area of their own, never walked as part of the root.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from pathlib import Path

from shirabe.access.accounts import Accounts
from shirabe.errors import ShirabeError
from shirabe.indexing.places import common_root, place_of
from shirabe.text.paths import readable_path

log = logging.getLogger(__name__)

DOCUMENT_ROOT = "document_root"
"""The control setting that holds the document root."""
CACHE_SECONDS = 5.0
"""How long the document root read from the database is trusted (another process can move
it with ``shirabe root``, which then re-ingests)."""


class DocumentRoot:
    """The recorded document root of one index, and the uploads area beside it."""

    def __init__(self, accounts: Accounts, uploads: Path) -> None:
        self._accounts = accounts
        self.uploads = uploads
        self._read: tuple[float, Path | None] | None = None

    @property
    def path(self) -> Path | None:
        """The recorded root; None before anything was ingested."""
        now = time.monotonic()
        if self._read is None or now - self._read[0] > CACHE_SECONDS:
            value = self._accounts.control(DOCUMENT_ROOT)
            self._read = (now, Path(value) if value else None)
        return self._read[1]

    def claim(self, paths: Sequence[Path]) -> Path | None:
        """The root an ingest of ``paths`` runs under, recorded now from ``paths`` if nothing
        was ingested before. Paths in the uploads area are refused: the server ingests them,
        with the readers of their own place."""
        for path in paths:
            if place_of(path, self.uploads) is not None:
                raise ShirabeError(
                    f"{path} is in the uploads folder {self.uploads}: uploads are ingested by "
                    "the server, with the readers of their own place"
                )
        root = self.path
        if root is None and paths:
            first = common_root(paths)
            if first is None:
                raise ShirabeError(f"{paths[0]}: no such file or folder")
            root = Path(self._accounts.claim_control(DOCUMENT_ROOT, readable_path(first)))
            self._read = None
            log.info("document root: %s (recorded by this first ingest)", root)
        return root

    def record(self, folder: Path) -> tuple[str, str]:
        """Make ``folder`` the recorded root; the root it replaces (``None`` if none) and the
        new one, as text."""
        old, new = str(self.path), readable_path(folder)
        self._accounts.set_control(DOCUMENT_ROOT, new)
        self._read = None
        return old, new

    def key_of(self, path: Path | str) -> str:
        """The key a file is (or would be) stored under."""
        root = self.path
        place = place_of(path, root) if root is not None else None
        return place.key if place is not None else readable_path(path)
