"""Chooses the store for the settings."""

from __future__ import annotations

from shirabe.settings import Settings
from shirabe.stores.protocol import Store


def make_store(settings: Settings) -> Store:
    if settings.database_url:
        from shirabe.stores.postgres import PostgresStore

        return PostgresStore(
            settings.database_url,
            k1=settings.bm25_k1,
            b=settings.bm25_b,
            pool_size=settings.database_pool_size,
            ef_search=settings.hnsw_ef_search,
            exact_below=settings.exact_search_below,
            read_url=settings.database_read_url,
        )
    from shirabe.stores.sqlite import SQLiteStore

    return SQLiteStore(settings.home, k1=settings.bm25_k1, b=settings.bm25_b)
