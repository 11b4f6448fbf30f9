"""Chooses the embedder named in the settings among the ``shirabe.embedders`` entry points."""

from __future__ import annotations

from collections.abc import Callable

from shirabe.embedders.protocol import Embedder
from shirabe.plugins import Registry
from shirabe.settings import EmbedderSettings

EMBEDDERS: Registry[Callable[[EmbedderSettings], Embedder]] = Registry("embedders")


def make_embedder(options: EmbedderSettings) -> Embedder:
    """The embedder ``options.name`` names, given ``options`` (the ``embedder`` section)."""
    return EMBEDDERS.load(options.name)(options)
