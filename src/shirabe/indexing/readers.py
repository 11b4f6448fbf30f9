"""Who reads the indexed documents, place by place, and what another access map would change.

A document's readers are the groups the access map gives its place: below the document root,
or, for an upload, below the uploads area. A link the ingest did not follow has no readers
whatever the map says (admins only), so no map decides it.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

from shirabe.access.map import AccessMap
from shirabe.indexing.places import place_of
from shirabe.indexing.root import DocumentRoot
from shirabe.records import AccessPreview, GroupChange, PlaceReaders, ReaderChange, SourceInfo
from shirabe.stores.protocol import Store
from shirabe.text.paths import readable_path

NOT_FOLLOWED = "symbolic link"
"""Words that begin the failure of every link the ingest did not follow (``indexing.walk``)."""


def _not_followed(source: SourceInfo) -> bool:
    error = (source.error or "").lower()
    return source.status != "ok" and not source.groups and NOT_FOLLOWED in error


def preview(
    documents: list[tuple[SourceInfo, str]], access: AccessMap, *, limit: int | None = None
) -> AccessPreview:
    """What ``access`` would do to ``documents`` (each with its path below its area): the
    documents whose readers change (the first ``limit`` of them, by key), and per group the
    documents it gains and loses. Pure: the same documents and map give the same answer."""
    changes: list[ReaderChange] = []
    gains: Counter[str] = Counter()
    losses: Counter[str] = Counter()
    changed = 0
    for source, relative in sorted(documents, key=lambda found: found[0].path):
        before, after = tuple(source.groups), access.groups_for(relative)
        if set(before) == set(after):
            continue
        changed += 1
        if limit is None or len(changes) < limit:
            changes.append(ReaderChange(source.path, before, after))
        gains.update(set(after) - set(before))
        losses.update(set(before) - set(after))
    groups = [
        GroupChange(name, gains[name], losses[name]) for name in sorted(set(gains) | set(losses))
    ]
    return AccessPreview(changes, groups, len(documents), changed)


class Readers:
    """The readers of one index's documents, by place, now and under another map."""

    def __init__(self, store: Store, root: DocumentRoot) -> None:
        self._store = store
        self._root = root

    def documents(self) -> list[tuple[SourceInfo, str]]:
        """Every document the access map decides the readers of, with its path below the
        uploads area or the document root (what the map's globs match)."""
        return [(source, relative) for source, relative, _area in self._placed()]

    def _placed(self) -> list[tuple[SourceInfo, str, Path]]:
        """:meth:`documents`, each with the area it lies in."""
        found = []
        areas = [self._root.uploads, *([self._root.path] if self._root.path else [])]
        for source in self._store.list_sources():
            if _not_followed(source):
                continue
            for area in areas:
                place = place_of(source.path, area)
                if place is not None:
                    found.append((source, place.relative, area))
                    break
        return found

    def places(self) -> list[PlaceReaders]:
        """Each top-level folder of the root and of the uploads area (files directly in the
        root make a place of their own: the root), with the readers its documents have now."""
        counts: dict[str, Counter[tuple[str, ...]]] = {}
        for source, relative, area in self._placed():
            head, sep, _rest = relative.partition("/")
            folder = os.path.join(readable_path(area), head) if sep else readable_path(area)
            counts.setdefault(folder, Counter())[tuple(sorted(source.groups))] += 1
        return [
            PlaceReaders(place, sum(found.values()), sorted(found.items()))
            for place, found in sorted(counts.items())
        ]

    def preview(self, access: AccessMap, *, limit: int | None = None) -> AccessPreview:
        """What saving ``access`` would do to the readers of the indexed documents."""
        return preview(self.documents(), access, limit=limit)
