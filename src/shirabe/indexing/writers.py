"""What a chat model writes at ingest: questions and keywords for each passage
(``SHIRABE_INGEST__ENRICH_QUESTIONS``) and rewrites of broken PDF pages
(``SHIRABE_INGEST__CLEAN_PDF_PAGES``).
One chat model serves both, made when first needed."""

from __future__ import annotations

import threading
from functools import cached_property

from shirabe.errors import ConfigurationError
from shirabe.indexing.cleanup import PageCleaner
from shirabe.indexing.enrich import Enricher, EnrichmentCache
from shirabe.llm.protocol import ChatModel
from shirabe.llm.registry import make_chat_model
from shirabe.settings import Settings


class IngestWriters:
    """The enricher and the page cleaner the settings turn on, with their chat model."""

    def __init__(self, settings: Settings, model: ChatModel | None = None) -> None:
        """``model`` writes when given, else the chat model the settings name."""
        self._settings = settings
        self._model = model
        self._made: ChatModel | None = None
        self._open: list[Enricher | PageCleaner | ChatModel] = []
        self._lock = threading.RLock()  # a watcher and an upload may ask at once

    @cached_property
    def enricher(self) -> Enricher | None:
        """Questions and keywords for each passage, or None."""
        if not self._settings.ingest.enrich_questions:
            return None
        with self._lock:
            model, origin = self._writer("enrich_questions")
            enricher = Enricher(model, self._cache(), origin)
            self._open.append(enricher)
            return enricher

    @cached_property
    def cleaner(self) -> PageCleaner | None:
        """Rewrites of broken PDF pages, or None."""
        ingest = self._settings.ingest
        if not ingest.clean_pdf_pages:
            return None
        with self._lock:
            model, origin = self._writer("clean_pdf_pages")
            cleaner = PageCleaner(model, self._cache(), origin, ingest.clean_page_max_chars)
            self._open.append(cleaner)
            return cleaner

    def close(self) -> None:
        """Let go of the enricher and the page cleaner, then of the chat model made here."""
        for part in self._open:
            part.close()
        if self._made is not None:
            self._made.close()

    def _cache(self) -> EnrichmentCache:
        return EnrichmentCache(self._settings.home / "enrichment.sqlite3")

    def _writer(self, setting: str) -> tuple[ChatModel, str]:
        """The chat model that writes (one for every use), and where it is."""
        model = self._model or self._made
        if model is None:
            settings = self._settings
            model = self._made = make_chat_model(settings.answering.generator, settings.chat_model)
            if model is None:
                raise ConfigurationError(
                    f"{setting} needs a chat model: set SHIRABE_ANSWERING__GENERATOR (llama, "
                    "openai or azure) and its model"
                )
        options = self._settings.chat_model
        origin = str(
            options.model_path or options.base_url or options.azure_endpoint or options.preset or ""
        )
        return model, origin
