"""Chat models, among the ``shirabe.chat_models`` entry points.

A chat model is its own family: answer writing, query understanding, follow-up rewriting and
ingest-time writing (questions for passages, rewrites of broken PDF pages) each take any
:class:`~shirabe.llm.protocol.ChatModel`. shirabe registers ``openai`` (any OpenAI-compatible
server: LM Studio, Ollama, llama.cpp's server, vLLM, OpenAI), ``azure`` (Azure OpenAI) and
``llama`` (a GGUF file run in this process by llama-cpp-python); another package adds its own
the same way. ``SHIRABE_ANSWERING__GENERATOR`` names the chat model that answers; each factory
is given the ``chat_model`` section of the settings.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from shirabe.errors import ConfigurationError
from shirabe.llm.llama_cpp import LlamaConfig, LlamaCppChat
from shirabe.llm.openai import PRESETS, LLMConfig, OpenAIChat, azure_base_url
from shirabe.llm.protocol import ChatModel
from shirabe.plugins import Registry
from shirabe.settings import ChatModelSettings

ChatModelFactory = Callable[[ChatModelSettings], ChatModel]
CHAT_MODELS: Registry[ChatModelFactory] = Registry("chat_models")


def make_chat_model(name: str, options: ChatModelSettings) -> ChatModel | None:
    """The chat model ``name`` (the ``answering.generator`` setting) names, or None when it
    names none (the extractive answerer, or another answer writer). Nothing is loaded or
    contacted here."""
    if name not in CHAT_MODELS.names():
        return None
    return CHAT_MODELS.load(name)(options)


def llm_base_url(options: ChatModelSettings) -> str:
    """The configured base URL, else the preset's; an error naming both settings if neither."""
    if options.base_url:
        return options.base_url
    if options.preset:
        return PRESETS[options.preset]
    raise ConfigurationError(
        "generator 'openai' needs a server: set SHIRABE_CHAT_MODEL__PRESET "
        f"({', '.join(PRESETS)}) or SHIRABE_CHAT_MODEL__BASE_URL"
    )


def llm_config(options: ChatModelSettings, *, base_url: str | None = None) -> LLMConfig:
    """The settings of an OpenAI-compatible server; ``base_url`` replaces the configured one."""
    return LLMConfig(
        base_url=base_url or llm_base_url(options),
        model=options.model,
        api_key_env=options.api_key_env,
        temperature=options.temperature,
        max_tokens=options.max_tokens,
        timeout=options.timeout,
        retries=options.retries,
        context_window=options.context_window,
    )


def openai(options: ChatModelSettings) -> ChatModel:
    """An OpenAI-compatible server (the ``openai`` entry point)."""
    return OpenAIChat(llm_config(options))


def azure_config(options: ChatModelSettings) -> LLMConfig:
    """The settings of an Azure OpenAI deployment; an error naming what is missing."""
    if not options.azure_endpoint or not options.azure_deployment:
        raise ConfigurationError(
            "generator 'azure' needs SHIRABE_CHAT_MODEL__AZURE_ENDPOINT "
            "(https://NAME.openai.azure.com) and SHIRABE_CHAT_MODEL__AZURE_DEPLOYMENT"
        )
    base_url = azure_base_url(options.azure_endpoint, options.azure_deployment)
    return replace(
        llm_config(options, base_url=base_url),
        model=options.azure_deployment,
        api_version=options.azure_api_version,
    )


def azure(options: ChatModelSettings) -> ChatModel:
    """An Azure OpenAI deployment (the ``azure`` entry point)."""
    return OpenAIChat(azure_config(options))


def llama(options: ChatModelSettings) -> ChatModel:
    """A GGUF file run in this process by llama-cpp-python (the ``llama`` entry point)."""
    if options.model_path is None:
        raise ConfigurationError(
            "generator 'llama' needs a GGUF file: set SHIRABE_CHAT_MODEL__MODEL_PATH"
        )
    return LlamaCppChat(
        LlamaConfig(
            model_path=options.model_path,
            n_ctx=options.n_ctx,
            threads=options.threads,
            temperature=options.temperature,
            max_tokens=options.max_tokens,
            chat_format=options.chat_format,
        )
    )
