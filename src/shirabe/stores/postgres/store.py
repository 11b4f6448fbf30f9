"""The server store: PostgreSQL with pgvector, for teams sharing one index.

Everything lives in the database and is searched there:

- sources, chunks and the embedding cache, as in the embedded store (this module; a file's
  rows are written by ``writes.py``);
- BM25 over the same Japanese terms: each term's chunk postings packed in blocks, and per-level
  statistics kept in the same transactions (``lexical.py``, ``blocks.py``, ``compaction.py``),
  searched by ``search.py``;
- dense vectors in pgvector with HNSW cosine indexes, searched exactly instead when a filter
  leaves few enough chunks (``dense.py``);
- filters (folders, categories, names, access groups) applied in SQL before ranking
  (``filters.py``); the numbered migrations are in ``schema.py``.

Each file's replacement is one transaction, so readers see whole files only, and any number of
processes can read and write one database.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from shirabe.embedders.protocol import Vector
from shirabe.records import Chunk, Filters, IndexStatus, IngestReport, ScoredId, SourceInfo
from shirabe.stores.common import UPDATE_TIMEOUT, check_model, ingest_row
from shirabe.stores.postgres import bulk, cache, compaction, dense, lexical, search, writes
from shirabe.stores.postgres.connections import (
    WriteClock,
    advisory_lock,
    configure_connection,
    guarded,
)
from shirabe.stores.postgres.rows import chunk_from_row, source_from_row
from shirabe.stores.postgres.schema import WRITE_LOCK, migrate
from shirabe.stores.protocol import MAX_ID, IndexedChunk, Level, SourceRecord
from shirabe.text.terms import as_weights

log = logging.getLogger(__name__)

_BATCH = 1000

INGEST_LOCK = WRITE_LOCK + 1
"""Held (per session, on a connection of its own) by an ingest for its whole run."""


class PostgresStore:
    """The store Protocol on PostgreSQL + pgvector (see the module docstring)."""

    ranks_in_process = False  # the lexical search runs in the database, beside the model

    def __init__(
        self,
        url: str,
        *,
        k1: float = 1.2,
        b: float = 0.75,
        pool_size: int = 8,
        hnsw: dense.HnswSearch | None = None,
        read_url: str | None = None,
        update_timeout: float = UPDATE_TIMEOUT,
        build_memory: str = "1GB",
    ) -> None:
        """``read_url``: a read replica of ``url``; searches and chunk reads go there, writes
        and the ingest's own reads to ``url``. A replica lags its primary by its replication
        delay (milliseconds on a LAN), so a file just ingested may take that long to show."""
        import psycopg
        from psycopg_pool import ConnectionPool

        self.url = url
        self.k1, self.b = k1, b
        self.hnsw = hnsw or dense.HnswSearch()
        self.update_timeout = update_timeout
        self.build_memory = build_memory
        self._bulk = False  # within a bulk load (loading()): statistics are counted at its end
        migrate(url)

        self._claimed = threading.local()  # a worker's claim: its connection and clock

        def configure(conn: psycopg.Connection[Any]) -> None:
            configure_connection(conn)
            conn.autocommit = True

        self._pool = ConnectionPool(
            url, min_size=1, max_size=pool_size, configure=configure, open=True, timeout=60
        )
        self.read_url = read_url
        self._read_pool = self._pool
        if read_url:
            migrate(read_url)  # on a replica: checks that its schema is this version
            self._read_pool = ConnectionPool(
                read_url, min_size=1, max_size=pool_size, configure=configure, open=True
            )
        # the index's model, fixed once bound: read once, not on every write or search
        with self._conn() as conn:
            self._model = self._meta(conn, "embedding_model")
            dim = self._meta(conn, "embedding_dim")
        self._dim = None if dim is None else int(dim)

    # connections

    @contextmanager
    def _conn(self) -> Iterator[Any]:
        with self._pool.connection() as conn, guarded(conn):
            yield conn

    @contextmanager
    def _search(self) -> Iterator[Any]:
        """A connection for searches: the read replica when there is one."""
        with self._read_pool.connection() as conn, guarded(conn):
            yield conn

    @contextmanager
    def _tx(self) -> Iterator[Any]:
        with self._pool.connection() as conn, guarded(conn), conn.transaction():
            yield conn

    @contextmanager
    def _write(self) -> Iterator[Any]:
        """A write transaction. Writers take turns (a transaction-level advisory lock), so the
        statistics they update stay exact and never deadlock; readers never wait."""
        with self._tx() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
            yield conn

    def connect(self, **options: Any) -> Any:
        """A connection of its own, configured as the pool's (libpq ``options`` added), in a
        transaction from its first statement until it commits: a worker's claims."""
        import psycopg

        conn = psycopg.connect(self.url, **options)
        configure_connection(conn)
        return conn

    @contextmanager
    def writing_in(self, conn: Any) -> Iterator[WriteClock]:
        """During the block, this thread's writes of a file (its replacement, failure, new
        size and time, removal) go into ``conn``'s open transaction, a worker's claim, each
        in a savepoint under the writer lock, which is then held until the claim ends: they
        commit with the claim, or not at all."""
        clock = WriteClock()
        self._claimed.conn, self._claimed.clock = conn, clock
        try:
            yield clock
        finally:
            self._claimed.conn = None

    @contextmanager
    def _file_write(self, *, lock: bool = True) -> Iterator[Any]:
        """A transaction for one file's rows: a savepoint of the claim when a worker holds
        one (always under the writer lock), else a transaction of the pool's."""
        conn = getattr(self._claimed, "conn", None)
        if conn is None:
            with self._write() if lock else self._tx() as pooled:
                yield pooled
            return
        with guarded(conn), conn.transaction():
            asked = time.perf_counter()
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
            self._claimed.clock.locked(asked, time.perf_counter())
            yield conn

    def _loading(self, conn: Any) -> bool:
        """Whether a file's write leaves the term statistics to the end of a bulk load: this
        store's, or, in a claim, that of the ingest that opened the run (its marker)."""
        claimed = getattr(self._claimed, "conn", None)
        return self._bulk or (claimed is not None and claimed is conn and bulk.under_way(conn))

    def updating(self) -> AbstractContextManager[None]:
        """An advisory lock for the whole ingest (see the protocol); any process can search."""
        where = redacted(self.url)
        return advisory_lock(self.url, INGEST_LOCK, where=where, timeout=self.update_timeout)

    @contextmanager
    def loading(self) -> Iterator[None]:
        """Into an empty index, the search indexes and term statistics are built after the
        load (``bulk.py``)."""
        dim = self._dim
        if dim is None:  # not bound: nothing to load into
            yield
            return
        with self._write() as conn:
            self._bulk = bulk.begin(conn, dim)
        try:
            yield
        finally:
            if self._bulk:
                self._bulk = False
                with self._write() as conn:
                    bulk.finish(conn, dim, memory=self.build_memory)

    def _meta(self, conn: Any, key: str) -> str | None:
        row = conn.execute("SELECT value FROM shirabe_meta WHERE key = %s", (key,)).fetchone()
        return None if row is None else str(row["value"])

    # identity

    def bind(self, *, embedding_model: str, embedding_dim: int, tokenizer: str) -> bool:
        with self._tx() as conn:
            conn.execute("LOCK TABLE shirabe_meta IN EXCLUSIVE MODE")
            stored_model = self._meta(conn, "embedding_model")
            stored_dim = self._meta(conn, "embedding_dim")
            check_model(
                "the database",
                stored_model,
                stored_dim,
                embedding_model,
                embedding_dim,
                hint="use another database or the same model",
            )
            stored_tokenizer = self._meta(conn, "tokenizer")
            for key, value in (
                ("embedding_model", embedding_model),
                ("embedding_dim", str(embedding_dim)),
            ):
                conn.execute(
                    "INSERT INTO shirabe_meta VALUES (%s, %s) ON CONFLICT DO NOTHING", (key, value)
                )
            conn.execute(
                "INSERT INTO shirabe_meta VALUES ('tokenizer', %s) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (tokenizer,),
            )
            # an index missing (a bulk load that stopped) is built, unless a load is under way
            loading = conn.execute(
                "SELECT NOT pg_try_advisory_xact_lock(%s) AS x", (INGEST_LOCK,)
            ).fetchone()["x"]
            if not loading:
                bulk.finish(conn, embedding_dim, memory=self.build_memory)
            has_chunks = conn.execute("SELECT EXISTS (SELECT 1 FROM chunks) AS x").fetchone()["x"]
        self._model, self._dim = embedding_model, embedding_dim
        if stored_tokenizer != tokenizer and has_chunks:
            log.warning("tokenizer changed (%s → %s)", stored_tokenizer, tokenizer)
            return True
        return False

    def retokenize(
        self, terms: Callable[[Chunk], tuple[Sequence[str], Sequence[Sequence[str]]]]
    ) -> None:
        with self._conn() as conn:
            ids = [int(r["id"]) for r in conn.execute("SELECT id FROM chunks ORDER BY id")]
        for i in range(0, len(ids), _BATCH):
            batch = ids[i : i + _BATCH]
            chunks = self._get_chunks(batch, primary=True)
            with self._write() as conn:
                for cid in batch:
                    tokens, sentences = terms(chunks[cid])
                    lexical.retokenize_chunk(conn, cid, tokens, sentences)
        with self._write() as conn:
            lexical.recount_stats(conn)
            compaction.rebuild(conn)

    # sources

    _SOURCE_SELECT = "SELECT s.*, s.chunk_count AS chunks FROM sources s"

    def get_source(self, path: str) -> SourceInfo | None:
        with self._conn() as conn:
            row = conn.execute(self._SOURCE_SELECT + " WHERE s.path = %s", (path,)).fetchone()
        return None if row is None else source_from_row(row)

    def get_source_by_id(self, source_id: int) -> SourceInfo | None:
        if not 0 < source_id <= MAX_ID:
            return None  # not an id any row can have (and beyond what the database can compare)
        with self._conn() as conn:
            row = conn.execute(self._SOURCE_SELECT + " WHERE s.id = %s", (source_id,)).fetchone()
        return None if row is None else source_from_row(row)

    def list_sources(self, under: str | None = None) -> list[SourceInfo]:
        with self._conn() as conn:
            if under is None:
                rows = conn.execute(self._SOURCE_SELECT + ' ORDER BY s.path COLLATE "C"')
            else:
                prefix = under.rstrip("/") + "/"
                rows = conn.execute(
                    self._SOURCE_SELECT + " WHERE s.path = %s OR left(s.path, %s) = %s "
                    'ORDER BY s.path COLLATE "C"',
                    (under, len(prefix), prefix),
                )
            return [source_from_row(r) for r in rows.fetchall()]

    def replace_source(self, source: SourceRecord, chunks: Sequence[IndexedChunk]) -> None:
        model = self._model
        keys = [k for ic in chunks for k in ic.vector_keys]
        vectors = self.get_embeddings(model, keys) if model else {}
        with self._file_write() as conn:
            loading = self._loading(conn)
            if loading:  # a crash loses the last files, which the next ingest adds again
                conn.execute("SET LOCAL synchronous_commit = off")
            writes.replace_source(conn, source, chunks, vectors, bulk=loading)

    def record_failure(self, source: SourceRecord, reason: str) -> None:
        # under the writer lock: new tags move the file's rows between partitions (parts.py)
        with self._file_write() as conn:
            writes.record_failure(conn, source, reason)

    def touch_source(self, source: SourceRecord) -> None:
        with self._file_write(lock=False) as conn:
            conn.execute(
                "UPDATE sources SET size = %s, mtime = %s WHERE path = %s",
                (source.size, source.mtime, source.path),
            )

    def remove_source(self, path: str) -> bool:
        with self._file_write() as conn:
            return writes.remove_source(conn, path)

    # embedding cache

    def get_embeddings(self, model: str, keys: Sequence[str]) -> dict[str, Vector]:
        with self._conn() as conn:
            return cache.get(conn, model, keys)

    def put_embeddings(self, model: str, vectors: Mapping[str, Vector]) -> None:
        if not vectors:
            return
        with self._tx() as conn:
            cache.put(conn, model, vectors)

    # indexes

    def refresh(self, *, wait: bool = True) -> None:
        """Every committed file is searchable at once; the posting blocks are compacted once
        enough changed since they last were (``compaction.py``)."""
        with self._write() as conn:
            if compaction.due(conn):
                compaction.rebuild(conn)

    def optimize(self) -> None:
        with self._write() as conn:
            conn.execute("DELETE FROM term_stats WHERE df <= 0")
            conn.execute("DELETE FROM reader_term_stats WHERE df <= 0")
            conn.execute("DELETE FROM reader_level_stats WHERE rows <= 0")
            if compaction.due(conn, share=0.0, at_least=1):  # anything changed since
                compaction.rebuild(conn)
        with self._conn() as conn:
            for table in (
                "sources",
                "chunks",
                "sentences",
                "term_blocks",
                "term_stats",
                "reader_term_stats",
            ):
                conn.execute(f"VACUUM (ANALYZE) {table}")

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
        weights = as_weights(terms)
        if not weights or k <= 0 or (within is not None and not within):
            return []
        with self._search() as conn:
            return search.search(
                conn, weights, k, filters, level=level, within=within, k1=self.k1, b=self.b
            )

    def document_frequencies(self, terms: Sequence[str]) -> dict[str, int]:
        with self._search() as conn:
            return lexical.document_frequencies(conn, terms)

    def search_dense(
        self,
        vector: Vector,
        k: int,
        filters: Filters | None = None,
        *,
        level: Level = "chunk",
        within: Sequence[int] | None = None,
    ) -> list[ScoredId]:
        if k <= 0 or self._dim is None or (within is not None and not within):
            return []
        with self._search() as conn:
            return dense.search(
                conn,
                vector,
                k,
                filters,
                level=level,
                within=within,
                dim=self._dim,
                hnsw=self.hnsw,
            )

    _CHUNK_SELECT = "SELECT c.*, s.path FROM chunks c JOIN sources s ON s.id = c.source_id"

    def get_chunks(self, ids: Sequence[int]) -> dict[int, Chunk]:
        return self._get_chunks(ids, primary=False)

    def _get_chunks(self, ids: Sequence[int], *, primary: bool) -> dict[int, Chunk]:
        unique = list(dict.fromkeys(int(i) for i in ids))
        out: dict[int, Chunk] = {}
        with self._conn() if primary else self._search() as conn:
            for i in range(0, len(unique), _BATCH):
                rows = conn.execute(
                    self._CHUNK_SELECT + " WHERE c.id = ANY(%s)", (unique[i : i + _BATCH],)
                )
                for row in rows:
                    out[int(row["id"])] = chunk_from_row(row)
        return out

    def source_chunks(self, path: str) -> list[Chunk]:
        with self._search() as conn:
            rows = conn.execute(
                self._CHUNK_SELECT
                + " WHERE s.path = %s ORDER BY c.is_summary DESC, c.position, c.id",
                (path,),
            ).fetchall()
        return [chunk_from_row(r) for r in rows]

    # bookkeeping

    def record_ingest(self, report: IngestReport) -> None:
        with self._conn() as conn:
            conn.execute(
                "INSERT INTO ingests (finished_at, seconds, added, updated, removed, unchanged, "
                "failed) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                ingest_row(report),
            )

    def ingest_runs(self, limit: int = 20) -> list[dict[str, object]]:
        with self._conn() as conn:
            return _ingest_runs(conn, limit)

    def status(self) -> IndexStatus:
        with self._conn() as conn:
            files = conn.execute("SELECT count(*) AS n FROM sources WHERE status = 'ok'")
            n_files = int(files.fetchone()["n"])
            chunks = int(conn.execute("SELECT count(*) AS n FROM chunks").fetchone()["n"])
            failed = [
                source_from_row(r)
                for r in conn.execute(
                    self._SOURCE_SELECT + " WHERE s.status = 'failed' ORDER BY s.path"
                ).fetchall()
            ]
            last = _ingest_runs(conn, 1)
            dim = self._meta(conn, "embedding_dim")
            size = conn.execute("SELECT pg_database_size(current_database()) AS n").fetchone()
            model = self._meta(conn, "embedding_model")
        return IndexStatus(
            files=n_files,
            chunks=chunks,
            failed=failed,
            embedding_model=model,
            embedding_dim=None if dim is None else int(dim),
            index_bytes=int(size["n"]),
            last_ingest=last[0] if last else None,
            home=redacted(self.url),
        )

    def close(self) -> None:
        if self._read_pool is not self._pool:
            self._read_pool.close()
        self._pool.close()


def redacted(url: str) -> str:
    """The connection string (URL or key=value form) without its password."""
    url = re.sub(r"://([^:/@]+):[^@]*@", r"://\1:***@", url)
    return re.sub(r"(\bpassword\s*=\s*)(\S+)", r"\1***", url)


__all__ = ["PostgresStore", "redacted"]


def _ingest_runs(conn: Any, limit: int) -> list[dict[str, object]]:
    """The newest ``limit`` rows of the ingests table, newest first."""
    rows = conn.execute("SELECT * FROM ingests ORDER BY id DESC LIMIT %s", (limit,))
    return [dict(r) for r in rows.fetchall()]
