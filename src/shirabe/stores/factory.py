"""Chooses the store for the settings."""

from __future__ import annotations

from shirabe.settings import Settings
from shirabe.stores.protocol import Store


def make_store(settings: Settings) -> Store:
    from shirabe.stores.sqlite import SQLiteStore

    return SQLiteStore(settings.home, k1=settings.bm25_k1, b=settings.bm25_b)
