"""The PostgreSQL schema: numbered migrations applied once each, under an advisory lock, so
any number of servers can start against one database; and throwaway databases for tests."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from shirabe.errors import ShirabeError
from shirabe.stores.postgres import cache, compaction, forward, parts, readers

log = logging.getLogger(__name__)

Step = str | Callable[[Any], None]
"""A migration's step: SQL, or a function given the migration's connection (rows as tuples)
for what SQL cannot do alone."""

# Numbered schema migrations; the n-th entry takes a database from version n-1 to n, in one
# transaction, by its steps in order.
MIGRATIONS: tuple[str | tuple[Step, ...], ...] = (
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
    """
    CREATE TABLE audit (
        id bigserial PRIMARY KEY,
        at text NOT NULL,
        actor text NOT NULL,
        action text NOT NULL,
        path text NOT NULL,
        detail text NOT NULL DEFAULT ''
    );
    CREATE TABLE control (key text PRIMARY KEY, value text NOT NULL);
    """,
    """
    CREATE TABLE conversations (
        id text PRIMARY KEY,
        owner text NOT NULL,
        title text NOT NULL DEFAULT '',
        created_at text NOT NULL,
        updated_at text NOT NULL
    );
    CREATE INDEX conversations_owner ON conversations (owner, updated_at);
    CREATE TABLE turns (
        conversation text NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        position integer NOT NULL,
        question text NOT NULL,
        standalone text,
        answer text NOT NULL,
        refused integer NOT NULL,
        refusal_reason text,
        citations text NOT NULL,
        sources text NOT NULL,
        categories text NOT NULL,
        at text NOT NULL,
        PRIMARY KEY (conversation, position)
    );
    CREATE TABLE feedback (
        id bigserial PRIMARY KEY,
        owner text NOT NULL,
        conversation text NOT NULL,
        position integer NOT NULL,
        rating text NOT NULL,
        comment text NOT NULL DEFAULT '',
        at text NOT NULL,
        FOREIGN KEY (conversation, position) REFERENCES turns(conversation, position)
            ON DELETE CASCADE
    );
    """,
    # 5: each term's postings by their BM25 term-frequency part, best first, so that a search
    # read a term's best postings only (replaced by merged blocks in 11)
    """
    CREATE INDEX IF NOT EXISTS postings_by_impact ON postings
        (term, ((tf::real / (tf + 1.2 * (0.25 + 0.75 * length / 200.0))::real)) DESC)
        INCLUDE (chunk_id, tf, length, source_id)
    """,
    # 6: a token may expire
    "ALTER TABLE tokens ADD COLUMN expires_at text;",
    # 7: the statistics of each group set, so a reader's scores are those of their files
    readers.MIGRATION + readers.MIGRATION_RECOUNT,
    # 8: chats pinned and titled by their owner; a turn's answers kept as versions (再生成),
    # feedback given on one of them
    """
    ALTER TABLE conversations ADD COLUMN pinned integer NOT NULL DEFAULT 0;
    ALTER TABLE conversations ADD COLUMN named integer NOT NULL DEFAULT 0;
    ALTER TABLE turns ADD COLUMN version integer NOT NULL DEFAULT 1;
    ALTER TABLE turns ADD COLUMN versions integer NOT NULL DEFAULT 1;
    ALTER TABLE feedback ADD COLUMN version integer NOT NULL DEFAULT 1;
    CREATE TABLE turn_versions (
        conversation text NOT NULL,
        position integer NOT NULL,
        version integer NOT NULL,
        standalone text,
        answer text NOT NULL,
        refused integer NOT NULL,
        refusal_reason text,
        citations text NOT NULL,
        sources text NOT NULL,
        categories text NOT NULL,
        at text NOT NULL,
        PRIMARY KEY (conversation, position, version),
        FOREIGN KEY (conversation, position) REFERENCES turns(conversation, position)
            ON DELETE CASCADE
    );
    """,
    # 9: users who sign in with the company's accounts, and signed-in browsers
    """
    CREATE TABLE identities (
        issuer text NOT NULL,
        subject text NOT NULL,
        "user" text NOT NULL REFERENCES users(name) ON DELETE CASCADE,
        created_at text NOT NULL,
        signed_in_at text NOT NULL,
        PRIMARY KEY (issuer, subject)
    );
    CREATE TABLE sessions (
        id bigserial PRIMARY KEY,
        hash text NOT NULL UNIQUE,
        "user" text NOT NULL REFERENCES users(name) ON DELETE CASCADE,
        via text NOT NULL,
        token bigint REFERENCES tokens(id) ON DELETE CASCADE,
        created_at text NOT NULL,
        expires_at text NOT NULL,
        ended_at text
    );
    CREATE INDEX sessions_expiry ON sessions (expires_at);
    """,
    # 10: the ingest workers' queue (queue.py): runs, their files, and every claim of a file
    """
    CREATE TABLE queue_runs (
        id bigserial PRIMARY KEY,
        state text NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'finished', 'abandoned')),
        root text NOT NULL,
        skip jsonb NOT NULL DEFAULT '[]',
        recipe text NOT NULL,
        actor text NOT NULL,
        opened_at timestamptz NOT NULL DEFAULT now(),
        closed_at timestamptz
    );
    CREATE TABLE queue_files (
        id bigserial PRIMARY KEY,
        run_id bigint NOT NULL REFERENCES queue_runs(id) ON DELETE CASCADE,
        path text NOT NULL,
        key text NOT NULL,
        relative text NOT NULL,
        state text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'finished', 'reported')),
        attempts integer NOT NULL DEFAULT 0,
        claimed_by text,
        outcome text,
        chunks integer NOT NULL DEFAULT 0,
        error text,
        warnings jsonb NOT NULL DEFAULT '[]',
        seconds double precision,
        embedding_seconds double precision,
        waiting_seconds double precision,
        writing_seconds double precision,
        finished_at timestamptz,
        UNIQUE (run_id, key)
    );
    CREATE INDEX queue_files_queued ON queue_files (id) WHERE state = 'queued';
    CREATE INDEX queue_files_finished ON queue_files (run_id) WHERE state = 'finished';
    CREATE TABLE queue_claims (
        id bigserial PRIMARY KEY,
        file_id bigint NOT NULL,
        run_id bigint NOT NULL REFERENCES queue_runs(id) ON DELETE CASCADE,
        worker text NOT NULL,
        claimed_at timestamptz NOT NULL DEFAULT clock_timestamp()
    );
    CREATE INDEX queue_claims_by_file ON queue_claims (file_id);
    """,
    # 11: BM25 postings in blocks per term (blocks.py) and each chunk's terms by row
    # (forward.py) in place of a row per posting, both built from the chunks' stored terms at
    # the next start (compaction.py)
    """
    ALTER TABLE chunks ADD COLUMN own_sentence boolean NOT NULL DEFAULT false;
    UPDATE chunks c SET own_sentence = NOT (jsonb_array_length(c.sentence_tokens) > 0
        AND jsonb_array_length(c.sentence_tokens)
            = (SELECT count(*) FROM sentences s WHERE s.chunk_id = c.id));
    DROP TABLE postings;
    DROP TABLE sentence_postings;
    """
    + forward.TABLE
    + ";\n"
    + compaction.TABLE.format(name="term_blocks")
    + ";\n"
    + ";\n".join(i.format(name="term_blocks") for i in compaction.INDEXES)
    + f";\nINSERT INTO shirabe_meta VALUES ('{compaction.REBUILD}', 'rebuild');\n",
    # 12: vectors in half precision (pgvector's halfvec), the embedding cache too; the HNSW
    # index over them is built again at the next start (bulk.py)
    (
        """
        DROP INDEX IF EXISTS chunk_vectors_hnsw;
        ALTER TABLE chunk_vectors ALTER COLUMN embedding TYPE halfvec USING embedding::halfvec;
        ALTER TABLE sentences ALTER COLUMN embedding TYPE halfvec USING embedding::halfvec;
        """,
        cache.halve,
    ),
    # 13: the search tables partitioned by reader set (parts.py); the posting blocks and the
    # HNSW graph are built again at the next start
    (
        parts.partition,
        f"INSERT INTO shirabe_meta VALUES ('{compaction.REBUILD}', 'rebuild') "
        "ON CONFLICT DO NOTHING",
    ),
    # 14: the chunk vectors one table again; a graph of every chunk and one per reader set
    # (graphs.py) are built at the next start
    (parts.unpartition_vectors,),
    # 15: the embedding cache's rows name their model by number and key by digest (cache.py)
    cache.KEYED,
)

_MIGRATION_LOCK = 0x5348_4952_4142_45  # advisory lock keys ("SHIRABE" + 0 / 1)
WRITE_LOCK = _MIGRATION_LOCK + 1
"""Held (per transaction) by every writer of the index, so writers take turns."""


class DatabaseError(ShirabeError):
    """The database cannot be reached or used; the message says why."""


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
                    for step in (script,) if isinstance(script, str) else script:
                        if isinstance(step, str):
                            conn.execute(step)
                        else:
                            step(conn)
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
    """The schema version of the database at ``url`` (0 when it has no schema yet)."""
    import psycopg

    with psycopg.connect(url) as conn:
        exists = conn.execute("SELECT to_regclass('shirabe_schema') IS NOT NULL").fetchone()
        if not exists or not exists[0]:
            return 0
        row = conn.execute("SELECT max(version) FROM shirabe_schema").fetchone()
        return int(row[0]) if row and row[0] is not None else 0
