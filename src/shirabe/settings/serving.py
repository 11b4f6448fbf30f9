"""The sections of the settings that shape answers and the server: how passages are found
(``retrieval``), how answers are written (``answering``), the chat model that writes them
(``chat_model``), and the HTTP and MCP server (``server``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, ClassVar, Literal

from pydantic import Field, field_validator
from pydantic_settings import NoDecode

from shirabe.settings.files import host_entry, parse_lifetime
from shirabe.settings.sections import Section, registered


class RetrievalSettings(Section):
    """How passages are found: the retrievers, their fusion, names, and query understanding
    (a chat model when one is configured, else rules)."""

    name_in_settings: ClassVar[str] = "retrieval"

    retriever: str = Field(
        default="hybrid",
        description="A 'shirabe.retrievers' entry point: hybrid (all four signals), bm25 or dense.",
    )

    fusion: Literal["zscore", "rrf", "convex"] = Field(
        default="zscore", description="How the signals' lists are fused."
    )
    rrf_k: int = Field(default=60, ge=1, description="The constant of reciprocal rank fusion.")
    bm25_weight: float = Field(default=1.0, ge=0, description="Chunk-level BM25 in fusion.")
    bm25_sentence_weight: float = Field(default=1.0, ge=0, description="Best-sentence BM25.")
    dense_weight: float = Field(default=1.0, ge=0, description="Chunk-level cosine in fusion.")
    dense_sentence_weight: float = Field(default=1.0, ge=0, description="Best-sentence cosine.")
    candidates: int = Field(default=100, ge=1, description="Hits each retriever hands to fusion.")
    mmr_lambda: float | None = Field(
        default=None, ge=0, le=1, description="Diversify results with MMR when set."
    )
    top_k: int = Field(default=5, ge=1, description="Passages returned and given to the answer.")
    synonyms: Path | None = Field(
        default=None,
        description="YAML file of official names and their aliases: documents are tagged with "
        "the names they mention, and a question naming one searches only those documents.",
    )
    entity_filters: bool = Field(
        default=True, description="Restrict retrieval to documents naming the question's names."
    )
    multi_query: bool = Field(
        default=False,
        description="Also search other wordings of the question (a model's 3 paraphrases; "
        "without one, the question stripped of its ending and its keywords) and fuse by RRF.",
    )
    multi_query_count: int = Field(
        default=3, ge=1, le=8, description="How many paraphrases a model writes."
    )
    keyword_extraction: bool = Field(
        default=False, description="Add the question's keywords to the lexical query."
    )
    decompose: bool = Field(
        default=False,
        description="Answer questions asked together one by one; with a model, also look up "
        "the fact a question hinges on first and search the question rewritten with it.",
    )

    @field_validator("retriever")
    @classmethod
    def _retriever(cls, value: str) -> str:
        return registered("retrievers", value) or value


class AnswerSettings(Section):
    """How answers are written (the ``shirabe.generators`` family), and what a chat model
    that writes them is given."""

    name_in_settings: ClassVar[str] = "answering"

    generator: str = Field(
        default="extractive",
        description="How answers are written: a 'shirabe.generators' entry point (extractive: "
        "quoted sentences), or a 'shirabe.chat_models' entry point, a chat model writing from "
        "the passages: an OpenAI-compatible server (openai), Azure OpenAI (azure), or a GGUF "
        "file run in-process (llama).",
    )
    max_chars: int = Field(
        default=150, ge=20, description="The most characters of an extractive answer's lines."
    )
    model: Path | None = Field(
        default=None,
        description="The learned answer model file (default: the one shipped with shirabe; "
        "`shirabe answerer train` makes one).",
    )
    threshold: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        description="Refuse when the calibrated probability that the passages answer the "
        "question is below this (default: the model file's, chosen for at most 3% of "
        "answerable development questions refused).",
    )
    context_tokens: int = Field(
        default=2000,
        ge=100,
        description="Budget for the passages in a chat model's prompt, in tokens (the model's "
        "tokenizer in-process; a safe estimate for servers).",
    )
    neighbours: bool = Field(
        default=True,
        description="Spend unused passage budget on the chunks around a hit in its section.",
    )

    @field_validator("generator")
    @classmethod
    def _generator(cls, value: str) -> str:
        registered("generators", value)
        return value


class ChatModelSettings(Section):
    """The chat model (the ``shirabe.chat_models`` family): an OpenAI-compatible server,
    Azure OpenAI, or a GGUF file run in-process."""

    name_in_settings: ClassVar[str] = "chat_model"

    preset: Literal["lmstudio", "ollama", "llamacpp", "vllm", "openai"] | None = Field(
        default=None, description="Fills base_url with the server's usual address."
    )
    base_url: str | None = Field(
        default=None, description="Chat Completions base URL, e.g. http://localhost:1234/v1."
    )
    model: str | None = Field(
        default=None, description="Model name (default: the first model the server lists)."
    )
    api_key_env: str = Field(
        default="SHIRABE_LLM_API_KEY",
        description="Name of the environment variable holding the API key (read per call).",
    )
    temperature: float = Field(default=0.0, ge=0, le=2, description="Sampling temperature.")
    max_tokens: int = Field(default=512, ge=1, description="The longest reply, in tokens.")
    timeout: float = Field(default=60.0, gt=0, description="Seconds per request.")
    retries: int = Field(
        default=2, ge=0, description="Retries on connection errors, 429 and 5xx, with backoff."
    )
    context_window: int | None = Field(
        default=None,
        ge=256,
        description="The server model's context length, if the passage budget must fit it.",
    )
    azure_endpoint: str | None = Field(
        default=None, description="Azure OpenAI resource, e.g. https://NAME.openai.azure.com."
    )
    azure_deployment: str | None = Field(default=None, description="Azure deployment name.")
    azure_api_version: str = Field(default="2024-10-21", description="Azure api-version.")
    model_path: Path | None = Field(
        default=None, description="GGUF file for generator 'llama' (in-process llama.cpp)."
    )
    n_ctx: int = Field(default=4096, ge=512, description="Context window for 'llama'.")
    threads: int | None = Field(
        default=None, ge=1, description="CPU threads for 'llama' (default: all cores)."
    )
    chat_format: str | None = Field(
        default=None,
        description="llama-cpp-python chat format for 'llama' (default: the GGUF's template).",
    )


class ServerSettings(Section):
    """The HTTP API, the page, ``/v1`` and ``/mcp``, and ``shirabe mcp``."""

    name_in_settings: ClassVar[str] = "server"

    host: str = Field(default="127.0.0.1", description="Address `shirabe serve` listens on.")
    port: int = Field(default=8000, ge=0, le=65535, description="Port `shirabe serve` uses.")
    anonymous: Literal["off", "localhost", "on"] = Field(
        default="off",
        description="Requests without a token: refused (off), allowed from this machine only "
        "(localhost), or allowed (on); anonymous readers see the public group only.",
    )
    allowed_hosts: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Names the server answers to besides localhost, 127.0.0.1, [::1] and the "
        "listen address (SHIRABE_SERVER__HOST): a request naming another Host is refused (421). "
        "A server reached by a domain name or another address must list it "
        "(SHIRABE_SERVER__ALLOWED_HOSTS=docs.example.com,10.0.0.5); '*': any name.",
    )
    sign_in_attempts: int = Field(
        default=10,
        ge=1,
        description="Failed sign-ins (a wrong, revoked or expired token) a client address may "
        "make within a minute; then its requests with a token are answered 429 until the "
        "minute is over.",
    )
    token_lifetime: str | None = Field(
        default=None,
        description="How long a token made by `shirabe tokens create` lasts when no --expires "
        "is given, and the longest --expires allowed (90d, 12h, 8w); None: no limit.",
    )
    example_questions: Path | None = Field(
        default=None,
        description="An eval case file (YAML) whose questions the page offers on an empty chat, "
        "each only to those who may read its expected document; without it, questions are "
        "made from the headings of the documents the reader may read.",
    )
    max_conversation_turns: int = Field(
        default=200, ge=1, description="Turns kept per conversation; a longer one must start anew."
    )
    max_answer_versions: int = Field(
        default=10,
        ge=1,
        le=100,
        description="Answers kept per question of a conversation (each 再生成 keeps one more); "
        "asking again beyond it is refused (409).",
    )
    export_bytes: int = Field(
        default=2_000_000,
        ge=10_000,
        description="The largest conversation a Markdown export writes, in bytes; the turns "
        "past it are left out, and the file says so.",
    )
    model_titles: bool = Field(
        default=True,
        description="A new conversation is titled by the answering chat model, when there is "
        "one (from its first question only); off, or without a model: by the question's key "
        "terms.",
    )
    mcp_user: str | None = Field(
        default=None,
        description="The user `shirabe mcp` (stdio) reads as; without one, public documents "
        "only, and only when anonymous access is not off.",
    )
    document_text_chars: int = Field(
        default=100_000,
        ge=1000,
        description="The most characters of a document's text one MCP get_document call or "
        "document resource returns (the rest is cut, and said so).",
    )
    uploads: Path | None = Field(
        default=None,
        description="Where the server keeps uploaded files (default <home>/uploads); servers "
        "sharing one database should share this folder too.",
    )

    @field_validator("allowed_hosts", mode="before")
    @classmethod
    def _host_list(cls, value: object) -> object:
        """A list, or a comma-separated string
        (SHIRABE_SERVER__ALLOWED_HOSTS=a.example,b.example)."""
        if isinstance(value, str):
            if value.lstrip().startswith("["):
                return json.loads(value)
            return [part for part in value.split(",") if part.strip()]
        return value

    @field_validator("allowed_hosts")
    @classmethod
    def _host_names(cls, value: list[str]) -> list[str]:
        return [host_entry(v) for v in value]

    @field_validator("token_lifetime")
    @classmethod
    def _lifetime(cls, value: str | None) -> str | None:
        if value is not None:
            parse_lifetime(value)
        return value
