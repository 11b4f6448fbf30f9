"""The flat names settings had before they were grouped in sections.

``SHIRABE_TOP_K=8`` (environment or ``.env``), ``Settings(top_k=8)`` and ``settings.top_k``
still set or read ``retrieval.top_k``, each with a :class:`SettingsDeprecationWarning` naming
the new name, until shirabe |REMOVED_IN|."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

REMOVED_IN = "0.3.0"
"""The release in which the flat names stop working."""

_SECTIONS: dict[str, tuple[str, ...]] = {
    "store": (
        "database_url",
        "database_read_url",
        "database_pool_size",
        "hnsw_ef_search",
        "exact_search_below",
        "database_build_memory",
        "bm25_k1",
        "bm25_b",
        "update_timeout",
    ),
    "ingest": (
        "chunk_size",
        "chunk_overlap",
        "section_summaries",
        "sentence_vectors",
        "pooled_chunk_vectors",
        "passwords",
        "ocr",
        "ocr_languages",
        "refresh_every_files",
        "access_map",
        "default_groups",
        "enrich_questions",
        "clean_pdf_pages",
        "clean_page_max_chars",
        "watch_debounce_ms",
        "watch_rescan_seconds",
        "watch_polling",
    ),
    "limits": (
        "max_file_bytes",
        "max_unzipped_bytes",
        "max_loader_memory",
        "load_timeout",
        "max_load_seconds",
        "max_request_bytes",
    ),
    "tokenizer": ("sudachi_mode", "bigrams"),
    "embedder": (),
    "retrieval": (
        "retriever",
        "fusion",
        "rrf_k",
        "bm25_weight",
        "bm25_sentence_weight",
        "dense_weight",
        "dense_sentence_weight",
        "candidates",
        "mmr_lambda",
        "top_k",
        "synonyms",
        "entity_filters",
        "multi_query",
        "multi_query_count",
        "keyword_extraction",
        "decompose",
    ),
    "answering": ("generator",),
    "chat_model": (),
    "server": (
        "host",
        "port",
        "anonymous",
        "allowed_hosts",
        "sign_in_attempts",
        "token_lifetime",
        "example_questions",
        "max_conversation_turns",
        "mcp_user",
        "document_text_chars",
        "uploads",
    ),
}
"""The settings that kept their name in their section."""

_CHAT_MODEL = (
    "preset",
    "base_url",
    "model",
    "api_key_env",
    "temperature",
    "max_tokens",
    "timeout",
    "retries",
    "context_window",
    "azure_endpoint",
    "azure_deployment",
    "azure_api_version",
    "model_path",
    "n_ctx",
    "threads",
    "chat_format",
)

RENAMED: dict[str, tuple[str, str]] = {
    **{name: (section, name) for section, names in _SECTIONS.items() for name in names},
    "store": ("store", "backend"),
    "tokenizer": ("tokenizer", "name"),
    "embedder": ("embedder", "name"),
    "embed_batch_size": ("embedder", "batch_size"),
    "answer_max_chars": ("answering", "max_chars"),
    "answer_model": ("answering", "model"),
    "answer_threshold": ("answering", "threshold"),
    "llm_context_tokens": ("answering", "context_tokens"),
    "llm_neighbours": ("answering", "neighbours"),
    **{f"llm_{name}": ("chat_model", name) for name in _CHAT_MODEL},
}
"""Every old flat name: its section and its name there."""

SELECTORS = frozenset({"store", "tokenizer", "embedder"})
"""Old names that are now a section's: ``SHIRABE_STORE=postgres`` is the old name of
``SHIRABE_STORE__BACKEND=postgres``, and ``settings.store`` is the section."""


class SettingsDeprecationWarning(DeprecationWarning):
    """A setting was set or read by its old flat name."""


def env_name(*path: str) -> str:
    """The environment variable of a setting: ``SHIRABE_RETRIEVAL__TOP_K``."""
    return "SHIRABE_" + "__".join(path).upper()


def new_name(old: str) -> str:
    """``retrieval.top_k`` for ``top_k``."""
    return ".".join(RENAMED[old])


def warn_env(old: str, origin: str) -> None:
    """``SHIRABE_<OLD>`` was read from ``origin`` (the environment, a .env file)."""
    warnings.warn(
        f"{env_name(old)} (in {origin}) is deprecated and stops working in shirabe "
        f"{REMOVED_IN}: use {env_name(*RENAMED[old])}",
        SettingsDeprecationWarning,
        stacklevel=2,
    )


def warn_name(old: str, stacklevel: int = 3) -> None:
    """The setting was given or read in Python by its old name."""
    warnings.warn(
        f"the setting {old!r} is deprecated and stops working in shirabe {REMOVED_IN}: use "
        f"{new_name(old)!r} ({env_name(*RENAMED[old])})",
        SettingsDeprecationWarning,
        stacklevel=stacklevel,
    )


def is_old(key: str, value: object) -> bool:
    """Whether ``key: value`` uses an old flat name (a section given as ``store={...}`` or a
    section model does not)."""
    if key not in RENAMED:
        return False
    return key not in SELECTORS or value is None or isinstance(value, str)


def regroup(values: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``values`` with each old flat name moved into its section (a section given as a
    model is taken as the values set in it), and the old names found, in order."""
    grouped: dict[str, Any] = {}
    old: list[str] = []
    for key, value in values.items():
        if is_old(key, value):
            old.append(key)
            continue
        grouped[key] = _set_fields(value) if key in _SECTION_NAMES else value
    for key in old:
        section, name = RENAMED[key]
        current = grouped.setdefault(section, {})
        if isinstance(current, dict):
            current[name] = values[key]
    return grouped, old


_SECTION_NAMES = frozenset(_SECTIONS)


def _set_fields(value: object) -> object:
    """A section model as the values set in it, so that what is not set comes from the
    environment or the .env file as for any other setting."""
    given = getattr(value, "model_fields_set", None)
    if given is None:
        return value
    return {name: getattr(value, name) for name in given}


def section_names() -> frozenset[str]:
    return _SECTION_NAMES
