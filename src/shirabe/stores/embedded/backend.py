"""The embedded store as a backend: an index directory (``SHIRABE_HOME``) on this machine."""

from __future__ import annotations

from pathlib import Path

from shirabe.errors import ConfigurationError
from shirabe.settings import StoreSettings
from shirabe.stores.embedded.accounts import SQLiteDatabase
from shirabe.stores.embedded.schema import MIGRATIONS, schema_version
from shirabe.stores.embedded.store import EmbeddedStore
from shirabe.stores.protocol import Migration


class EmbeddedBackend:
    def __init__(self, options: StoreSettings, home: Path) -> None:
        self.options = options
        self.home = home

    def open_store(self) -> EmbeddedStore:
        o = self.options
        return EmbeddedStore(self.home, k1=o.bm25_k1, b=o.bm25_b, update_timeout=o.update_timeout)

    def open_accounts(self) -> SQLiteDatabase:
        return SQLiteDatabase(self.home / "accounts.sqlite3")

    def migrate(self, *, embeddings_from: Path | None = None) -> Migration:
        if embeddings_from is not None:
            raise ConfigurationError(
                "--embeddings-from copies into PostgreSQL, and the store is the embedded one: "
                "give --database or SHIRABE_STORE__DATABASE_URL (and not "
                "SHIRABE_STORE__BACKEND=embedded)"
            )
        before = schema_version(self.home)
        self.open_store().close()
        latest = len(MIGRATIONS)
        return Migration(applied=list(range(before + 1, latest + 1)), version=latest)
