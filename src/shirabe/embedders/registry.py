"""Chooses the embedder named in the settings among the ``shirabe.embedders`` entry points."""

from __future__ import annotations

from collections.abc import Callable

from shirabe.embedders.protocol import Embedder
from shirabe.plugins import Registry
from shirabe.settings import Settings

EMBEDDERS: Registry[Callable[[Settings], Embedder]] = Registry("embedders")


def make_embedder(settings: Settings) -> Embedder:
    return EMBEDDERS.load(settings.embedder)(settings)
