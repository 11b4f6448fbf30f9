"""Which texts a chunk embeds, and the chunk vector pooled from its sentences."""

from __future__ import annotations

import numpy as np
import pytest

from shirabe.indexing.passages import (
    embedding_key,
    own_vector_keys,
    own_vectors,
    pool,
    vector_plan,
)
from shirabe.records import Chunk

TWO = Chunk("有給休暇は年20日です。申請は3日前までに行います。", "規程.md", ("休暇",))
ONE = Chunk("有給休暇は年20日です。", "規程.md", ("休暇",))


def test_a_pooled_chunk_embeds_only_its_sentences() -> None:
    plan = vector_plan(TWO, sentences=True, pooled=True)
    assert plan.pooled
    assert plan.texts[1:] == ("休暇: 有給休暇は年20日です。", "休暇: 申請は3日前までに行います。")
    assert plan.keys[1:] == tuple(embedding_key(t) for t in plan.texts[1:])
    # the chunk's own key names the pooled vector, never the embedding of the chunk's text
    assert plan.keys[0] != embedding_key(plan.texts[0])
    assert plan.weights == [len(plan.texts[1]), len(plan.texts[2])] == [16, 18]


@pytest.mark.parametrize(
    ("chunk", "sentences", "pooled"),
    [(ONE, True, True), (TWO, False, True), (TWO, True, False)],
    ids=["one sentence", "no sentence vectors", "pooling off"],
)
def test_otherwise_the_chunk_text_is_embedded(chunk: Chunk, sentences: bool, pooled: bool) -> None:
    plan = vector_plan(chunk, sentences=sentences, pooled=pooled)
    assert not plan.pooled
    assert plan.texts[0] == "休暇\n" + chunk.text
    assert plan.keys == tuple(embedding_key(t) for t in plan.texts)


def test_the_pooled_key_changes_with_any_sentence() -> None:
    edited = Chunk("有給休暇は年21日です。申請は3日前までに行います。", "規程.md", ("休暇",))
    a = vector_plan(TWO, sentences=True, pooled=True).keys[0]
    b = vector_plan(edited, sentences=True, pooled=True).keys[0]
    assert a != b


def test_pool_is_the_unit_length_weighted_mean() -> None:
    # weights 3 and 1 over (1, 0) and (0, 1): (3, 1) / sqrt(10)
    out = pool([np.array([1.0, 0.0], np.float32), np.array([0.0, 1.0], np.float32)], [3, 1])
    assert out.dtype == np.float32
    assert np.allclose(out, [3 / np.sqrt(10), 1 / np.sqrt(10)])


def test_a_chunk_vector_is_found_however_it_was_made() -> None:
    """Readers of a chunk's own vector (MMR, the evidence gate) find it whether the index
    pooled it or embedded the chunk's text: the pooled key first, then the text's."""
    pooled = vector_plan(TWO, sentences=True, pooled=True).keys[0]
    embedded = vector_plan(TWO, sentences=True, pooled=False).keys[0]
    assert own_vector_keys(TWO) == (pooled, embedded)
    assert own_vector_keys(ONE) == (vector_plan(ONE, sentences=True, pooled=True).keys[0],)
    a, b = np.array([1.0, 0.0], np.float32), np.array([0.0, 1.0], np.float32)
    both = {pooled: a, embedded: b}
    assert [v is a for v in own_vectors([TWO], lambda keys: {k: both[k] for k in keys})] == [True]
    only_text = {embedded: b}
    found = own_vectors([TWO, ONE], lambda keys: {k: only_text[k] for k in keys if k in only_text})
    assert found[0] is b and found[1] is None
