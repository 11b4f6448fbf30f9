"""The tests' stand-in embedder (tests/support.py): a real Embedder, deterministic, unit
vectors, near when the texts share characters."""

from __future__ import annotations

import numpy as np

from shirabe.embedders.protocol import Embedder

from tests.support import HashedEmbedder


def test_the_stand_in_is_an_embedder_of_unit_vectors_that_never_change() -> None:
    embedder: Embedder = HashedEmbedder(dim=32)
    texts = ["国内出張の日当は3000円とする。", "会議室の予約", ""]
    passages = embedder.embed_passages(texts)
    assert (embedder.name, embedder.dim) == ("test/hashed-ngrams-32", 32)
    assert passages.shape == (3, 32) and passages.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(passages, axis=1), 1.0, rtol=1e-6)
    for text, row in zip(texts, passages, strict=True):
        np.testing.assert_array_equal(HashedEmbedder(dim=32).embed_query(text), row)
    assert embedder.embed_passages([]).shape == (0, 32)


def test_texts_that_share_characters_are_nearer_than_texts_that_do_not() -> None:
    embedder = HashedEmbedder()
    q = embedder.embed_query("出張の日当")
    near, far = embedder.embed_passages(["国内出張の日当は3000円とする。", "会議室の予約方法"])
    assert float(q @ near) > 0.3 > float(q @ far)
