"""PostgreSQL + pgvector as a backend: the index and the accounts in one database
(``SHIRABE_STORE__DATABASE_URL``), shared by every server using it."""

from __future__ import annotations

from pathlib import Path

from shirabe.errors import ConfigurationError
from shirabe.settings import StoreSettings
from shirabe.stores.embedded.store import EmbeddedStore
from shirabe.stores.postgres.accounts import PostgresDatabase
from shirabe.stores.postgres.dense import HnswSearch
from shirabe.stores.postgres.queue import PostgresQueue, open_queue
from shirabe.stores.postgres.schema import MIGRATIONS, migrate
from shirabe.stores.postgres.store import PostgresStore
from shirabe.stores.protocol import Migration, Store


class PostgresBackend:
    def __init__(self, options: StoreSettings, home: Path) -> None:
        """``home`` holds nothing of the index here (uploads live there, see the server)."""
        if not options.database_url:
            raise ConfigurationError("the postgres store needs SHIRABE_STORE__DATABASE_URL")
        self.options = options
        self.url: str = options.database_url

    def open_store(self) -> PostgresStore:
        o = self.options
        return PostgresStore(
            self.url,
            k1=o.bm25_k1,
            b=o.bm25_b,
            pool_size=o.database_pool_size,
            update_timeout=o.update_timeout,
            hnsw=HnswSearch(ef_search=o.hnsw_ef_search, exact_below=o.exact_search_below),
            read_url=o.database_read_url,
            build_memory=o.database_build_memory,
        )

    def open_queue(self, store: Store, *, lost_after: float) -> PostgresQueue:
        """The ingest workers' queue in the same database (:mod:`.queue`)."""
        return open_queue(store, lost_after=lost_after)

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
