"""Incremental ingestion: walk folders, skip what is unchanged, replace what changed."""

from __future__ import annotations

import errno
import json
import logging
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from shirabe.errors import OutsideRootError, ReaderUnavailableError, StoreError
from shirabe.indexing.cleanup import shares
from shirabe.indexing.parts import IngestOptions, IngestParts, ingest_signature
from shirabe.indexing.passages import (
    chunk_terms,
    pool,
    rewrite_text,
    vector_plan,
    with_rewrite,
)
from shirabe.indexing.places import Place, place_of
from shirabe.indexing.reading import SWAPPED, fingerprint, named, opened, private_copy
from shirabe.indexing.tags import ENTITIES, RESERVED, TAGS_VERSION, groups_json, tags_version
from shirabe.indexing.walk import escape, on_disk, walk
from shirabe.loaders.protocol import LoadError
from shirabe.loaders.registry import loader_for
from shirabe.loaders.worker import TimedLoader
from shirabe.records import (
    CATEGORY,
    GROUPS,
    UPLOADED_BY,
    Chunk,
    Document,
    FileOutcome,
    FileResult,
    IngestEvent,
    IngestReport,
    Progress,
    SourceInfo,
)
from shirabe.stores.protocol import IndexedChunk, SourceRecord, Store

log = logging.getLogger(__name__)

REFRESH_EVERY_SECONDS = 60.0


Change = Callable[[str, str, str], None]
"""Told of each change to a document that the audit log keeps: action, key, detail."""


@dataclass(frozen=True, slots=True)
class _Read:
    """A file's bytes as read, their fingerprint, and what the index held of it before."""

    data: bytes
    record: SourceRecord
    previous: SourceInfo | None


class Ingestor:
    """Brings the store in line with a set of files and folders below one root: the index's
    document root, or the server's uploads folder."""

    def __init__(
        self,
        parts: IngestParts,
        options: IngestOptions,
        *,
        root: Path,
        skip: Sequence[Path] = (),
        on_change: Change | None = None,
    ) -> None:
        """An ingest of files below ``root`` (never below ``skip``), reporting uploads,
        replacements, deletions and changed readers to ``on_change``."""
        self._store = parts.store
        self._chunker = parts.chunker
        self._tokenizer = parts.tokenizer
        self._embedder = parts.embedder
        self._sentence_vectors = options.sentence_vectors
        self._pooled_chunk_vectors = options.pooled_chunk_vectors
        self._max_file_bytes = options.max_file_bytes
        self._root = root
        self._refresh_every_files = options.refresh_every_files
        self._loader = TimedLoader(options.load_options, options.load_timeout, options.load_total)
        self._synonyms = parts.synonyms
        self._access = parts.access
        self._on_change = on_change or (lambda _action, _key, _detail: None)
        self._enricher = parts.enricher
        self._cleaner = parts.cleaner
        self.signature = ingest_signature(parts, options)
        """How this ingest indexes files (:func:`ingest_signature`)."""
        self.embedding_seconds = 0.0
        """Seconds spent embedding passages so far."""
        self._uploader: str | None = None
        self._skip = list(skip)

    def place(self, path: Path) -> Place:
        """Where ``path`` lives below the root; an error for a path outside it."""
        found = place_of(path, self._root)
        if found is None:
            raise OutsideRootError(path, self._root)
        return found

    @property
    def store(self) -> Store:
        return self._store

    @property
    def root(self) -> Path:
        """The folder documents are known by where they live below."""
        return self._root

    @property
    def skip(self) -> list[Path]:
        """The folders below which nothing is read (the uploads area)."""
        return list(self._skip)

    def run(
        self,
        paths: Sequence[Path],
        progress: Progress | None = None,
        *,
        uploader: str | None = None,
        rejected: Sequence[tuple[Path, str]] = (),
    ) -> IngestReport:
        """Ingest ``paths`` (all below the root); ``uploader`` names who uploaded them, and
        ``rejected`` are files refused before this run (uploads) to record as failures."""
        self._uploader = uploader
        started = time.perf_counter()
        notify = progress or (lambda _event: None)
        report = IngestReport()
        for path, reason in rejected:
            report.files.append(self.fail(self.place(path), reason))
        files = self.scan(paths, report)
        notify(IngestEvent("scan", 0, len(files)))
        try:
            with self._store.loading():
                changed = self._process_all(files, report, notify)
                # the search indexes are built next: at the end of a bulk load, or by refresh()
                notify(IngestEvent("index", len(files), len(files)))
        finally:
            self.close()  # also when the store fails midway: no worker left behind
        self.conclude(report, changed, started, notify, len(files))
        return report

    def scan(self, paths: Sequence[Path], report: IngestReport) -> list[tuple[Path, Place]]:
        """The files to read under ``paths`` (all below the root), each with its place. What
        cannot be read or is a link not followed goes in ``report`` as a failure, and what
        is gone from the folders leaves the index (reported as removed) first."""
        placed = [(given, self.place(given)) for given in paths]  # all below the root first
        files: list[tuple[Path, Place]] = []
        problems: list[tuple[Place, str]] = []
        refused: list[tuple[Place, str]] = []  # links not followed: for admins only
        for given, place in placed:
            try:
                if os.path.lexists(given) and (why := escape(given, self._root, self._skip)):
                    refused.append((place, why))
                elif given.is_dir():
                    found, met, links = self._walk(given)
                    files.extend((f, place.child(f.relative_to(given).parts)) for f in found)
                    problems.extend((place.child(p.relative_to(given).parts), r) for p, r in met)
                    refused.extend((place.child(p.relative_to(given).parts), r) for p, r in links)
                elif given.is_file():  # a link into the root is read as its target
                    files.append((Path(os.path.realpath(given)), place))
                elif self._store.get_source(place.key) is None and not self._store.list_sources(
                    under=place.key
                ):  # a file or folder that is gone leaves the index (below); else it is news
                    problems.append((place, "no such file or directory"))
            except OSError as exc:
                problems.append((place, exc.strerror or str(exc)))
        report.files.extend(self.fail(place, reason) for place, reason in problems)
        report.files.extend(self._refuse(place, reason) for place, reason in refused)
        present = {place.key for _path, place in files} | {
            p.key for p, _reason in [*problems, *refused]
        }
        # what is gone leaves first: a renamed file is never listed or cited twice
        for gone in self._removed(placed, present):
            if self._store.remove_source(gone.path):
                report.files.append(FileResult(gone.path, "removed"))
                if gone.status == "ok":  # a failure record had no text to delete
                    self._on_change("delete", gone.path, "the file is gone")
        return files

    def conclude(
        self, report: IngestReport, changed: int, started: float, notify: Progress, total: int
    ) -> None:
        """The end of a run that ``changed`` files and began at ``started`` (``perf_counter``):
        the search indexes caught up (and merged after many changes), the run recorded."""
        self._store.refresh()
        if changed >= self._refresh_every_files:
            self._store.optimize()  # many intermediate segments: merge them once
        report.seconds = time.perf_counter() - started
        self._store.record_ingest(report)
        notify(IngestEvent("done", total, total))

    def close(self) -> None:
        """Stop the process that reads files, if one was started."""
        self._loader.close()

    def documents(self, paths: Sequence[Path]) -> Iterator[tuple[str, Document, list[Chunk]]]:
        """Each readable file under ``paths``, loaded, with its passages, as an ingest would
        make them (nothing is embedded or stored): for estimates before a costly ingest."""
        try:
            for given in paths:
                place, folder = self.place(given), given.is_dir()
                if os.path.lexists(given) and escape(given, self._root, self._skip):
                    continue
                for path in self._walk(given)[0] if folder else [given]:
                    key = place.child(path.relative_to(given).parts).key if folder else place.key
                    try:
                        document = self._loader.load(path)
                        chunks = self._chunker.chunk(document)
                    except Exception:  # a broken file is the ingest's to report
                        continue
                    yield key, document, chunks
        finally:
            self.close()

    def _walk(
        self, folder: Path
    ) -> tuple[list[Path], list[tuple[Path, str]], list[tuple[Path, str]]]:
        """The files below ``folder``, the paths there that cannot be read, and the symbolic
        links not followed (to outside the root, the uploads folder or nothing), with why."""
        met: list[tuple[Path, str]] = []
        links: list[tuple[Path, str]] = []
        found = list(
            walk(
                folder,
                lambda p, r: met.append((p, r)),
                self._skip,
                self._root,
                links=lambda p, r: links.append((p, r)),
            )
        )
        return found, met, links

    def _process_all(
        self, files: Sequence[tuple[Path, Place]], report: IngestReport, notify: Progress
    ) -> int:
        """Process each file, refreshing the search indexes now and then; how many changed."""
        last_refresh, since_refresh, changed = time.monotonic(), 0, 0
        for done, (path, place) in enumerate(files, start=1):
            result = self.process(path, place)
            report.files.append(result)
            notify(IngestEvent("file", done, len(files), result))
            if result.outcome != "unchanged":
                since_refresh += 1
                changed += 1
            if since_refresh >= self._refresh_every_files or (
                since_refresh and time.monotonic() - last_refresh > REFRESH_EVERY_SECONDS
            ):
                self._store.refresh()
                last_refresh, since_refresh = time.monotonic(), 0
        return changed

    def _removed(self, placed: Sequence[tuple[Path, Place]], present: set[str]) -> list[SourceInfo]:
        """Indexed files under the given folders that are no longer on disk."""
        gone: dict[str, SourceInfo] = {}
        for folder, place in placed:
            if folder.is_file():
                continue
            for info in self._store.list_sources(under=place.key):
                if info.path not in present and not on_disk(info.path, self._root):
                    gone[info.path] = info
        return [gone[k] for k in sorted(gone)]

    def _current(self, previous: SourceInfo, category: str | None) -> bool:
        """Whether an unchanged file's tags still hold: same synonyms and access map, same
        category, same uploader."""
        metadata = previous.metadata
        if metadata.get(TAGS_VERSION) != tags_version(previous.path, self.signature):
            return False
        if self._uploader is not None and metadata.get(UPLOADED_BY) != self._uploader:
            return False
        return metadata.get(CATEGORY) == category

    def _place_tags(self, place: Place) -> dict[str, str]:
        """The tags that come from where the file lives: its category and its readers."""
        tags = {GROUPS: groups_json(self._access.groups_for(place.relative))}
        if place.category is not None:
            tags[CATEGORY] = place.category
        return tags

    def _tags(
        self, place: Place, document: Document, previous: SourceInfo | None
    ) -> dict[str, str]:
        tags = {k: v for k, v in document.metadata.items() if k not in RESERVED}
        tags |= self._place_tags(place)
        if self._synonyms:
            texts = [place.key, document.title or "", *(part.text for part in document.parts)]
            names = sorted(self._synonyms.find_all(texts))
            tags[ENTITIES] = json.dumps(names, ensure_ascii=False)
        uploader = self._uploader
        if uploader is None and previous is not None:
            uploader = previous.metadata.get(UPLOADED_BY)
        if uploader is not None:
            tags[UPLOADED_BY] = uploader
        tags[TAGS_VERSION] = tags_version(place.key, self.signature)
        return tags

    def triage(self, path: Path, place: Place) -> FileResult | None:
        """What :meth:`process` would make of the file without loading it: unchanged (its
        new size and time noted), failed or refused before it is read (recorded), or None:
        it must be loaded and indexed."""
        read = self._prepare(path, place)
        return read if isinstance(read, FileResult) else None

    def _prepare(self, path: Path, place: Place) -> FileResult | _Read:
        """The file's bytes and what the index held of it, or the result that leaves nothing
        to load: too large, unreadable, a link, unchanged, of no type a loader reads."""
        key = place.key
        try:
            with os.fdopen(opened(path), "rb") as handle:
                st = os.fstat(handle.fileno())
                if st.st_size > self._max_file_bytes:
                    return self.fail(
                        place,
                        f"file too large ({st.st_size:,} bytes; limit {self._max_file_bytes:,})",
                    )
                data = handle.read()
            record = fingerprint(key, st, data)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return self._refuse(place, SWAPPED)
            return self.fail(place, exc.strerror or str(exc))
        previous = self._store.get_source(key)
        if (
            previous is not None
            and previous.status == "ok"
            and previous.sha256 == record.sha256
            and self._current(previous, place.category)
        ):
            if previous.mtime != record.mtime or previous.size != record.size:
                self._store.touch_source(record)
            return FileResult(key, "unchanged", chunks=previous.chunks)
        if loader_for(path) is None:
            return self.fail(place, f"unsupported file type {path.suffix or '(none)'}", record)
        return _Read(data, record, previous)

    def process(self, path: Path, place: Place | None = None) -> FileResult:
        """Index one file at ``place`` (by default, where it lives below the root); a failure
        to read it is recorded against the file, not raised. A path outside the root
        (:class:`OutsideRootError`) and a failing store (:class:`StoreError`) are raised."""
        place = place or self.place(path)
        key = place.key
        read = self._prepare(path, place)
        if isinstance(read, FileResult):
            return read
        record, previous = read.record, read.previous
        unwritten = self._unwritten()
        copied = ""
        try:
            with private_copy(path, read.data) as copy:
                copied = str(copy)
                document = replace(self._loader.load(copy), path=str(path))
            del read
            chunks = self._chunker.chunk(document)
            rewrites = self._cleaner.rewrites(document) if self._cleaner else {}
            indexed = self._index(chunks, rewrites)
        except LoadError as exc:
            return self.fail(place, named(exc.reason, copied, key), record)
        except (StoreError, ReaderUnavailableError):  # not this file's fault: stop the run
            raise
        except Exception as exc:  # a broken file must never stop the run
            log.exception("failed to ingest %s", key)
            return self.fail(place, named(f"{type(exc).__name__}: {exc}", copied, key), record)
        if not indexed:
            return self.fail(place, "no text found", record)
        warnings = tuple(document.warnings)
        tags = self._tags(place, document, previous)
        if self._unwritten() > unwritten:  # asked again next time
            count = self._unwritten() - unwritten
            warnings += (f"{count} passages or pages not written by the model (it failed)",)
            tags[TAGS_VERSION] += ":incomplete"
        self._store.replace_source(replace(record, metadata=tags, warnings=warnings), indexed)
        self._changed(key, previous, tags)
        outcome: FileOutcome = (
            "updated" if previous is not None and previous.chunks > 0 else "added"
        )
        return FileResult(key, outcome, chunks=len(indexed), warnings=warnings)

    def _changed(self, key: str, previous: SourceInfo | None, tags: dict[str, str]) -> None:
        """Tell the audit log of an upload, a replacement, or readers that changed."""
        if self._uploader is not None:
            self._on_change("upload" if previous is None else "replace", key, tags[GROUPS])
        elif previous is not None and GROUPS in previous.metadata:
            before = previous.metadata[GROUPS]
            if json.loads(before) != json.loads(tags[GROUPS]):
                self._on_change("readers", key, f"{before} -> {tags[GROUPS]}")

    def fail(self, place: Place, reason: str, record: SourceRecord | None = None) -> FileResult:
        """Record a failure with the tags of its place (its readers now); when the document
        was indexed before, its last good text stays, under those readers."""
        if record is None:
            record = SourceRecord(path=place.key, sha256="", size=0, mtime=0.0)
        tags = self._place_tags(place) | {TAGS_VERSION: tags_version(place.key, self.signature)}
        if self._uploader is not None:
            tags[UPLOADED_BY] = self._uploader
        previous = self._store.get_source(place.key)
        self._store.record_failure(replace(record, metadata=tags), reason)
        if previous is not None and self._uploader is None:
            self._changed(place.key, previous, tags)
        log.info("%s: %s", place.key, reason)  # the report lists it; no duplicate on stderr
        return FileResult(place.key, "failed", reason=reason)

    def _refuse(self, place: Place, reason: str) -> FileResult:
        """A symbolic link not followed, recorded for admins only (no group may read it): a
        reader never learns from it whether its target exists. A document that was there
        before leaves, text and all."""
        previous = self._store.get_source(place.key)
        if previous is not None and (previous.chunks or previous.groups):
            self._store.remove_source(place.key)
            if previous.status == "ok":
                self._on_change("delete", place.key, reason)
        record = SourceRecord(path=place.key, sha256="", size=0, mtime=0.0)
        tags = {GROUPS: groups_json(()), TAGS_VERSION: tags_version(place.key, self.signature)}
        self._store.record_failure(replace(record, metadata=tags), reason)
        log.warning("%s: %s", place.key, reason)
        return FileResult(place.key, "failed", reason=reason)

    def _unwritten(self) -> int:
        """Passages and pages the chat model failed to write for, so far."""
        return sum(w.failed for w in (self._enricher, self._cleaner) if w is not None)

    def _index(
        self, chunks: Sequence[Chunk], rewrites: Mapping[int, str] | None = None
    ) -> list[IndexedChunk]:
        """Embed and tokenise ``chunks``; a chunk on a page in ``rewrites`` (page number →
        the model's clean text of a broken PDF page) is also found by that text."""
        pieces = shares(chunks, rewrites or {})
        plans = [
            with_rewrite(
                vector_plan(c, sentences=self._sentence_vectors, pooled=self._pooled_chunk_vectors),
                c,
                piece,
            )
            for c, piece in zip(chunks, pieces, strict=True)
        ]
        model = self._embedder.name
        cached = self._store.get_embeddings(model, [k for p in plans for k in p.keys])
        missing: dict[str, str] = {}
        for plan in plans:
            missing.update((k, t) for k, t in plan.embedded.items() if k not in cached)
        new = {}
        if missing:
            started = time.perf_counter()
            vectors = self._embedder.embed_passages(list(missing.values()))
            self.embedding_seconds += time.perf_counter() - started
            new = dict(zip(missing, vectors, strict=True))
        for plan in plans:
            if plan.pooled and plan.keys[0] not in cached:
                parts = [new[k] if k in new else cached[k] for k in plan.sentence_keys]
                new[plan.keys[0]] = pool(parts, plan.weights)
        if new:
            self._store.put_embeddings(model, new)
        extras = self._enricher.texts(chunks) if self._enricher else [""] * len(chunks)
        indexed = []
        for chunk, plan, extra, piece in zip(chunks, plans, extras, pieces, strict=True):
            tokens, sentence_tokens = chunk_terms(chunk, self._tokenizer.tokenize)
            if piece:  # one more unit: the chunk's part of its page as the model rewrote it
                rewritten = self._tokenizer.tokenize(rewrite_text(chunk, piece))
                units = len(plan.keys) - 2  # the chunk's own units before the rewrite
                own = sentence_tokens if len(sentence_tokens) == units else [list(tokens)]
                sentence_tokens = [*own, rewritten]
                tokens += rewritten
            if extra:  # the model's questions and keywords: lexical side only
                tokens += self._tokenizer.tokenize(extra)
            indexed.append(
                IndexedChunk(
                    chunk=chunk,
                    tokens=tokens,
                    vector_keys=plan.keys,
                    sentence_tokens=sentence_tokens,
                )
            )
        return indexed
