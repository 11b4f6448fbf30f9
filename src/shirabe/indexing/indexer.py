"""The index's files: ingesting folders, moving the document root, removing files.

Every path lies below the index's document root (the first ingest records it); a document's
key, category and readers come from where it lives there. Uploads, replacements, deletions,
changed readers and a moved root are written to the audit log.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from shirabe.access.accounts import Accounts
from shirabe.access.audit import AuditWriter
from shirabe.errors import ShirabeError
from shirabe.indexing.ingest import Ingestor
from shirabe.indexing.places import common_root, place_of
from shirabe.indexing.root import DocumentRoot
from shirabe.indexing.runs import Runs
from shirabe.indexing.spread import SpreadIngest
from shirabe.records import Chunk, Document, FileResult, IngestReport, Progress
from shirabe.stores.protocol import Store

REREAD = "reread"
"""The audit log's action for a file or folder read again on request (its detail: the counts)."""

MakeIngestor = Callable[[Path, Sequence[Path], AuditWriter], Ingestor]
"""An ingest below a root, never below the paths to skip, reporting to an audit writer."""

MakeSpread = Callable[[Path, Sequence[Path], AuditWriter, int], SpreadIngest]
"""An ingest below a root, never below the paths to skip, reporting to an audit writer,
spread over worker processes with a number of local ones."""


class Indexer:
    """Ingests, re-roots and removes the files of one index."""

    def __init__(
        self,
        store: Callable[[], Store],
        root: DocumentRoot,
        accounts: Accounts,
        make: MakeIngestor,
        spread: MakeSpread | None = None,
    ) -> None:
        """``store`` gives the store checked against the embedding model and tokenizer;
        ``spread`` spreads an ingest over worker processes."""
        self._store = store
        self._root = root
        self._accounts = accounts
        self._make = make
        self._spread = spread
        self.runs = Runs()
        """The runs under way in this process."""

    def ingest(
        self,
        paths: Sequence[Path | str],
        progress: Progress | None = None,
        *,
        area: Path | None = None,
        uploader: str | None = None,
        rejected: Sequence[tuple[Path, str]] = (),
        actor: str | None = None,
        workers: int = 0,
    ) -> IngestReport:
        """Add new files, replace changed ones, drop deleted ones under ``paths``. ``area`` is
        another root for this run (a server's uploads folder); ``uploader`` names who uploaded
        the files and ``rejected`` lists uploads refused before the run, recorded as failures;
        the audit log names ``actor`` (default: the local user). With ``workers``, the files
        are read and embedded by that many worker processes (and any others that join the
        run, :mod:`shirabe.indexing.spread`)."""
        given = [Path(p) for p in paths]
        if workers and (area is not None or uploader is not None or rejected):
            raise ShirabeError("uploads and a new root are ingested by one process, not workers")
        root = area if area is not None else self._root.claim(given)
        if root is None:
            return IngestReport()
        audit = AuditWriter(self._accounts, actor)
        if workers:
            if self._spread is None:
                raise ShirabeError("this index cannot spread an ingest over workers")
            spread = self._spread(root, self._skip(area), audit, workers)
            with self.runs.run(audit.actor, progress) as run, self._store().updating():
                run.started()
                return spread.run(given, run)
        ingestor = self._ingestor(root, area, audit)
        with self.runs.run(audit.actor, progress) as run, self._store().updating():
            run.started()
            return ingestor.run(given, run, uploader=uploader, rejected=rejected)

    def reread(
        self, key: str, progress: Progress | None = None, *, actor: str | None = None
    ) -> IngestReport:
        """Ingest again the file or folder at ``key`` (a key of the index, or a folder
        below the document root or the uploads area): an upload in the uploads area, the rest
        below the root. A file that is gone leaves the index. Audited, with the counts."""
        path = Path(key)
        area = self._root.uploads if place_of(path, self._root.uploads) is not None else None
        report = self.ingest([path], progress, area=area, actor=actor)
        done = ", ".join(f"{outcome} {n}" for outcome, n in report.counts.items() if n)
        AuditWriter(self._accounts, actor)(REREAD, key, done or "no files")
        return report

    def retag(
        self, keys: Sequence[str], progress: Progress | None = None, *, actor: str | None = None
    ) -> IngestReport:
        """Read the documents at ``keys`` again under the access map in effect (their
        passages' embeddings come from the cache: nothing is embedded again); uploads in
        their area, the rest below the root. One report of both."""
        uploads = [k for k in keys if place_of(k, self._root.uploads) is not None]
        others = [k for k in keys if k not in set(uploads)]
        report = IngestReport()
        if others:
            report = self.ingest(others, progress, actor=actor)
        if uploads:
            done = self.ingest(uploads, progress, area=self._root.uploads, actor=actor)
            report.files += done.files
            report.seconds += done.seconds
        return report

    def move_root(
        self, folder: Path | str, progress: Progress | None = None, *, actor: str | None = None
    ) -> IngestReport:
        """Make ``folder`` the document root: it is ingested with every document re-tagged from
        its place below it (key, category, readers), documents outside it leave, and only then
        is the root recorded (in the audit log too). Uploads keep their own area."""
        folder = Path(folder)
        if not folder.is_dir():
            raise ShirabeError(f"{folder}: no such folder")
        report = self.ingest([folder], progress, area=folder, actor=actor)
        outside = [
            info.path
            for info in self._store().list_sources()
            if place_of(info.path, folder) is None
            and place_of(info.path, self._root.uploads) is None
        ]
        gone = self._remove(outside, actor, "outside the new root")
        report.files += [FileResult(key, "removed") for key in gone]
        old, new = self._root.record(folder)
        AuditWriter(self._accounts, actor)("root", new, f"{old} -> {new}")
        return report

    def remove(self, path: Path | str, *, actor: str | None = None) -> int:
        """Drop a file, or every file under a folder, from the index (an upload's file too:
        it has no other home). Returns how many."""
        store = self._store()
        key = path if isinstance(path, str) and store.get_source(path) else self._root.key_of(path)
        keys = [key] + [info.path for info in store.list_sources(under=key)]
        return len(self._remove(keys, actor))

    def remove_failed(self, key: str | None = None, *, actor: str | None = None) -> list[str]:
        """Drop the failed entry at ``key``, or every failed entry (a failed upload's file
        too); the keys dropped. A file in the folders that still fails comes back with the
        next ingest of its folder: fix it or delete it there."""
        store = self._store()
        failed = {s.path: s for s in store.list_sources() if s.status != "ok"}
        if key is not None:
            if key not in failed:
                raise ShirabeError(f"{key}: not a failed document")
            failed = {key: failed[key]}
        return self._remove(list(failed), actor, "failed entry removed")

    def documents(self, paths: Sequence[Path | str]) -> Iterator[tuple[str, Document, list[Chunk]]]:
        """Each file under ``paths`` as an ingest would read it (loaded, and its passages),
        without embedding or storing anything."""
        given = [Path(p) for p in paths]
        root = self._root.path or common_root(given)  # an estimate records no root
        if root is not None:
            yield from self._ingestor(root, None, AuditWriter(self._accounts)).documents(given)

    def _ingestor(self, root: Path, area: Path | None, audit: AuditWriter) -> Ingestor:
        return self._make(root, self._skip(area), audit)

    def _skip(self, area: Path | None) -> list[Path]:
        """The folders an ingest of ``area`` (None: below the root) never reads."""
        uploads = self._root.uploads
        return [] if area == uploads else [uploads]

    def _remove(self, keys: Sequence[str], actor: str | None, why: str = "removed") -> list[str]:
        """Drop the files of ``keys``, each in the audit log; the keys that were indexed."""
        audit, store, removed = AuditWriter(self._accounts, actor), self._store(), []
        with store.updating():
            for key in dict.fromkeys(keys):
                if store.remove_source(key):
                    removed.append(key)
                    audit("delete", key, why)
                    if place_of(key, self._root.uploads) is not None:
                        Path(key).unlink(missing_ok=True)  # else the next start reads it again
            store.refresh()
        return removed
