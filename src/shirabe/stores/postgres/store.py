"""The server store: PostgreSQL with pgvector, for teams sharing one index.

Everything lives in the database and is searched there:

- sources, chunks and the embedding cache, as in the embedded store;
- BM25 over the same Japanese terms, scored in SQL from postings tables (term, chunk, term
  frequency, row length) and per-level statistics kept in the same transactions;
- dense vectors in pgvector with HNSW cosine indexes, searched exactly instead when a filter
  leaves few enough chunks (so a filtered search is ranked among the readable chunks only);
- filters (folders, categories, names, access groups) applied in SQL before ranking.

Each file's replacement is one transaction, so readers see whole files only, and any number of
processes can read and write one database.
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from shirabe.embedders.protocol import Vector
from shirabe.errors import ShirabeError
from shirabe.records import Chunk, Filters, IndexStatus, IngestReport, ScoredId, SourceInfo
from shirabe.stores.bm25 import idf
from shirabe.stores.common import check_model, ingest_row, now, path_glob, source_row
from shirabe.stores.protocol import MAX_ID, IndexedChunk, Level, SourceRecord
from shirabe.text.terms import as_weights

log = logging.getLogger(__name__)

# Numbered schema migrations; the n-th entry takes a database from version n-1 to n.
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE EXTENSION IF NOT EXISTS vector;
    CREATE TABLE shirabe_meta (key text PRIMARY KEY, value text NOT NULL);
    CREATE TABLE sources (
        id bigserial PRIMARY KEY,
        path text NOT NULL UNIQUE,
        sha256 text NOT NULL,
        size bigint NOT NULL,
        mtime double precision NOT NULL,
        status text NOT NULL CHECK (status IN ('ok', 'failed')),
        error text,
        metadata jsonb NOT NULL DEFAULT '{}',
        warnings jsonb NOT NULL DEFAULT '[]',
        ingested_at text NOT NULL,
        chunk_count integer NOT NULL DEFAULT 0
    );
    CREATE TABLE chunks (
        id bigserial PRIMARY KEY,
        source_id bigint NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
        position integer NOT NULL,
        text text NOT NULL,
        heading_path jsonb NOT NULL,
        start_offset integer NOT NULL,
        end_offset integer NOT NULL,
        locator jsonb NOT NULL DEFAULT '{}',
        is_summary boolean NOT NULL DEFAULT false,
        metadata jsonb NOT NULL DEFAULT '{}',
        tokens text NOT NULL,
        sentence_tokens jsonb NOT NULL DEFAULT '[]',
        vector_keys jsonb NOT NULL,
        length integer NOT NULL
    );
    CREATE INDEX chunks_by_source ON chunks (source_id);
    -- vectors in narrow tables of their own: scans read no text, and rows stay un-TOASTed
    -- the file's id is repeated in the search tables, so filters (folders, categories, access
    -- groups) become one list of file ids checked before ranking
    CREATE TABLE chunk_vectors (
        chunk_id bigint PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
        source_id bigint NOT NULL,
        embedding vector NOT NULL
    );
    CREATE INDEX chunk_vectors_by_source ON chunk_vectors (source_id);
    CREATE TABLE sentences (
        chunk_id bigint NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
        source_id bigint NOT NULL,
        ord integer NOT NULL,
        length integer NOT NULL,
        embedding vector NOT NULL,
        PRIMARY KEY (chunk_id, ord)
    );
    CREATE TABLE postings (
        term text NOT NULL,
        chunk_id bigint NOT NULL,
        source_id bigint NOT NULL,
        tf integer NOT NULL,
        length integer NOT NULL,
        PRIMARY KEY (term, chunk_id) INCLUDE (tf, length, source_id)
    );
    CREATE INDEX postings_by_chunk ON postings (chunk_id);
    CREATE TABLE sentence_postings (
        term text NOT NULL,
        chunk_id bigint NOT NULL,
        source_id bigint NOT NULL,
        ord integer NOT NULL,
        tf integer NOT NULL,
        length integer NOT NULL,
        PRIMARY KEY (term, chunk_id, ord) INCLUDE (tf, length, source_id)
    );
    CREATE INDEX sentence_postings_by_chunk ON sentence_postings (chunk_id);
    -- postings carry no foreign key (a check per row would slow ingest); the store deletes a
    -- chunk's postings with the chunk, in the same transaction
    CREATE TABLE term_stats (
        level text NOT NULL,
        term text NOT NULL,
        df bigint NOT NULL,
        PRIMARY KEY (level, term)
    );
    CREATE TABLE level_stats (
        level text PRIMARY KEY,
        rows bigint NOT NULL,
        total_length bigint NOT NULL
    );
    INSERT INTO level_stats VALUES ('chunk', 0, 0), ('sentence', 0, 0);
    CREATE TABLE embeddings (
        model text NOT NULL,
        key text NOT NULL,
        vector bytea NOT NULL,
        PRIMARY KEY (model, key)
    );
    CREATE TABLE ingests (
        id bigserial PRIMARY KEY,
        finished_at text NOT NULL,
        seconds double precision NOT NULL,
        added integer NOT NULL,
        updated integer NOT NULL,
        removed integer NOT NULL,
        unchanged integer NOT NULL,
        failed integer NOT NULL
    );
    """,
    """
    CREATE TABLE users (
        name text PRIMARY KEY,
        groups text NOT NULL,
        admin integer NOT NULL DEFAULT 0,
        created_at text NOT NULL
    );
    CREATE TABLE tokens (
        id bigserial PRIMARY KEY,
        "user" text NOT NULL REFERENCES users(name) ON DELETE CASCADE,
        hash text NOT NULL UNIQUE,
        label text NOT NULL DEFAULT '',
        created_at text NOT NULL,
        last_used_at text,
        revoked integer NOT NULL DEFAULT 0
    );
    """,
)

_MIGRATION_LOCK = 0x5348_4952_4142_45  # advisory lock keys ("SHIRABE" + 0 / 1)
_WRITE_LOCK = _MIGRATION_LOCK + 1
_BATCH = 1000


class DatabaseError(ShirabeError):
    """The database cannot be reached or used; the message says why."""


def glob_regex(glob: str) -> str:
    """A POSIX regular expression matching what SQLite's GLOB matches (``*``, ``?``, ``[…]``)."""
    out = ["^"]
    i = 0
    while i < len(glob):
        ch = glob[i]
        if ch == "*":
            out.append(".*")
        elif ch == "?":
            out.append(".")
        elif ch == "[" and (end := glob.find("]", i + 2)) != -1:
            body = glob[i + 1 : end]
            if body.startswith("^"):
                body = "\\^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = end
        else:
            out.append(re.escape(ch))
        i += 1
    out.append("$")
    return "".join(out)


def migrate(url: str) -> list[int]:
    """Bring the database at ``url`` to the newest schema; returns the versions applied."""
    import psycopg

    applied: list[int] = []
    try:
        conn = psycopg.connect(url, autocommit=True)
    except psycopg.OperationalError as exc:
        raise DatabaseError(f"cannot connect to the database: {exc}") from exc
    with conn:
        standby = conn.execute("SELECT pg_is_in_recovery()").fetchone()
        if standby and standby[0]:  # a read replica follows its primary's schema
            found = schema_version(url)
            if found != len(MIGRATIONS):
                raise DatabaseError(
                    f"the read replica's schema is version {found}, not {len(MIGRATIONS)}: "
                    "migrate the primary first"
                )
            return []
        conn.execute("SELECT pg_advisory_lock(%s)", (_MIGRATION_LOCK,))
        try:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS shirabe_schema (version integer NOT NULL, "
                "applied_at timestamptz NOT NULL DEFAULT now())"
            )
            row = conn.execute("SELECT max(version) FROM shirabe_schema").fetchone()
            version = int(row[0]) if row and row[0] is not None else 0
            if version > len(MIGRATIONS):
                raise DatabaseError(
                    f"the database schema is version {version}, newer than this shirabe "
                    f"({len(MIGRATIONS)}); upgrade shirabe"
                )
            for number, script in enumerate(MIGRATIONS[version:], start=version + 1):
                with conn.transaction():
                    conn.execute(script)
                    conn.execute("INSERT INTO shirabe_schema (version) VALUES (%s)", (number,))
                applied.append(number)
                log.info("applied schema migration %d", number)
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (_MIGRATION_LOCK,))
    return applied


@contextmanager
def temporary_database(
    server: str, prefix: str = "shirabe_tmp", *, keep: bool = False
) -> Iterator[str]:
    """A new, empty database on the server at ``server`` (any database URL on it), dropped on
    leaving the block unless ``keep``: for tests and benchmarks."""
    import psycopg
    from psycopg.conninfo import make_conninfo

    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield make_conninfo(server, dbname=name)
    finally:
        if not keep:
            with psycopg.connect(server, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def schema_version(url: str) -> int:
    import psycopg

    with psycopg.connect(url) as conn:
        exists = conn.execute("SELECT to_regclass('shirabe_schema') IS NOT NULL").fetchone()
        if not exists or not exists[0]:
            return 0
        row = conn.execute("SELECT max(version) FROM shirabe_schema").fetchone()
        return int(row[0]) if row and row[0] is not None else 0


def _source_info(row: Mapping[str, Any]) -> SourceInfo:
    return SourceInfo(
        path=row["path"],
        sha256=row["sha256"],
        size=int(row["size"]),
        mtime=float(row["mtime"]),
        status=row["status"],
        error=row["error"],
        chunks=int(row["chunks"]),
        ingested_at=row["ingested_at"],
        warnings=tuple(row["warnings"]),
        metadata=dict(row["metadata"]),
        id=int(row["id"]),
    )


def _chunk(row: Mapping[str, Any]) -> Chunk:
    return Chunk(
        text=row["text"],
        source=row["path"],
        heading_path=tuple(row["heading_path"]),
        position=int(row["position"]),
        start=int(row["start_offset"]),
        end=int(row["end_offset"]),
        locator=dict(row["locator"]),
        is_summary=bool(row["is_summary"]),
        metadata=dict(row["metadata"]),
        id=int(row["id"]),
    )


class PostgresStore:
    """The store Protocol on PostgreSQL + pgvector (see the module docstring)."""

    def __init__(
        self,
        url: str,
        *,
        k1: float = 1.2,
        b: float = 0.75,
        pool_size: int = 8,
        ef_search: int = 100,
        exact_below: int = 20_000,
        read_url: str | None = None,
    ) -> None:
        """``read_url``: a read replica of ``url``; searches and chunk reads go there, writes
        and the ingest's own reads to ``url``. A replica lags its primary by its replication
        delay (milliseconds on a LAN), so a file just ingested may take that long to show."""
        import psycopg
        from pgvector.psycopg import register_vector
        from psycopg.rows import dict_row
        from psycopg_pool import ConnectionPool

        self.url = url
        self.k1, self.b = k1, b
        self.ef_search = ef_search
        self.exact_below = exact_below
        migrate(url)

        def configure(conn: psycopg.Connection[Any]) -> None:
            register_vector(conn)
            conn.row_factory = dict_row
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
        with self._pool.connection() as conn:
            yield conn

    @contextmanager
    def _search(self) -> Iterator[Any]:
        """A connection for searches: the read replica when there is one."""
        with self._read_pool.connection() as conn:
            yield conn

    @contextmanager
    def _tx(self) -> Iterator[Any]:
        with self._pool.connection() as conn, conn.transaction():
            yield conn

    @contextmanager
    def _write(self) -> Iterator[Any]:
        """A write transaction. Writers take turns (a transaction-level advisory lock), so the
        statistics they update stay exact and never deadlock; readers never wait."""
        with self._tx() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_WRITE_LOCK,))
            yield conn

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
            dim = int(embedding_dim)
            # HNSW needs a fixed dimension: index the column cast to it
            conn.execute(
                "CREATE INDEX IF NOT EXISTS chunk_vectors_hnsw ON chunk_vectors "
                f"USING hnsw ((embedding::vector({dim})) vector_cosine_ops)"
            )
            # sentence vectors are scored exactly, among the chunks the other signals found
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
                    self._retokenize_chunk(conn, cid, tokens, sentences)

    def _retokenize_chunk(
        self, conn: Any, cid: int, tokens: Sequence[str], sentences: Sequence[Sequence[str]]
    ) -> None:
        old = conn.execute(
            "SELECT length, source_id FROM chunks WHERE id = %s FOR UPDATE", (cid,)
        ).fetchone()
        if old is None:
            return
        stored = conn.execute(
            "SELECT ord, length FROM sentences WHERE chunk_id = %s ORDER BY ord", (cid,)
        ).fetchall()
        # sentence rows carry vectors: keep them when the sentences still line up, else the
        # chunk becomes its own single sentence (as at ingest)
        rows = list(sentences) if sentences and len(sentences) == len(stored) else [tokens]
        if len(rows) == len(stored):
            for ord_, sentence in enumerate(rows):
                conn.execute(
                    "UPDATE sentences SET length = %s WHERE chunk_id = %s AND ord = %s",
                    (len(sentence), cid, ord_),
                )
        else:
            conn.execute("DELETE FROM sentences WHERE chunk_id = %s", (cid,))
            conn.execute(
                "INSERT INTO sentences (chunk_id, source_id, ord, length, embedding) "
                "SELECT chunk_id, source_id, 0, %s, embedding FROM chunk_vectors "
                "WHERE chunk_id = %s",
                (len(tokens), cid),
            )
        self._drop_postings(conn, [cid])
        conn.execute(
            "UPDATE chunks SET tokens = %s, sentence_tokens = %s, length = %s WHERE id = %s",
            (
                " ".join(tokens),
                json.dumps([" ".join(x) for x in sentences], ensure_ascii=False),
                len(tokens),
                cid,
            ),
        )
        self._copy_postings(conn, int(old["source_id"]), [(cid, tokens, rows)])
        self._adjust_stats(
            conn,
            chunk=(0, len(tokens) - int(old["length"])),
            sentence=(
                len(rows) - len(stored),
                sum(len(x) for x in rows) - sum(int(r["length"]) for r in stored),
            ),
        )

    # sources

    _SOURCE_SELECT = "SELECT s.*, s.chunk_count AS chunks FROM sources s"

    def get_source(self, path: str) -> SourceInfo | None:
        with self._conn() as conn:
            row = conn.execute(self._SOURCE_SELECT + " WHERE s.path = %s", (path,)).fetchone()
        return None if row is None else _source_info(row)

    def get_source_by_id(self, source_id: int) -> SourceInfo | None:
        if not 0 < source_id <= MAX_ID:
            return None  # not an id any row can have (and beyond what the database can compare)
        with self._conn() as conn:
            row = conn.execute(self._SOURCE_SELECT + " WHERE s.id = %s", (source_id,)).fetchone()
        return None if row is None else _source_info(row)

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
            return [_source_info(r) for r in rows.fetchall()]

    def _upsert_source(
        self, conn: Any, source: SourceRecord, status: str, error: str | None
    ) -> int:
        row = conn.execute(
            """
            INSERT INTO sources (path, sha256, size, mtime, status, error, metadata, ingested_at,
                warnings)
            VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)
            ON CONFLICT (path) DO UPDATE SET sha256 = excluded.sha256, size = excluded.size,
                mtime = excluded.mtime, status = excluded.status, error = excluded.error,
                metadata = excluded.metadata, ingested_at = excluded.ingested_at,
                warnings = excluded.warnings
            RETURNING id
            """,
            source_row(source, status, error),
        ).fetchone()
        return int(row["id"])

    def _drop_chunks(self, conn: Any, source_id: int) -> None:
        """Delete a file's chunks (postings and sentences go with them) and their statistics."""
        old = conn.execute(
            "SELECT id, length FROM chunks WHERE source_id = %s", (source_id,)
        ).fetchall()
        old_sentences = conn.execute(
            "SELECT count(*) AS n, coalesce(sum(length), 0) AS total FROM sentences "
            "WHERE source_id = %s",
            (source_id,),
        ).fetchone()
        self._drop_postings(conn, [int(r["id"]) for r in old])
        conn.execute("DELETE FROM chunks WHERE source_id = %s", (source_id,))
        conn.execute("UPDATE sources SET chunk_count = 0 WHERE id = %s", (source_id,))
        self._adjust_stats(
            conn,
            chunk=(-len(old), -sum(int(r["length"]) for r in old)),
            sentence=(-int(old_sentences["n"]), -int(old_sentences["total"])),
        )

    _LEVEL_TABLES = (("chunk", "postings"), ("sentence", "sentence_postings"))

    def _drop_postings(self, conn: Any, ids: Sequence[int]) -> None:
        """Delete the postings of chunks ``ids`` and take them out of the term statistics."""
        if not ids:
            return
        for level, table in self._LEVEL_TABLES:
            conn.execute(
                f"""
                UPDATE term_stats t SET df = t.df - d.n
                FROM (SELECT term, count(*) AS n FROM {table} WHERE chunk_id = ANY(%s)
                      GROUP BY term) d
                WHERE t.level = %s AND t.term = d.term
                """,
                (list(ids), level),
            )
            conn.execute(f"DELETE FROM {table} WHERE chunk_id = ANY(%s)", (list(ids),))

    def _adjust_stats(
        self, conn: Any, *, chunk: tuple[int, int], sentence: tuple[int, int]
    ) -> None:
        for level, (rows, total) in (("chunk", chunk), ("sentence", sentence)):
            if rows or total:
                conn.execute(
                    "UPDATE level_stats SET rows = rows + %s, total_length = total_length + %s "
                    "WHERE level = %s",
                    (rows, total, level),
                )

    def _copy_postings(
        self,
        conn: Any,
        source_id: int,
        docs: Sequence[tuple[int, Sequence[str], Sequence[Sequence[str]]]],
    ) -> None:
        with conn.cursor().copy(
            "COPY postings (term, chunk_id, source_id, tf, length) FROM STDIN"
        ) as copy:
            for cid, tokens, _rows in docs:
                for term, tf in Counter(tokens).items():
                    copy.write_row((term, cid, source_id, tf, len(tokens)))
        with conn.cursor().copy(
            "COPY sentence_postings (term, chunk_id, source_id, ord, tf, length) FROM STDIN"
        ) as copy:
            for cid, _tokens, rows in docs:
                for ord_, sentence in enumerate(rows):
                    for term, tf in Counter(sentence).items():
                        copy.write_row((term, cid, source_id, ord_, tf, len(sentence)))
        ids = [cid for cid, _tokens, _rows in docs]
        for level, table in self._LEVEL_TABLES:
            conn.execute(
                f"""
                INSERT INTO term_stats (level, term, df)
                SELECT %s, term, count(*) FROM {table} WHERE chunk_id = ANY(%s) GROUP BY term
                ON CONFLICT (level, term) DO UPDATE SET df = term_stats.df + excluded.df
                """,
                (level, ids),
            )

    def replace_source(self, source: SourceRecord, chunks: Sequence[IndexedChunk]) -> None:
        model = self._model
        keys = [k for ic in chunks for k in ic.vector_keys]
        vectors = self.get_embeddings(model, keys) if model else {}
        with self._write() as conn:
            source_id = self._upsert_source(conn, source, "ok", None)
            self._drop_chunks(conn, source_id)
            ids = [
                int(r["id"])
                for r in conn.execute(
                    "SELECT nextval('chunks_id_seq') AS id FROM generate_series(1, %s)",
                    (len(chunks),),
                ).fetchall()
            ]
            docs: list[tuple[int, Sequence[str], Sequence[Sequence[str]]]] = []
            sentence_rows: list[tuple[int, int, int, int, str]] = []
            chunk_vectors: list[tuple[int, int, str]] = []
            with conn.cursor().copy(
                """COPY chunks (id, source_id, position, text, heading_path, start_offset,
                    end_offset, locator, is_summary, metadata, tokens, sentence_tokens,
                    vector_keys, length) FROM STDIN"""
            ) as copy:
                for cid, ic in zip(ids, chunks, strict=True):
                    found = [vectors.get(k) for k in ic.vector_keys]
                    own = found[0] if found else None
                    if own is None:
                        log.warning("%s: a chunk has no vector; only BM25 finds it", source.path)
                    sentence_vectors = found[1:]
                    if (
                        ic.sentence_tokens
                        and len(sentence_vectors) == len(ic.sentence_tokens)
                        and all(v is not None for v in sentence_vectors)
                    ):
                        rows: Sequence[Sequence[str]] = ic.sentence_tokens
                        row_vectors = sentence_vectors
                    else:  # like the embedded store: the chunk is its own single sentence
                        rows, row_vectors = [ic.tokens], [own]
                    if own is not None:
                        chunk_vectors.append((cid, source_id, _text_vector(own)))
                    for ord_, (sentence, vec) in enumerate(zip(rows, row_vectors, strict=True)):
                        if vec is not None:
                            sentence_rows.append(
                                (cid, source_id, ord_, len(sentence), _text_vector(vec))
                            )
                    docs.append((cid, ic.tokens, rows))
                    copy.write_row(
                        (
                            cid,
                            source_id,
                            ic.chunk.position,
                            ic.chunk.text,
                            json.dumps(list(ic.chunk.heading_path), ensure_ascii=False),
                            ic.chunk.start,
                            ic.chunk.end,
                            json.dumps(ic.chunk.locator, ensure_ascii=False),
                            ic.chunk.is_summary,
                            json.dumps(ic.chunk.metadata, ensure_ascii=False),
                            " ".join(ic.tokens),
                            json.dumps(
                                [" ".join(s) for s in ic.sentence_tokens], ensure_ascii=False
                            ),
                            json.dumps(list(ic.vector_keys)),
                            len(ic.tokens),
                        )
                    )
            with conn.cursor().copy(
                "COPY chunk_vectors (chunk_id, source_id, embedding) FROM STDIN"
            ) as copy:
                for pair in chunk_vectors:
                    copy.write_row(pair)
            with conn.cursor().copy(
                "COPY sentences (chunk_id, source_id, ord, length, embedding) FROM STDIN"
            ) as copy:
                for row in sentence_rows:
                    copy.write_row(row)
            self._copy_postings(conn, source_id, docs)
            self._adjust_stats(
                conn,
                chunk=(len(docs), sum(len(d[1]) for d in docs)),
                sentence=(len(sentence_rows), sum(r[3] for r in sentence_rows)),
            )
            conn.execute(
                "UPDATE sources SET chunk_count = %s WHERE id = %s", (len(docs), source_id)
            )

    def record_failure(self, source: SourceRecord, reason: str) -> None:
        with self._tx() as conn:
            updated = conn.execute(
                "UPDATE sources SET status = 'failed', error = %s, ingested_at = %s "
                "WHERE path = %s",
                (reason, now(), source.path),
            )
            if updated.rowcount == 0:
                self._upsert_source(conn, source, "failed", reason)

    def touch_source(self, source: SourceRecord) -> None:
        with self._conn() as conn:
            conn.execute(
                "UPDATE sources SET size = %s, mtime = %s WHERE path = %s",
                (source.size, source.mtime, source.path),
            )

    def remove_source(self, path: str) -> bool:
        with self._write() as conn:
            row = conn.execute(
                "SELECT id FROM sources WHERE path = %s FOR UPDATE", (path,)
            ).fetchone()
            if row is None:
                return False
            self._drop_chunks(conn, int(row["id"]))
            conn.execute("DELETE FROM sources WHERE id = %s", (row["id"],))
            return True

    # embedding cache

    def get_embeddings(self, model: str, keys: Sequence[str]) -> dict[str, Vector]:
        found: dict[str, Vector] = {}
        unique = list(dict.fromkeys(keys))
        with self._conn() as conn:
            for i in range(0, len(unique), _BATCH):
                batch = unique[i : i + _BATCH]
                for row in conn.execute(
                    "SELECT key, vector FROM embeddings WHERE model = %s AND key = ANY(%s)",
                    (model, batch),
                ):
                    found[row["key"]] = np.frombuffer(row["vector"], dtype=np.float32)
        return found

    def put_embeddings(self, model: str, vectors: Mapping[str, Vector]) -> None:
        if not vectors:
            return
        with self._tx() as conn:
            conn.cursor().executemany(
                "INSERT INTO embeddings (model, key, vector) VALUES (%s, %s, %s) "
                "ON CONFLICT DO NOTHING",
                [
                    (model, key, np.asarray(vec, dtype=np.float32).tobytes())
                    for key, vec in vectors.items()
                ],
            )

    # indexes

    def refresh(self, *, wait: bool = True) -> None:
        """Nothing to do: every committed file is searchable at once."""

    def optimize(self) -> None:
        with self._write() as conn:
            conn.execute("DELETE FROM term_stats WHERE df <= 0")
        with self._conn() as conn:
            for table in (
                "sources",
                "chunks",
                "sentences",
                "postings",
                "sentence_postings",
                "term_stats",
            ):
                conn.execute(f"VACUUM (ANALYZE) {table}")

    # retrieval

    def _filter_sql(
        self, conn: Any, filters: Filters | None, alias: str
    ) -> tuple[str, list[Any], int | None]:
        """A condition on table ``alias`` keeping the chunks ``filters`` allow, its parameters,
        and how many chunks that leaves at most (None: no filter). Filters resolve to a list of
        file ids first (files are few), so the search itself checks one id per row."""
        if not filters:
            return "", [], None
        clauses: list[str] = ["true"]
        params: list[Any] = []
        if filters.path_glob:
            clauses.append("(s.path ~ %s OR s.path ~ %s)")
            params.extend([glob_regex(filters.path_glob), glob_regex(path_glob(filters.path_glob))])
        if filters.categories:
            clauses.append("s.metadata ->> 'category' = ANY(%s)")
            params.append(sorted(filters.categories))
        if filters.entities:
            clauses.append("coalesce(s.metadata ->> 'entities', '[]')::jsonb ?| %s")
            params.append(sorted(filters.entities))
        if filters.groups is not None:  # documents without groups are nobody's (fail closed)
            clauses.append("coalesce(s.metadata ->> 'groups', '[]')::jsonb ?| %s")
            params.append(sorted(filters.groups))
        row = conn.execute(
            "SELECT coalesce(array_agg(s.id), '{}') AS ids, coalesce(sum(s.chunk_count), 0) AS n "
            "FROM sources s WHERE " + " AND ".join(clauses),
            params,
        ).fetchone()
        # a hashed set: a long list of files costs one lookup per row, not one per file
        sql = f"{alias}.source_id IN (SELECT unnest(%s::bigint[]))"
        out: list[Any] = [list(row["ids"])]
        for key, value in filters.metadata.items():  # chunk-level values: checked per chunk
            sql += (
                f" AND {alias}.chunk_id IN (SELECT c.id FROM chunks c JOIN sources s "
                "ON s.id = c.source_id WHERE c.metadata ->> %s = %s OR s.metadata ->> %s = %s)"
            )
            out.extend([key, value, key, value])
        return sql, out, int(row["n"])

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
            return self._lexical(conn, weights, k, filters, level, within)

    def _lexical(
        self,
        conn: Any,
        weights: Mapping[str, float],
        k: int,
        filters: Filters | None,
        level: Level,
        within: Sequence[int] | None,
    ) -> list[ScoredId]:
        table = "postings" if level == "chunk" else "sentence_postings"
        row_key = "p.chunk_id" if level == "chunk" else "p.chunk_id, p.ord"
        stats = conn.execute(
            "SELECT rows, total_length FROM level_stats WHERE level = %s", (level,)
        ).fetchone()
        n = int(stats["rows"])
        if n == 0:
            return []
        frequencies = {
            r["term"]: int(r["df"])
            for r in conn.execute(
                "SELECT term, df FROM term_stats WHERE level = %s AND term = ANY(%s) AND df > 0",
                (level, list(weights)),
            )
        }
        if not frequencies:
            return []
        terms = list(frequencies)
        # the query side of BM25, once per term: weight × Lucene's idf
        term_idf = idf(np.asarray([frequencies[t] for t in terms]), n) * np.asarray(
            [weights[t] for t in terms]
        )
        avg_len = max(int(stats["total_length"]) / n, 1e-9)
        where, params, _allowed = self._filter_sql(conn, filters, "p")
        conditions = [where] if where else []
        if within is not None:
            conditions.append("p.chunk_id = ANY(%s)")
            params.append(sorted({int(i) for i in within}))
        extra = (" AND " + " AND ".join(conditions)) if conditions else ""
        # tf·(k1+1) / (tf + k1·(1 − b) + k1·b/avgdl · dl), summed over the query's terms
        score = "sum(q.w * p.tf * %s / (p.tf + %s + %s * p.length))"
        rows_sql = (
            f"SELECT p.chunk_id, {score} AS score "
            f"FROM unnest(%s::text[], %s::float8[]) AS q(term, w) "
            f"JOIN {table} p ON p.term = q.term WHERE true{extra} GROUP BY {row_key}"
        )
        if level == "chunk":
            sql = f"{rows_sql} ORDER BY score DESC, p.chunk_id LIMIT %s"
        else:  # a chunk scores by its best sentence
            sql = (
                f"SELECT chunk_id, max(score) AS score FROM ({rows_sql}) r "
                "GROUP BY chunk_id ORDER BY score DESC, chunk_id LIMIT %s"
            )
        args = [
            self.k1 + 1,
            self.k1 * (1 - self.b),
            self.k1 * self.b / avg_len,
            terms,
            [float(x) for x in term_idf],
            *params,
            k,
        ]
        found = conn.execute(sql, args).fetchall()
        return [ScoredId(int(r["chunk_id"]), float(r["score"])) for r in found if r["score"] > 0]

    def document_frequencies(self, terms: Sequence[str]) -> dict[str, int]:
        unique = list(dict.fromkeys(terms))
        out = dict.fromkeys(unique, 0)
        if not unique:
            return out
        with self._search() as conn:
            for row in conn.execute(
                "SELECT term, df FROM term_stats WHERE level = 'chunk' AND term = ANY(%s)",
                (unique,),
            ):
                out[row["term"]] = int(row["df"])
        return out

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
        q = _text_vector(vector)
        dim = self._dim
        with self._search() as conn:
            where, params, allowed = self._filter_sql(conn, filters, "x")
            conditions = ["true"] + ([where] if where else [])
            exact = within is not None
            if within is not None:
                conditions.append("x.chunk_id = ANY(%s)")
                params.append(sorted({int(i) for i in within}))
            if not exact and allowed is not None:
                exact = allowed <= self.exact_below
            if level == "sentence" and not exact:
                exact = True  # sentences have no HNSW index (they re-score candidates)
            if exact:
                # every allowed row scored: no index, the true top k
                distance = "x.embedding <=> %s::vector"
            else:
                self._hnsw_settings(conn, max(self.ef_search, k))
                distance = f"x.embedding::vector({dim}) <=> %s::vector({dim})"
            where_sql = " AND ".join(conditions)
            if level == "chunk":
                # the index orders by distance alone; exact scans also break ties by id
                order = "distance" if not exact else "distance, x.chunk_id"
                sql = (
                    f"SELECT x.chunk_id, {distance} AS distance FROM chunk_vectors x "
                    f"WHERE {where_sql} ORDER BY {order} LIMIT %s"
                )
                rows = conn.execute(sql, [q, *params, k]).fetchall()
            else:
                sql = (
                    f"SELECT x.chunk_id, min({distance}) AS distance FROM sentences x "
                    f"WHERE {where_sql} GROUP BY x.chunk_id ORDER BY distance, x.chunk_id "
                    "LIMIT %s"
                )
                rows = conn.execute(sql, [q, *params, k]).fetchall()
        return [ScoredId(int(r["chunk_id"]), 1.0 - float(r["distance"])) for r in rows]

    @staticmethod
    def _hnsw_settings(conn: Any, ef_search: int) -> None:
        """Session settings for HNSW scans, sent only when they change on this connection:
        the candidate list size, and iterative scans so that a filter still fills the top k."""
        if getattr(conn, "_shirabe_ef_search", None) != ef_search:
            conn.execute(f"SET hnsw.ef_search = {int(ef_search)}")
            conn.execute("SET hnsw.iterative_scan = strict_order")
            conn._shirabe_ef_search = ef_search

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
                    out[int(row["id"])] = _chunk(row)
        return out

    def source_chunks(self, path: str) -> list[Chunk]:
        with self._search() as conn:
            rows = conn.execute(
                self._CHUNK_SELECT
                + " WHERE s.path = %s ORDER BY c.is_summary DESC, c.position, c.id",
                (path,),
            ).fetchall()
        return [_chunk(r) for r in rows]

    # bookkeeping

    def record_ingest(self, report: IngestReport) -> None:
        with self._conn() as conn:
            conn.execute(
                "INSERT INTO ingests (finished_at, seconds, added, updated, removed, unchanged, "
                "failed) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                ingest_row(report),
            )

    def status(self) -> IndexStatus:
        with self._conn() as conn:
            files = conn.execute("SELECT count(*) AS n FROM sources WHERE status = 'ok'")
            n_files = int(files.fetchone()["n"])
            chunks = int(conn.execute("SELECT count(*) AS n FROM chunks").fetchone()["n"])
            failed = [
                _source_info(r)
                for r in conn.execute(
                    self._SOURCE_SELECT + " WHERE s.status = 'failed' ORDER BY s.path"
                ).fetchall()
            ]
            last = conn.execute("SELECT * FROM ingests ORDER BY id DESC LIMIT 1").fetchone()
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
            last_ingest=None if last is None else dict(last),
            home=redacted(self.url),
        )

    def close(self) -> None:
        if self._read_pool is not self._pool:
            self._read_pool.close()
        self._pool.close()


def _text_vector(vector: Vector) -> str:
    """pgvector's text form, exact for float32 (COPY and parameters alike)."""
    values = np.asarray(vector, dtype=np.float32).tolist()
    return "[" + ",".join(map(repr, values)) + "]"


def redacted(url: str) -> str:
    """The connection string (URL or key=value form) without its password."""
    url = re.sub(r"://([^:/@]+):[^@]*@", r"://\1:***@", url)
    return re.sub(r"(\bpassword\s*=\s*)(\S+)", r"\1***", url)


__all__ = [
    "MIGRATIONS",
    "DatabaseError",
    "PostgresStore",
    "glob_regex",
    "migrate",
    "redacted",
    "schema_version",
    "temporary_database",
]
