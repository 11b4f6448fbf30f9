"""Chooses how answers are written, among the ``shirabe.generators`` entry points."""

from __future__ import annotations

from collections.abc import Callable

from shirabe.answering.extractive import ExtractiveGenerator
from shirabe.answering.learned import load_model
from shirabe.answering.llm import LLMGenerator
from shirabe.answering.prompting import Neighbours
from shirabe.answering.protocol import Generator
from shirabe.embedders.protocol import Embedder
from shirabe.errors import ConfigurationError
from shirabe.llm.llama_cpp import LlamaConfig, LlamaCppChat
from shirabe.llm.openai import PRESETS, LLMConfig, OpenAIChat, azure_base_url
from shirabe.llm.protocol import ChatModel
from shirabe.plugins import Registry
from shirabe.records import Chunk
from shirabe.settings import Settings
from shirabe.stores.protocol import Store


def llm_base_url(settings: Settings) -> str:
    """The configured base URL, else the preset's; an error naming both settings if neither."""
    if settings.generator == "azure":
        if not settings.llm_azure_endpoint or not settings.llm_azure_deployment:
            raise ConfigurationError(
                "generator 'azure' needs SHIRABE_LLM_AZURE_ENDPOINT "
                "(https://NAME.openai.azure.com) and SHIRABE_LLM_AZURE_DEPLOYMENT"
            )
        return azure_base_url(settings.llm_azure_endpoint, settings.llm_azure_deployment)
    if settings.llm_base_url:
        return settings.llm_base_url
    if settings.llm_preset:
        return PRESETS[settings.llm_preset]
    raise ConfigurationError(
        "generator 'openai' needs a server: set SHIRABE_LLM_PRESET "
        f"({', '.join(PRESETS)}) or SHIRABE_LLM_BASE_URL"
    )


def llm_config(settings: Settings) -> LLMConfig:
    azure = settings.generator == "azure"
    return LLMConfig(
        base_url=llm_base_url(settings),
        model=settings.llm_azure_deployment if azure else settings.llm_model,
        api_key_env=settings.llm_api_key_env,
        temperature=settings.llm_temperature,
        max_tokens=settings.llm_max_tokens,
        timeout=settings.llm_timeout,
        retries=settings.llm_retries,
        api_version=settings.llm_azure_api_version if azure else None,
        context_window=settings.llm_context_window,
    )


def make_chat(settings: Settings) -> ChatModel | None:
    """The configured chat model, or None for the extractive answerer. Nothing is loaded or
    contacted here."""
    if settings.generator in ("openai", "azure"):
        return OpenAIChat(llm_config(settings))
    if settings.generator == "llama":
        if settings.llm_model_path is None:
            raise ConfigurationError(
                "generator 'llama' needs a GGUF file: set SHIRABE_LLM_MODEL_PATH"
            )
        return LlamaCppChat(
            LlamaConfig(
                model_path=settings.llm_model_path,
                n_ctx=settings.llm_n_ctx,
                threads=settings.llm_threads,
                temperature=settings.llm_temperature,
                max_tokens=settings.llm_max_tokens,
                chat_format=settings.llm_chat_format,
            )
        )
    return None


def store_neighbours(store: Store) -> Neighbours:
    """Looks up the chunks before and after a chunk of the same file by position."""

    def neighbours(chunk: Chunk) -> tuple[Chunk | None, Chunk | None]:
        if chunk.id is None:
            return None, None
        near = store.get_chunks([chunk.id + d for d in (-2, -1, 1, 2) if chunk.id + d > 0])
        same = [c for c in near.values() if c.source == chunk.source and not c.is_summary]
        before = [c for c in same if c.position < chunk.position]
        after = [c for c in same if c.position > chunk.position]
        return (
            max(before, key=lambda c: c.position, default=None),
            min(after, key=lambda c: c.position, default=None),
        )

    return neighbours


GeneratorFactory = Callable[[Settings, Store, Embedder], Generator]
GENERATORS: Registry[GeneratorFactory] = Registry("generators")


def make_generator(settings: Settings, store: Store, embedder: Embedder) -> Generator:
    """The answer writer named by ``settings.generator``."""
    return GENERATORS.load(settings.generator)(settings, store, embedder)


def extractive(settings: Settings, store: Store, embedder: Embedder) -> ExtractiveGenerator:
    """Quoted sentences with citations, or a refusal when the evidence is too weak (the
    ``extractive`` entry point, and the gate of every chat model)."""
    return ExtractiveGenerator(
        store=store,
        embedder_name=embedder.name,
        max_chars=settings.answer_max_chars,
        model=load_model(settings.answer_model),
        answer_threshold=settings.answer_threshold,
    )


def chat(settings: Settings, store: Store, embedder: Embedder) -> Generator:
    """A chat model gated by the extractive answerer's refusal test, which also answers when
    the model's reply does not hold up (the ``openai``, ``azure`` and ``llama`` entry
    points)."""
    gate = extractive(settings, store, embedder)
    model = make_chat(settings)
    if model is None:
        return gate
    return LLMGenerator(
        model,
        gate=gate,
        fallback=gate,
        context_tokens=settings.llm_context_tokens,
        neighbours=store_neighbours(store) if settings.llm_neighbours else None,
    )
