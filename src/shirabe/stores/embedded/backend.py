"""The embedded store as a backend: an index directory (``SHIRABE_HOME``) on this machine."""

from __future__ import annotations

from pathlib import Path

from shirabe.errors import ConfigurationError
from shirabe.settings import Settings
from shirabe.stores.embedded.accounts import SQLiteDatabase
from shirabe.stores.embedded.schema import MIGRATIONS, schema_version
from shirabe.stores.embedded.store import EmbeddedStore
from shirabe.stores.protocol import Migration


class EmbeddedBackend:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def open_store(self) -> EmbeddedStore:
        s = self.settings
        return EmbeddedStore(s.home, k1=s.bm25_k1, b=s.bm25_b, update_timeout=s.update_timeout)

    def open_accounts(self) -> SQLiteDatabase:
        return SQLiteDatabase(self.settings.home / "accounts.sqlite3")

    def migrate(self, *, embeddings_from: Path | None = None) -> Migration:
        if embeddings_from is not None:
            raise ConfigurationError(
                "--embeddings-from copies into PostgreSQL, and the store is the embedded one: "
                "give --database or SHIRABE_DATABASE_URL (and not SHIRABE_STORE=embedded)"
            )
        before = schema_version(self.settings.home)
        self.open_store().close()
        latest = len(MIGRATIONS)
        return Migration(applied=list(range(before + 1, latest + 1)), version=latest)
