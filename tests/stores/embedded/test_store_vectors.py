"""Where the embedded store keeps vectors: int8 codes in the segments, half precision in the
cache, and the cached vectors give the scores a dense search returns."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from shirabe.records import Chunk
from shirabe.stores.embedded.store import EmbeddedStore
from shirabe.stores.embedded.vectors import VectorFile
from shirabe.stores.protocol import IndexedChunk, Level, SourceRecord

MODEL = "test/random-64"
DIM = 64


def _unit(rng: np.random.Generator) -> np.ndarray:
    v = rng.standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


def _half(v: np.ndarray) -> np.ndarray:
    return v.astype(np.float16).astype(np.float32)


@pytest.fixture
def filled(tmp_path: Path) -> tuple[EmbeddedStore, dict[str, np.ndarray], dict[int, str]]:
    """A store of 60 chunks of two sentences each; the vectors by key, the chunk ids' keys."""
    rng = np.random.default_rng(4)
    store = EmbeddedStore(tmp_path / "index")
    store.bind(embedding_model=MODEL, embedding_dim=DIM, tokenizer="split")
    vectors: dict[str, np.ndarray] = {}
    chunks = []
    for i in range(60):
        keys = [f"c{i}", f"c{i}.0", f"c{i}.1"]
        vectors.update({key: _unit(rng) for key in keys})
        chunks.append(
            IndexedChunk(
                chunk=Chunk(text=f"文{i}。句{i}。", source="/d/a.md", position=i),
                tokens=[f"文{i}", f"句{i}"],
                vector_keys=keys,
                sentence_tokens=[[f"文{i}"], [f"句{i}"]],
            )
        )
    store.put_embeddings(MODEL, vectors)
    store.replace_source(SourceRecord("/d/a.md", "x", 1, 0.0), chunks)
    store.refresh()
    ids = {
        c.position: cid
        for cid, c in store.get_chunks(store.segments.indexed_ids().tolist()).items()
    }
    return store, vectors, {cid: f"c{position}" for position, cid in ids.items()}


def test_dense_scores_are_those_of_the_cached_vectors(
    filled: tuple[EmbeddedStore, dict[str, np.ndarray], dict[int, str]],
) -> None:
    store, vectors, key_of = filled
    query = _unit(np.random.default_rng(5))
    try:
        levels: tuple[Level, ...] = ("chunk", "sentence")
        for level in levels:
            hits = store.search_dense(query, 10, level=level)

            def exact(cid: int, level: str = level) -> float:
                keys = [key_of[cid]] if level == "chunk" else [f"{key_of[cid]}.{j}" for j in (0, 1)]
                return max(float(_half(vectors[k]) @ query) for k in keys)

            everything = sorted(key_of, key=lambda cid: -exact(cid))[:10]
            assert [h.chunk_id for h in hits] == everything
            # to the float32 rounding of a product, not the 10⁻³ of the codes
            want = [exact(c) for c in everything]
            assert [h.score for h in hits] == pytest.approx(want, abs=1e-6)
    finally:
        store.close()


def test_segments_hold_int8_codes_and_the_cache_half_precision(
    filled: tuple[EmbeddedStore, dict[str, np.ndarray], dict[int, str]],
) -> None:
    store, vectors, _ = filled
    try:
        (segment,) = (store.home / "segments").glob("seg-*")
        names = {p.stem for p in segment.glob("*.npy")}
        assert {"chunk_codes", "sent_codes", "chunk_vector_ids", "sent_vector_ids"} <= names
        assert not {"chunk_vectors", "sent_vectors"} & names
        codes = np.load(segment / "sent_codes.npy")
        assert codes.dtype == np.int8 and codes.shape == (120, DIM)
        found = store.get_embeddings(MODEL, list(vectors))
        assert all(np.array_equal(found[k], _half(v)) for k, v in vectors.items())
    finally:
        store.close()


def test_vectors_another_process_added_are_read(tmp_path: Path) -> None:
    """A reader maps the vector file as it was; vectors written after come from a new map."""
    rng = np.random.default_rng(8)
    first = {f"a{i}": _unit(rng) for i in range(5)}
    later = {f"b{i}": _unit(rng) for i in range(5)}
    reader, writer = EmbeddedStore(tmp_path / "index"), EmbeddedStore(tmp_path / "index")
    try:
        writer.put_embeddings(MODEL, first)
        assert reader.get_embeddings(MODEL, list(first)).keys() == first.keys()
        writer.put_embeddings(MODEL, later)
        found = reader.get_embeddings(MODEL, list(later))
        assert all(np.array_equal(found[k], _half(v)) for k, v in later.items())
    finally:
        reader.close()
        writer.close()


def test_vectors_a_failed_write_left_are_written_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Vectors written to the file before their rows failed to commit take no slot: the next
    write uses the same slots, and the keys that failed are not cached."""
    rng = np.random.default_rng(9)
    lost = {f"x{i}": _unit(rng) for i in range(3)}
    kept = {f"y{i}": _unit(rng) for i in range(3)}
    store = EmbeddedStore(tmp_path / "index")
    try:
        store.put_embeddings(MODEL, {"first": _unit(rng)})
        write = VectorFile.write

        def killed(self: VectorFile, start: int, vectors: np.ndarray) -> None:
            write(self, start, vectors)
            raise OSError("killed after writing the vectors")

        monkeypatch.setattr(VectorFile, "write", killed)
        with pytest.raises(OSError, match="killed"):
            store.put_embeddings(MODEL, lost)
        monkeypatch.setattr(VectorFile, "write", write)
        assert store.get_embeddings(MODEL, list(lost)) == {}
        store.put_embeddings(MODEL, kept)
        found = store.cache.get_with_slots(MODEL, list(kept))
        assert sorted(slot for slot, _ in found.values()) == [1, 2, 3]
        assert all(np.array_equal(found[k][1], _half(v)) for k, v in kept.items())
    finally:
        store.close()
