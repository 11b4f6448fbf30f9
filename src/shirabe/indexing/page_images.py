"""The PDF page a passage comes from, as an image with the passage marked, so that a reader
can check a citation against the page itself."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path

from shirabe.errors import ChangedFileError, NoPageError
from shirabe.loaders.pdfpage import probes, render_page
from shirabe.loaders.protocol import LoadOptions
from shirabe.records import Chunk, SourceInfo


class PageImages:
    """Renders the page of a passage already found readable (by the catalog)."""

    def __init__(self, passwords: Mapping[str, str]) -> None:
        self._options = LoadOptions(passwords=dict(passwords))

    def render(self, chunk: Chunk, source: SourceInfo) -> bytes:
        """The page of ``chunk`` as PNG bytes. A passage that is not on a PDF page is a
        :class:`NoPageError`; a file changed since it was indexed a :class:`ChangedFileError`;
        a page that cannot be drawn a :class:`~shirabe.errors.PageImageError`."""
        page = chunk.locator.get("page")
        if not source.path.lower().endswith(".pdf") or not isinstance(page, int):
            raise NoPageError(f"passage {chunk.id} is not on a PDF page")
        path = Path(source.path)
        if not path.is_file() or _sha256(path) != source.sha256:
            raise ChangedFileError(f"{source.path} changed since it was indexed", source.path)
        password = self._options.password_for(path)
        return render_page(source.path, page, probes(chunk.text), password=password)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
