"""Chooses how answers are written."""

from __future__ import annotations

from shirabe.embedders.protocol import Embedder
from shirabe.generators.extractive import ExtractiveGenerator
from shirabe.generators.protocol import Generator
from shirabe.settings import Settings
from shirabe.stores.protocol import Store


def make_generator(settings: Settings, store: Store, embedder: Embedder) -> Generator:
    return ExtractiveGenerator(
        store=store,
        embedder_name=embedder.name,
        max_chars=settings.answer_max_chars,
        threshold=settings.refusal_threshold,
    )
