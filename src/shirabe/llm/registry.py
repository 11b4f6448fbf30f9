"""Chat models, among the ``shirabe.chat_models`` entry points.

A chat model is its own family: answer writing, query understanding, follow-up rewriting and
ingest-time writing (questions for passages, rewrites of broken PDF pages) each take any
:class:`~shirabe.llm.protocol.ChatModel`. shirabe registers ``openai`` (any OpenAI-compatible
server: LM Studio, Ollama, llama.cpp's server, vLLM, OpenAI), ``azure`` (Azure OpenAI) and
``llama`` (a GGUF file run in this process by llama-cpp-python); another package adds its own
the same way. ``SHIRABE_GENERATOR`` names the chat model that answers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from shirabe.errors import ConfigurationError
from shirabe.llm.llama_cpp import LlamaConfig, LlamaCppChat
from shirabe.llm.openai import PRESETS, LLMConfig, OpenAIChat, azure_base_url
from shirabe.llm.protocol import ChatModel
from shirabe.plugins import Registry
from shirabe.settings import Settings

ChatModelFactory = Callable[[Settings], ChatModel]
CHAT_MODELS: Registry[ChatModelFactory] = Registry("chat_models")


def make_chat_model(settings: Settings) -> ChatModel | None:
    """The chat model ``settings.generator`` names, or None when it names none (the
    extractive answerer, or another answer writer). Nothing is loaded or contacted here."""
    if settings.generator not in CHAT_MODELS.names():
        return None
    return CHAT_MODELS.load(settings.generator)(settings)


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


def llm_config(settings: Settings, *, base_url: str | None = None) -> LLMConfig:
    """The settings of an OpenAI-compatible server; ``base_url`` replaces the configured one."""
    return LLMConfig(
        base_url=base_url or llm_base_url(settings),
        model=settings.llm_model,
        api_key_env=settings.llm_api_key_env,
        temperature=settings.llm_temperature,
        max_tokens=settings.llm_max_tokens,
        timeout=settings.llm_timeout,
        retries=settings.llm_retries,
        context_window=settings.llm_context_window,
    )


def openai(settings: Settings) -> ChatModel:
    """An OpenAI-compatible server (the ``openai`` entry point)."""
    return OpenAIChat(llm_config(settings))


def azure_config(settings: Settings) -> LLMConfig:
    """The settings of an Azure OpenAI deployment; an error naming what is missing."""
    if not settings.llm_azure_endpoint or not settings.llm_azure_deployment:
        raise ConfigurationError(
            "generator 'azure' needs SHIRABE_LLM_AZURE_ENDPOINT "
            "(https://NAME.openai.azure.com) and SHIRABE_LLM_AZURE_DEPLOYMENT"
        )
    base_url = azure_base_url(settings.llm_azure_endpoint, settings.llm_azure_deployment)
    return replace(
        llm_config(settings, base_url=base_url),
        model=settings.llm_azure_deployment,
        api_version=settings.llm_azure_api_version,
    )


def azure(settings: Settings) -> ChatModel:
    """An Azure OpenAI deployment (the ``azure`` entry point)."""
    return OpenAIChat(azure_config(settings))


def llama(settings: Settings) -> ChatModel:
    """A GGUF file run in this process by llama-cpp-python (the ``llama`` entry point)."""
    if settings.llm_model_path is None:
        raise ConfigurationError("generator 'llama' needs a GGUF file: set SHIRABE_LLM_MODEL_PATH")
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
