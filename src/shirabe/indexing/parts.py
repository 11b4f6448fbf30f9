"""What an :class:`~shirabe.indexing.ingest.Ingestor` is made of: the parts it indexes files
with (:class:`IngestParts`) and the settings it reads and indexes them by
(:class:`IngestOptions`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from shirabe.access.map import AccessMap
from shirabe.chunking.protocol import Chunker
from shirabe.embedders.protocol import Embedder
from shirabe.indexing.cleanup import PageCleaner
from shirabe.indexing.enrich import Enricher
from shirabe.loaders.protocol import LoadOptions
from shirabe.stores.protocol import Store
from shirabe.text.synonyms import Synonyms
from shirabe.tokenizers.protocol import Tokenizer


@dataclass(frozen=True, slots=True)
class IngestParts:
    """The store a file is written to and what cuts, tokenises and embeds its text; the
    synonyms and access map that tag it; and the chat model's writers the settings turn on
    (questions and keywords for each passage, rewrites of broken PDF pages)."""

    store: Store
    chunker: Chunker
    tokenizer: Tokenizer
    embedder: Embedder
    synonyms: Synonyms = field(default_factory=Synonyms)
    access: AccessMap = field(default_factory=AccessMap)
    enricher: Enricher | None = None
    cleaner: PageCleaner | None = None


@dataclass(frozen=True, slots=True)
class IngestOptions:
    """How files are read and indexed: the largest file read; what a loader may use and for
    how long (one file, and a whole run); whether sentences get vectors of their own and
    chunk vectors are pooled from them; after how many changed files a run merges the store's
    segments; and the signature of the settings files are read and cut with
    (``tags.cut_signature``: a change reads them again)."""

    max_file_bytes: int
    sentence_vectors: bool
    pooled_chunk_vectors: bool = False
    refresh_every_files: int = 200
    load_options: LoadOptions = field(default_factory=LoadOptions)
    load_timeout: float | None = None
    load_total: float | None = None
    cut: str = ""


def ingest_signature(parts: IngestParts, options: IngestOptions) -> str:
    """What a file's tags version says it was indexed with besides its own bytes: the
    synonyms and access map, the settings it was read and cut with, the chunker, and the
    chat model's writers; a file indexed under another signature is read again."""
    signature = f"{parts.synonyms.signature}:{parts.access.signature}"
    if options.cut:  # files read or cut with other settings (tags.cut_signature): again
        signature += f":{options.cut}"
    # cut by another chunker, or another version of it: again (one written before
    # chunkers had a signature has none)
    if chunked_by := getattr(parts.chunker, "signature", ""):
        signature += f":chunker={chunked_by}"
    if parts.enricher is not None:  # files indexed without (or with other) texts: again
        signature += f":{parts.enricher.signature}"
    if parts.cleaner is not None:
        signature += f":{parts.cleaner.index_signature}"
    if parts.enricher is not None or parts.cleaner is not None:  # re-tokenising loses their terms
        signature += f":{parts.tokenizer.signature}"
    return signature
