"""Persistence and search of chunks: the embedded store and PostgreSQL, chosen in
:mod:`shirabe.stores.registry`."""
