"""PostgreSQL + pgvector as a backend: the index and the accounts in one database
(``SHIRABE_DATABASE_URL``), shared by every server using it."""

from __future__ import annotations

from pathlib import Path

from shirabe.errors import ConfigurationError
from shirabe.settings import Settings
from shirabe.stores.embedded.store import EmbeddedStore
from shirabe.stores.postgres.accounts import PostgresDatabase
from shirabe.stores.postgres.dense import HnswSearch
from shirabe.stores.postgres.schema import MIGRATIONS, migrate
from shirabe.stores.postgres.store import PostgresStore
from shirabe.stores.protocol import Migration


class PostgresBackend:
    def __init__(self, settings: Settings) -> None:
        if not settings.database_url:
            raise ConfigurationError("the postgres store needs SHIRABE_DATABASE_URL")
        self.settings = settings
        self.url: str = settings.database_url

    def open_store(self) -> PostgresStore:
        s = self.settings
        return PostgresStore(
            self.url,
            k1=s.bm25_k1,
            b=s.bm25_b,
            pool_size=s.database_pool_size,
            update_timeout=s.update_timeout,
            hnsw=HnswSearch(ef_search=s.hnsw_ef_search, exact_below=s.exact_search_below),
            read_url=s.database_read_url,
            build_memory=s.database_build_memory,
        )

    def open_accounts(self) -> PostgresDatabase:
        return PostgresDatabase(self.url)

    def migrate(self, *, embeddings_from: Path | None = None) -> Migration:
        applied = migrate(self.url)
        copied = 0
        if embeddings_from is not None:
            if not (embeddings_from / "index.sqlite3").is_file():
                raise ConfigurationError(f"{embeddings_from}: no index here (index.sqlite3)")
            store = PostgresStore(self.url)
            try:
                for model, vectors in EmbeddedStore.embedding_cache(embeddings_from):
                    store.put_embeddings(model, vectors)
                    copied += len(vectors)
            finally:
                store.close()
        return Migration(applied=applied, version=len(MIGRATIONS), embeddings=copied)
