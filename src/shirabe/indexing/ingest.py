"""Incremental ingestion: walk folders, skip what is unchanged, replace what changed."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from shirabe.access.map import AccessMap
from shirabe.chunking.protocol import Chunker
from shirabe.embedders.protocol import Embedder
from shirabe.indexing.passages import chunk_terms, embedding_key, embedding_texts
from shirabe.indexing.tags import CATEGORY, ENTITIES, GROUPS, TAGS_VERSION, category_of, groups_json
from shirabe.loaders.protocol import LoadError, LoadOptions
from shirabe.loaders.registry import loader_for, supported_extensions
from shirabe.loaders.worker import TimedLoader
from shirabe.records import Chunk, Document, FileOutcome, FileResult, IngestReport, SourceInfo
from shirabe.stores.protocol import IndexedChunk, SourceRecord, Store
from shirabe.text.synonyms import Synonyms
from shirabe.tokenizers.protocol import Tokenizer

log = logging.getLogger(__name__)

REFRESH_EVERY_SECONDS = 60.0

_TEMP_SUFFIXES = ("~", ".tmp", ".temp", ".swp", ".swo", ".bak", ".part", ".crdownload")


def is_ignored(name: str) -> bool:
    """Hidden files, Office lock files (``~$x.docx``) and editor or download leftovers."""
    return (
        name.startswith((".", "~$", "#"))
        or name.endswith(_TEMP_SUFFIXES)
        or name in {"Thumbs.db", "desktop.ini"}
    )


def walk(root: Path) -> Iterator[Path]:
    """Supported files below ``root`` in sorted order; symlinked folders are followed once."""
    extensions = supported_extensions()
    seen: set[tuple[int, int]] = set()

    def visit(folder: Path) -> Iterator[Path]:
        try:
            st = folder.stat()
        except OSError as exc:
            log.warning("cannot read folder %s: %s", folder, exc)
            return
        if (st.st_dev, st.st_ino) in seen:
            log.warning("skipping %s: symlink loop", folder)
            return
        seen.add((st.st_dev, st.st_ino))
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            log.warning("cannot list folder %s: %s", folder, exc)
            return
        for entry in entries:
            if is_ignored(entry.name):
                continue
            path = Path(entry.path)
            try:
                if entry.is_dir():
                    yield from visit(path)
                elif entry.is_file() and path.suffix.lower() in extensions:
                    yield path
            except OSError as exc:
                log.warning("skipping %s: %s", path, exc)

    yield from visit(root)


def source_path(path: Path) -> str:
    """The key a file is stored under: absolute, symlinks kept as the user named them."""
    return os.path.abspath(path)


def fingerprint(path: Path, data: bytes) -> SourceRecord:
    st = path.stat()
    return SourceRecord(
        path=source_path(path),
        sha256=hashlib.sha256(data).hexdigest(),
        size=st.st_size,
        mtime=st.st_mtime,
    )


@dataclass(frozen=True, slots=True)
class IngestEvent:
    """Progress: ``scan`` once the file list is known, then one ``file`` event per file."""

    kind: Literal["scan", "file", "index", "done"]
    done: int = 0
    total: int = 0
    result: FileResult | None = None


Progress = Callable[[IngestEvent], None]


class Ingestor:
    """Brings the store in line with a set of files and folders."""

    def __init__(
        self,
        *,
        store: Store,
        chunker: Chunker,
        tokenizer: Tokenizer,
        embedder: Embedder,
        sentence_vectors: bool,
        max_file_bytes: int,
        refresh_every_files: int = 200,
        load_options: LoadOptions | None = None,
        load_timeout: float | None = None,
        synonyms: Synonyms | None = None,
        access: AccessMap | None = None,
    ) -> None:
        self._store = store
        self._chunker = chunker
        self._tokenizer = tokenizer
        self._embedder = embedder
        self._sentence_vectors = sentence_vectors
        self._max_file_bytes = max_file_bytes
        self._refresh_every_files = refresh_every_files
        self._loader = TimedLoader(load_options or LoadOptions(), load_timeout)
        self._synonyms = synonyms or Synonyms()
        self._access = access or AccessMap()
        self._tags_version = f"{self._synonyms.signature}:{self._access.signature}"
        self._groups: tuple[str, ...] | None = None

    def run(
        self,
        paths: Sequence[Path],
        progress: Progress | None = None,
        *,
        groups: Sequence[str] | None = None,
        root: Path | None = None,
    ) -> IngestReport:
        """Ingest ``paths``; ``groups``, when given, are the readers of every file of this run
        instead of what the access map says (uploads). Files named one by one take their
        category from ``root`` when it is given."""
        self._groups = tuple(groups) if groups is not None else None
        started = time.perf_counter()
        notify = progress or (lambda _event: None)
        report = IngestReport()
        files: list[Path] = []
        roots: dict[Path, Path] = {}
        for given in paths:
            if given.is_dir():
                for path in walk(given):
                    files.append(path)
                    roots[path] = given
            elif given.is_file():
                files.append(given)
                if root is not None and given.is_relative_to(root):
                    roots[given] = root
            elif self._store.get_source(source_path(given)) is None:
                report.files.append(
                    FileResult(str(given), "failed", reason="no such file or directory")
                )
        removed = self._removed(paths, {source_path(f) for f in files})
        notify(IngestEvent("scan", 0, len(files)))
        last_refresh, since_refresh, changed = time.monotonic(), 0, 0
        for done, path in enumerate(files, start=1):
            result = self.process(path, roots.get(path))
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
        for gone in removed:
            if self._store.remove_source(gone):
                report.files.append(FileResult(gone, "removed"))
        self._loader.close()
        notify(IngestEvent("index", len(files), len(files)))
        self._store.refresh()
        if changed >= self._refresh_every_files:
            self._store.optimize()  # many intermediate segments: merge them once
        report.seconds = time.perf_counter() - started
        self._store.record_ingest(report)
        notify(IngestEvent("done", len(files), len(files)))
        return report

    def _removed(self, roots: Sequence[Path], present: set[str]) -> list[str]:
        """Indexed files under the given roots that are no longer on disk."""
        gone: list[str] = []
        for root in roots:
            if root.is_file():
                continue
            for info in self._store.list_sources(under=source_path(root)):
                if info.path not in present and not Path(info.path).is_file():
                    gone.append(info.path)
        return sorted(set(gone))

    def _current(self, previous: SourceInfo, category: str | None) -> bool:
        """Whether an unchanged file's tags still hold: same synonyms and access map, same
        category."""
        metadata = previous.metadata
        if metadata.get(TAGS_VERSION) != self._tags_version:
            return False
        if self._groups is not None and metadata.get(GROUPS) != groups_json(self._groups):
            return False
        return category is None or metadata.get(CATEGORY) == category

    def _tags(
        self, key: str, document: Document, category: str | None, relative: str
    ) -> dict[str, str]:
        tags = dict(document.metadata)
        if category is not None:
            tags[CATEGORY] = category
        if self._synonyms:
            texts = [key, document.title or "", *(part.text for part in document.parts)]
            names = sorted(self._synonyms.find_all(texts))
            tags[ENTITIES] = json.dumps(names, ensure_ascii=False)
        groups = self._groups if self._groups is not None else self._access.groups_for(relative)
        tags[GROUPS] = groups_json(groups)
        tags[TAGS_VERSION] = self._tags_version
        return tags

    def process(self, path: Path, root: Path | None = None) -> FileResult:
        """Index one file; any failure is recorded against the file and never raised.

        ``root`` is the folder given to the run that the file was found under: its category
        and the path the access map matches are taken relative to it.
        """
        category = category_of(path, root) if root is not None else None
        relative = path.relative_to(root).as_posix() if root is not None else path.name
        key = source_path(path)
        try:
            size = path.stat().st_size
            if size > self._max_file_bytes:
                return self._fail(
                    path, f"file too large ({size:,} bytes; limit {self._max_file_bytes:,})"
                )
            data = path.read_bytes()
            record = fingerprint(path, data)
        except OSError as exc:
            return self._fail(path, exc.strerror or str(exc))
        previous = self._store.get_source(key)
        if (
            previous is not None
            and previous.status == "ok"
            and previous.sha256 == record.sha256
            and self._current(previous, category)
        ):
            if previous.mtime != record.mtime or previous.size != record.size:
                self._store.touch_source(record)
            return FileResult(key, "unchanged", chunks=previous.chunks)
        if loader_for(path) is None:
            return self._fail(path, f"unsupported file type {path.suffix or '(none)'}", record)
        try:
            document = self._loader.load(path)
            chunks = self._chunker.chunk(document)
            indexed = self._index(chunks)
        except LoadError as exc:
            return self._fail(path, exc.reason, record)
        except Exception as exc:  # a broken file must never stop the run
            log.exception("failed to ingest %s", path)
            return self._fail(path, f"{type(exc).__name__}: {exc}", record)
        if not indexed:
            return self._fail(path, "no text found", record)
        warnings = tuple(document.warnings)
        self._store.replace_source(
            replace(
                record,
                metadata=self._tags(key, document, category, relative),
                warnings=warnings,
            ),
            indexed,
        )
        outcome: FileOutcome = (
            "updated" if previous is not None and previous.chunks > 0 else "added"
        )
        return FileResult(key, outcome, chunks=len(indexed), warnings=warnings)

    def _fail(self, path: Path, reason: str, record: SourceRecord | None = None) -> FileResult:
        key = source_path(path)
        if record is None:
            record = SourceRecord(path=key, sha256="", size=0, mtime=0.0)
        self._store.record_failure(record, reason)
        log.info("%s: %s", path, reason)  # the report lists it; no duplicate on stderr
        return FileResult(key, "failed", reason=reason)

    def _index(self, chunks: Sequence[Chunk]) -> list[IndexedChunk]:
        texts = [embedding_texts(c, sentences=self._sentence_vectors) for c in chunks]
        keys = [[embedding_key(t) for t in ts] for ts in texts]
        model = self._embedder.name
        cached = self._store.get_embeddings(model, [k for ks in keys for k in ks])
        missing: dict[str, str] = {}
        for ts, ks in zip(texts, keys, strict=True):
            for t, k in zip(ts, ks, strict=True):
                if k not in cached:
                    missing[k] = t
        if missing:
            vectors = self._embedder.embed_passages(list(missing.values()))
            self._store.put_embeddings(model, dict(zip(missing, vectors, strict=True)))
        indexed = []
        for chunk, ks in zip(chunks, keys, strict=True):
            tokens, sentence_tokens = chunk_terms(chunk, self._tokenizer.tokenize)
            indexed.append(
                IndexedChunk(
                    chunk=chunk, tokens=tokens, vector_keys=ks, sentence_tokens=sentence_tokens
                )
            )
        return indexed
