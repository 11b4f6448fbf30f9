"""The embedded store: SQLite (WAL) as the source of truth plus derived on-disk segments."""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

import numpy as np

from shirabe.embedders.protocol import Matrix, Vector
from shirabe.records import Chunk, Filters, IndexStatus, IngestReport, ScoredId, SourceInfo
from shirabe.stores.common import UPDATE_TIMEOUT, check_model, ingest_row, now, source_row
from shirabe.stores.embedded.cache import EmbeddingCache, read_cache
from shirabe.stores.embedded.filters import AllowedIds, add_regexp
from shirabe.stores.embedded.index import SegmentIndex
from shirabe.stores.embedded.locks import schema_lock, update_lock, wal
from shirabe.stores.embedded.rows import (
    INSERT_CHUNK,
    chunk_from_row,
    chunk_row,
    pack_terms,
    source_from_row,
    unpack_terms,
)
from shirabe.stores.embedded.schema import DATABASE, meta_value, migrate, read_generation
from shirabe.stores.embedded.segments import IdArray, SegmentDoc
from shirabe.stores.protocol import MAX_ID, IndexedChunk, Level, SourceRecord

log = logging.getLogger(__name__)

_BATCH = 500


def _ids(ids: Sequence[int] | None) -> IdArray | None:
    return None if ids is None else np.asarray(sorted(set(ids)), dtype=np.int64)


class EmbeddedStore:
    """SQLite holds sources, chunks and the embedding cache; segments hold the search indexes.

    Every write bumps a generation counter in the same transaction; the segment manifest records
    the generation it reflects, so a stale index (after a crash, or while another process
    ingests) is detected and brought up to date by diffing chunk ids.
    """

    ranks_in_process = True

    def __init__(
        self,
        home: Path,
        *,
        k1: float = 1.2,
        b: float = 0.75,
        update_timeout: float = UPDATE_TIMEOUT,
    ) -> None:
        self.home = home
        self.update_timeout = update_timeout
        self.home.mkdir(parents=True, exist_ok=True)
        self.db_path = home / DATABASE
        self._local = threading.local()
        self.cache = EmbeddingCache(self._conn, home)
        self.segments = SegmentIndex(home / "segments", k1=k1, b=b, full_vectors=self._full_vectors)
        self._allowed = AllowedIds()
        self._model: str | None = None
        self._dim: int | None = None
        self._indexed_model: str | None = None  # the model of the vectors segments refer to
        with schema_lock(home):
            migrate(self._conn())

    @staticmethod
    def embedding_cache(home: Path, batch: int = 2000) -> Iterator[tuple[str, dict[str, Vector]]]:
        """The embedding cache of the index in ``home``, in batches of (model, {key: vector}),
        for carrying it into another store without embedding again."""
        return read_cache(home / DATABASE, batch)

    # connections

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.db_path, timeout=30.0, isolation_level=None)
            conn.row_factory = sqlite3.Row
            wal(conn)
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            add_regexp(conn)
            self._local.conn = conn
        return conn

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """A write transaction that also bumps the generation counter."""
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
            conn.execute(
                "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'"
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    @contextlib.contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """A read transaction: one consistent snapshot across several statements."""
        conn = self._conn()
        conn.execute("BEGIN")
        try:
            yield conn
        finally:
            conn.execute("COMMIT")

    # identity

    def bind(self, *, embedding_model: str, embedding_dim: int, tokenizer: str) -> bool:
        conn = self._conn()
        stored_model = meta_value(conn, "embedding_model")
        stored_dim = meta_value(conn, "embedding_dim")
        check_model(
            f"the index in {self.home}",
            stored_model,
            stored_dim,
            embedding_model,
            embedding_dim,
            hint="use another --index directory or the same model",
        )
        stored_tokenizer = meta_value(conn, "tokenizer")
        with self._write() as w:
            w.executemany(
                "INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)",
                [("embedding_model", embedding_model), ("embedding_dim", str(embedding_dim))],
            )
            w.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES ('tokenizer', ?)", (tokenizer,)
            )
        self._model, self._dim = embedding_model, embedding_dim
        has_chunks = conn.execute("SELECT EXISTS (SELECT 1 FROM chunks)").fetchone()[0]
        if stored_tokenizer != tokenizer and has_chunks:
            log.warning("tokenizer changed (%s → %s)", stored_tokenizer, tokenizer)
            return True
        return False

    def retokenize(
        self, terms: Callable[[Chunk], tuple[Sequence[str], Sequence[Sequence[str]]]]
    ) -> None:
        conn = self._conn()
        ids = [r[0] for r in conn.execute("SELECT id FROM chunks ORDER BY id")]
        for i in range(0, len(ids), _BATCH):
            batch = ids[i : i + _BATCH]
            chunks = self.get_chunks(batch)
            rows = []
            for cid in batch:
                tokens, sentences = terms(chunks[cid])
                rows.append((pack_terms(tokens, sentences), cid))
            with self._write() as w:
                w.executemany("UPDATE chunks SET terms = ? WHERE id = ?", rows)
        self.segments.clear()
        self.refresh()

    # sources

    _SOURCE_SELECT = (
        "SELECT s.*, (SELECT COUNT(*) FROM chunks c WHERE c.source_id = s.id) AS chunks "
        "FROM sources s"
    )

    def get_source(self, path: str) -> SourceInfo | None:
        row = self._conn().execute(self._SOURCE_SELECT + " WHERE s.path = ?", (path,)).fetchone()
        return None if row is None else source_from_row(row)

    def get_source_by_id(self, source_id: int) -> SourceInfo | None:
        if not 0 < source_id <= MAX_ID:
            return None  # not an id any row can have (and beyond what the database can compare)
        row = self._conn().execute(self._SOURCE_SELECT + " WHERE s.id = ?", (source_id,)).fetchone()
        return None if row is None else source_from_row(row)

    def list_sources(self, under: str | None = None) -> list[SourceInfo]:
        conn = self._conn()
        if under is None:
            rows = conn.execute(self._SOURCE_SELECT + " ORDER BY s.path").fetchall()
        else:
            prefix = under.rstrip("/") + "/"
            rows = conn.execute(
                self._SOURCE_SELECT
                + " WHERE s.path = ? OR substr(s.path, 1, ?) = ? ORDER BY s.path",
                (under, len(prefix), prefix),
            ).fetchall()
        return [source_from_row(r) for r in rows]

    def _upsert_source(
        self, conn: sqlite3.Connection, source: SourceRecord, status: str, error: str | None
    ) -> int:
        conn.execute(
            """
            INSERT INTO sources (path, sha256, size, mtime, status, error, metadata, ingested_at,
                warnings)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(path) DO UPDATE SET sha256 = excluded.sha256, size = excluded.size,
                mtime = excluded.mtime, status = excluded.status, error = excluded.error,
                metadata = excluded.metadata, ingested_at = excluded.ingested_at,
                warnings = excluded.warnings
            """,
            source_row(source, status, error),
        )
        row = conn.execute("SELECT id FROM sources WHERE path = ?", (source.path,)).fetchone()
        return int(row[0])

    def replace_source(self, source: SourceRecord, chunks: Sequence[IndexedChunk]) -> None:
        with self._write() as conn:
            source_id = self._upsert_source(conn, source, "ok", None)
            conn.execute("DELETE FROM chunks WHERE source_id = ?", (source_id,))
            conn.executemany(INSERT_CHUNK, [chunk_row(source_id, ic) for ic in chunks])

    def record_failure(self, source: SourceRecord, reason: str) -> None:
        with self._write() as conn:
            row = conn.execute(
                "SELECT sha256, size, mtime FROM sources WHERE path = ?", (source.path,)
            ).fetchone()
            if row is None:
                self._upsert_source(conn, source, "failed", reason)
            else:
                # the tags of the failure (its readers now) replace the old ones; the last
                # good text stays searchable under them
                conn.execute(
                    "UPDATE sources SET status = 'failed', error = ?, ingested_at = ?, "
                    "metadata = json_patch(metadata, ?) WHERE path = ?",
                    (reason, now(), json.dumps(dict(source.metadata)), source.path),
                )

    def touch_source(self, source: SourceRecord) -> None:
        with self._write() as conn:
            conn.execute(
                "UPDATE sources SET size = ?, mtime = ? WHERE path = ?",
                (source.size, source.mtime, source.path),
            )

    def remove_source(self, path: str) -> bool:
        with self._write() as conn:
            cur = conn.execute("DELETE FROM sources WHERE path = ?", (path,))
            return cur.rowcount > 0

    # embedding cache

    def get_embeddings(self, model: str, keys: Sequence[str]) -> dict[str, Vector]:
        return self.cache.get(model, keys)

    def put_embeddings(self, model: str, vectors: Mapping[str, Vector]) -> None:
        self.cache.put(model, vectors)

    def _full_vectors(self, slots: IdArray) -> Matrix:
        """The cached vectors at ``slots`` of the index's model, which its segments hold."""
        if self._indexed_model is None:
            self._indexed_model = self._model or meta_value(self._conn(), "embedding_model")
        if self._indexed_model is None:
            raise LookupError(f"the index in {self.home} has no model yet")
        return self.cache.by_slot(self._indexed_model, slots)

    # writers

    def updating(self) -> contextlib.AbstractContextManager[None]:
        """A lock file in the index folder, held for the whole ingest (see the protocol)."""
        return update_lock(self.home, timeout=self.update_timeout)

    def loading(self) -> contextlib.AbstractContextManager[None]:
        """Nothing deferred: the search indexes are rebuilt by :meth:`refresh` anyway."""
        return contextlib.nullcontext()

    # derived indexes

    @contextlib.contextmanager
    def _index_lock(self, *, wait: bool) -> Iterator[bool]:
        lock_path = self.home / "index.lock"
        with lock_path.open("a") as fh:
            flags = fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB)
            try:
                fcntl.flock(fh.fileno(), flags)
            except BlockingIOError:
                yield False
                return
            try:
                yield True
            finally:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)

    def generation(self) -> int:
        return read_generation(self._conn())

    def is_stale(self) -> bool:
        return self.segments.outdated or self.segments.generation != self.generation()

    def refresh(self, *, wait: bool = True) -> None:
        if not self.is_stale():
            return
        with self._index_lock(wait=wait) as locked:
            if not locked:
                log.info("another process is updating the index; searching the previous one")
                return
            if not self.is_stale():
                return
            self._reconcile()

    def optimize(self) -> None:
        with self._index_lock(wait=True):
            self.segments.optimize()

    def _reconcile(self) -> None:
        started = time.perf_counter()
        model, dim = self._model, self._dim
        if model is None or dim is None:
            conn = self._conn()
            model = meta_value(conn, "embedding_model")
            stored_dim = meta_value(conn, "embedding_dim")
            if model is None or stored_dim is None:
                return
            dim = int(stored_dim)
        with self._read() as conn:
            generation = read_generation(conn)
            live = np.fromiter(
                (r[0] for r in conn.execute("SELECT id FROM chunks ORDER BY id")), dtype=np.int64
            )
            # an index of an earlier format is rebuilt whole
            outdated = self.segments.outdated
            indexed = np.zeros(0, np.int64) if outdated else self.segments.indexed_ids()
            to_add = np.setdiff1d(live, indexed)
            to_remove = np.setdiff1d(indexed, live)
            docs = list(self._segment_docs(conn, to_add, model, dim))
        self.segments.apply(generation=generation, dim=dim, add=docs, remove=to_remove)
        log.info(
            "index refreshed to generation %d: +%d −%d chunks in %.2fs",
            generation,
            len(to_add),
            len(to_remove),
            time.perf_counter() - started,
        )

    def _segment_docs(
        self, conn: sqlite3.Connection, ids: IdArray, model: str, dim: int
    ) -> Iterator[SegmentDoc]:
        id_list = [int(i) for i in ids]
        for i in range(0, len(id_list), _BATCH):
            batch = id_list[i : i + _BATCH]
            marks = ",".join("?" * len(batch))
            rows = conn.execute(
                f"SELECT id, terms, vector_keys FROM chunks WHERE id IN ({marks})", batch
            ).fetchall()
            keys = [json.loads(r["vector_keys"]) for r in rows]
            cached = self.cache.get_with_slots(model, [k for ks in keys for k in ks])
            for row, ks in zip(rows, keys, strict=True):
                found = [cached.get(k) for k in ks]
                own = found[0] if found else None
                if own is None:
                    log.warning("chunk %d has no vector; it can only be found by BM25", row["id"])
                    own = (-1, np.zeros(dim, dtype=np.float32))
                sentences = [v for v in found[1:] if v is not None]
                tokens, sentence_tokens = unpack_terms(row["terms"])
                yield SegmentDoc(
                    chunk_id=int(row["id"]),
                    tokens=tokens,
                    vector=own[1],
                    sentence_tokens=sentence_tokens,
                    sentence_vectors=np.vstack([v for _, v in sentences]) if sentences else None,
                    vector_id=own[0],
                    sentence_vector_ids=[i for i, _ in sentences],
                )

    # retrieval

    def search_lexical(
        self,
        terms: Mapping[str, float] | Sequence[str],
        k: int,
        filters: Filters | None = None,
        *,
        level: Level = "chunk",
        within: Sequence[int] | None = None,
    ) -> list[ScoredId]:
        only = _ids(within)
        conn = self._conn()
        # the statistics are those of what the reader may read (the rest of a filter narrows
        # the search, as a folder chosen in the page does, not the collection it scores in)
        access = Filters(groups=filters.groups) if filters and filters.groups is not None else None
        readable = self._allowed.ids(conn, access)
        return self.segments.search_lexical(
            terms, k, self._allowed.ids(conn, filters, only), level=level, within=only,
            readable=readable,
        )  # fmt: skip

    def document_frequencies(self, terms: Sequence[str]) -> dict[str, int]:
        return self.segments.document_frequencies(terms)

    def search_dense(
        self,
        vector: Vector,
        k: int,
        filters: Filters | None = None,
        *,
        level: Level = "chunk",
        within: Sequence[int] | None = None,
    ) -> list[ScoredId]:
        only = _ids(within)
        return self.segments.search_dense(
            vector, k, self._allowed.ids(self._conn(), filters, only), level=level, within=only
        )

    def get_chunks(self, ids: Sequence[int]) -> dict[int, Chunk]:
        conn = self._conn()
        out: dict[int, Chunk] = {}
        unique = list(dict.fromkeys(int(i) for i in ids))
        for i in range(0, len(unique), _BATCH):
            batch = unique[i : i + _BATCH]
            marks = ",".join("?" * len(batch))
            for r in conn.execute(
                f"""
                SELECT c.*, s.path FROM chunks c JOIN sources s ON s.id = c.source_id
                WHERE c.id IN ({marks})
                """,
                batch,
            ):
                out[int(r["id"])] = chunk_from_row(r)
        return out

    def source_chunks(self, path: str) -> list[Chunk]:
        rows = self._conn().execute(
            """
            SELECT c.*, s.path FROM chunks c JOIN sources s ON s.id = c.source_id
            WHERE s.path = ? ORDER BY c.is_summary DESC, c.position, c.id
            """,
            (path,),
        )
        return [chunk_from_row(r) for r in rows]

    # bookkeeping

    def record_ingest(self, report: IngestReport) -> None:
        self._conn().execute(
            "INSERT INTO ingests (finished_at, seconds, added, updated, removed, unchanged, "
            "failed) VALUES (?, ?, ?, ?, ?, ?, ?)",
            ingest_row(report),
        )

    def ingest_runs(self, limit: int = 20) -> list[dict[str, object]]:
        rows = self._conn().execute("SELECT * FROM ingests ORDER BY id DESC LIMIT ?", (limit,))
        return [dict(zip(r.keys(), tuple(r), strict=True)) for r in rows]

    def status(self) -> IndexStatus:
        conn = self._conn()
        files = conn.execute("SELECT COUNT(*) FROM sources WHERE status = 'ok'").fetchone()[0]
        chunks = conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        failed = [
            source_from_row(r)
            for r in conn.execute(
                self._SOURCE_SELECT + " WHERE s.status = 'failed' ORDER BY s.path"
            )
        ]
        last = self.ingest_runs(1)
        dim = meta_value(conn, "embedding_dim")
        size = sum(p.stat().st_size for p in self.home.rglob("*") if p.is_file())
        return IndexStatus(
            files=files,
            chunks=chunks,
            failed=failed,
            embedding_model=meta_value(conn, "embedding_model"),
            embedding_dim=None if dim is None else int(dim),
            index_bytes=size,
            last_ingest=last[0] if last else None,
            home=str(self.home),
        )

    def close(self) -> None:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
