# size: the library's one facade: every face (CLI, server, page) calls only these methods
"""The library entry point: one object that ingests, searches and answers."""

from __future__ import annotations

import getpass
import logging
import os
import socket
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import replace
from functools import cached_property
from pathlib import Path

from shirabe.access.accounts import Accounts
from shirabe.access.conversations import Conversations
from shirabe.access.map import AccessMap, load_access_map
from shirabe.answering import mentions
from shirabe.answering.followup import carried, carried_in_vain, rewritten, standalone
from shirabe.answering.llm import LLMGenerator
from shirabe.answering.merge import merge_answers
from shirabe.answering.protocol import Generator, StreamingGenerator, answer_events
from shirabe.answering.registry import make_chat, make_generator
from shirabe.chunking.factory import make_chunker
from shirabe.chunking.protocol import Chunker
from shirabe.embedders.protocol import Embedder
from shirabe.embedders.registry import make_embedder
from shirabe.errors import ConfigurationError, ShirabeError, UnsearchableError
from shirabe.indexing.cleanup import PageCleaner
from shirabe.indexing.enrich import Enricher, EnrichmentCache
from shirabe.indexing.ingest import Ingestor, Progress
from shirabe.indexing.passages import chunk_terms
from shirabe.indexing.places import common_root, place_of
from shirabe.indexing.tags import cut_signature
from shirabe.llm.protocol import ChatModel
from shirabe.loaders.protocol import LoadOptions
from shirabe.records import (
    Answer,
    Chunk,
    Document,
    DoneEvent,
    FileResult,
    Filters,
    GenerationEvent,
    Hit,
    IndexStatus,
    IngestReport,
    Turn,
)
from shirabe.retrieval.factory import make_retriever
from shirabe.retrieval.hits import fuse_hits
from shirabe.retrieval.protocol import Retriever
from shirabe.retrieval.query import Query
from shirabe.retrieval.understanding import ModelUnderstanding, RuleUnderstanding, Understanding
from shirabe.settings import Settings, load_synonyms
from shirabe.stores.protocol import Backend, Migration, Store
from shirabe.stores.registry import make_backend
from shirabe.text.normalize import folded
from shirabe.text.paths import readable_path
from shirabe.text.synonyms import Synonyms
from shirabe.text.terms import searchable
from shirabe.tokenizers.protocol import Tokenizer
from shirabe.tokenizers.registry import make_tokenizer

log = logging.getLogger(__name__)

QUESTION_WEIGHT = 2.0
"""In the fusion of several wordings, the user's own words count double: the others are
guesses, and a weak model's guesses can be off the subject."""


DOCUMENT_ROOT = "document_root"
"""The control setting that holds the document root."""
ROOT_CACHE_SECONDS = 5.0
"""How long the document root read from the database is trusted (another process can move
it with ``shirabe root``, which then re-ingests)."""


def local_actor() -> str:
    """Who the audit log names for work done on this machine (a command, a script)."""
    try:
        name = getpass.getuser()
    except (KeyError, OSError):
        name = str(os.getuid()) if hasattr(os, "getuid") else "unknown"
    return f"{name}@{socket.gethostname()} (local)"


def _understands(settings: Settings) -> bool:
    return settings.multi_query or settings.keyword_extraction or settings.decompose


class Shirabe:
    """Index folders of documents and answer questions about them, with citations.

    Components are built from the settings on first use, so constructing this object is cheap;
    any of them can be passed in instead (tests, custom backends).

    >>> app = Shirabe(Settings(home=Path(".shirabe")))   # doctest: +SKIP
    >>> app.ingest([Path("docs")])                        # doctest: +SKIP
    >>> print(app.ask("有給休暇の申請方法は？").text)      # doctest: +SKIP
    """

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        store: Store | None = None,
        embedder: Embedder | None = None,
        tokenizer: Tokenizer | None = None,
        chunker: Chunker | None = None,
        ingest_model: ChatModel | None = None,
    ) -> None:
        """Components not given are made from ``settings``; ``ingest_model`` is the chat model
        that writes at ingest (questions, rewrites of broken PDF pages)."""
        self.settings = settings or Settings()
        self._store = store
        self._embedder = embedder
        self._tokenizer = tokenizer
        self._chunker = chunker
        self._ingest_model_given = ingest_model
        self._writers = threading.RLock()
        self._bound = False
        self._root_read: tuple[float, Path | None] | None = None

    # components

    @cached_property
    def backend(self) -> Backend:
        """The kind of store the settings choose (embedded or PostgreSQL, or a plugin's)."""
        return make_backend(self.settings)

    @property
    def store(self) -> Store:
        if self._store is None:
            self._store = self.backend.open_store()
        return self._store

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = make_embedder(self.settings)
        return self._embedder

    @property
    def tokenizer(self) -> Tokenizer:
        if self._tokenizer is None:
            self._tokenizer = make_tokenizer(self.settings)
        return self._tokenizer

    @property
    def chunker(self) -> Chunker:
        if self._chunker is None:
            self._chunker = make_chunker(self.settings)
        return self._chunker

    @cached_property
    def retriever(self) -> Retriever:
        return make_retriever(self.settings, self.store, self.embedder)

    @cached_property
    def synonyms(self) -> Synonyms:
        path = self.settings.synonyms
        return load_synonyms(path) if path is not None else Synonyms()

    @cached_property
    def accounts(self) -> Accounts:
        """Users, groups and API tokens, kept by the store (this home, or the database)."""
        return Accounts(self.backend.open_accounts())

    @cached_property
    def conversations(self) -> Conversations:
        """Conversations and feedback, per owner, kept with the accounts."""
        return Conversations(self.accounts.database, max_turns=self.settings.max_conversation_turns)

    @cached_property
    def access(self) -> AccessMap:
        return load_access_map(self.settings.access_map, self.settings.default_groups)

    @cached_property
    def generator(self) -> Generator:
        return make_generator(self.settings, self.store, self.embedder)

    def _bind(self) -> Store:
        """Check the index matches our model and tokenizer (once); re-tokenise if it changed."""
        store = self.store
        if not self._bound:
            changed = store.bind(
                embedding_model=self.embedder.name,
                embedding_dim=self.embedder.dim,
                tokenizer=self.tokenizer.signature,
            )
            if changed:
                store.retokenize(lambda chunk: chunk_terms(chunk, self.tokenizer.tokenize))
            self._bound = True
        return store

    # operations

    @property
    def uploads(self) -> Path:
        """Where a server keeps uploaded files: an area of its own, never walked as part of
        the document root."""
        return (self.settings.uploads or self.settings.home / "uploads").resolve()

    @property
    def document_root(self) -> Path | None:
        """The folder documents are known by where they live below (recorded at the first
        ingest, moved only by :meth:`move_root`); None before anything was ingested."""
        now = time.monotonic()
        if self._root_read is None or now - self._root_read[0] > ROOT_CACHE_SECONDS:
            value = self.accounts.control(DOCUMENT_ROOT)
            self._root_read = (now, Path(value) if value else None)
        return self._root_read[1]

    def _root_for(self, paths: Sequence[Path]) -> Path | None:
        """The document root, recorded now from ``paths`` if nothing was ingested before."""
        for path in paths:
            if place_of(path, self.uploads) is not None:
                raise ShirabeError(
                    f"{path} is in the uploads folder {self.uploads}: uploads are ingested by "
                    "the server, with the readers of their own place"
                )
        root = self.document_root
        if root is None and paths:
            first = common_root(paths)
            if first is None:
                raise ShirabeError(f"{paths[0]}: no such file or folder")
            claimed = self.accounts.claim_control(DOCUMENT_ROOT, readable_path(first))
            root, self._root_read = Path(claimed), None
            log.info("document root: %s (recorded by this first ingest)", root)
        return root

    def move_root(
        self, folder: Path | str, progress: Progress | None = None, *, actor: str | None = None
    ) -> IngestReport:
        """Make ``folder`` the document root: it is ingested with every document re-tagged from
        its place below it (key, category, readers), documents outside it leave, and only then
        is the root recorded (in the audit log too). Uploads keep their own area."""
        folder = Path(folder)
        if not folder.is_dir():
            raise ShirabeError(f"{folder}: no such folder")
        new = readable_path(folder)
        who = actor or local_actor()
        report = self.ingest([folder], progress, area=folder, actor=actor)
        store = self.store
        with store.updating():
            for info in store.list_sources():
                if (
                    place_of(info.path, folder) is None
                    and place_of(info.path, self.uploads) is None
                ):
                    store.remove_source(info.path)
                    report.files.append(FileResult(info.path, "removed"))
                    self.accounts.audit(who, "delete", info.path, "outside the new root")
            store.refresh()
        old = self.document_root
        self.accounts.set_control(DOCUMENT_ROOT, new)
        self._root_read = None
        self.accounts.audit(who, "root", new, f"{old} -> {new}")
        return report

    def ingest(
        self,
        paths: Sequence[Path | str],
        progress: Progress | None = None,
        *,
        area: Path | None = None,
        uploader: str | None = None,
        rejected: Sequence[tuple[Path, str]] = (),
        actor: str | None = None,
    ) -> IngestReport:
        """Add new files, replace changed ones, drop deleted ones under ``paths``.

        Every path must lie below the index's document root (the first ingest records it);
        a document's key, category and readers come from where it lives there. ``area`` is
        another root for this run (a server's uploads folder); ``uploader`` names who
        uploaded the files and ``rejected`` lists uploads refused before the run, recorded
        as failures. Uploads, replacements, deletions and changed readers are written to the
        audit log under ``actor`` (default: the local user)."""
        given = [Path(p) for p in paths]
        root = area if area is not None else self._root_for(given)
        if root is None:
            return IngestReport()
        store = self._bind()
        ingestor = self._ingestor(root, area=area, actor=actor)
        with store.updating():
            return ingestor.run(given, progress, uploader=uploader, rejected=rejected)

    def _ingestor(self, root: Path, *, area: Path | None, actor: str | None) -> Ingestor:
        who = actor or local_actor()

        def audit(action: str, key: str, detail: str) -> None:
            self.accounts.audit(who, action, key, detail)

        return Ingestor(
            store=self._bind(),
            chunker=self.chunker,
            tokenizer=self.tokenizer,
            embedder=self.embedder,
            sentence_vectors=self.settings.sentence_vectors,
            pooled_chunk_vectors=self.settings.pooled_chunk_vectors,
            max_file_bytes=self.settings.max_file_bytes,
            root=root,
            refresh_every_files=self.settings.refresh_every_files,
            load_options=LoadOptions(
                passwords=self.settings.passwords,
                max_unzipped_bytes=self.settings.max_unzipped_bytes,
                max_loader_memory=self.settings.max_loader_memory,
                ocr=self.settings.ocr,
                ocr_languages=self.settings.ocr_languages,
            ),
            load_timeout=self.settings.load_timeout,
            load_total=self.settings.max_load_seconds,
            synonyms=self.synonyms,
            access=self.access,
            on_change=audit,
            skip=[] if area == self.uploads else [self.uploads],
            enricher=self.enricher,
            cleaner=self.cleaner,
            cut=cut_signature(self.settings),
        )

    @cached_property
    def enricher(self) -> Enricher | None:
        """Questions and keywords for each passage by the chat model
        (``SHIRABE_ENRICH_QUESTIONS``), or None."""
        if not self.settings.enrich_questions:
            return None
        with self._writers:  # a watcher and an upload may ask at once
            model, origin = self._ingest_model("enrich_questions")
            cache = EnrichmentCache(self.settings.home / "enrichment.sqlite3")
            return Enricher(model, cache, origin)

    @cached_property
    def cleaner(self) -> PageCleaner | None:
        """Rewrites of broken PDF pages by the chat model (``SHIRABE_CLEAN_PDF_PAGES``), or
        None."""
        settings = self.settings
        if not settings.clean_pdf_pages:
            return None
        with self._writers:
            model, origin = self._ingest_model("clean_pdf_pages")
            cache = EnrichmentCache(settings.home / "enrichment.sqlite3")
            return PageCleaner(model, cache, origin, settings.clean_page_max_chars)

    def _ingest_model(self, setting: str) -> tuple[ChatModel, str]:
        """The chat model that writes at ingest (one for every use), and where it is."""
        model = self._ingest_model_given
        if model is None:
            model = self.__dict__.get("_writer")
        if model is None:
            model = make_chat(self.settings)
            if model is None:
                raise ConfigurationError(
                    f"{setting} needs a chat model: set SHIRABE_GENERATOR (llama, openai or "
                    "azure) and its model"
                )
            self.__dict__["_writer"] = model
        settings = self.settings
        origin = str(
            settings.llm_model_path
            or settings.llm_base_url
            or settings.llm_azure_endpoint
            or settings.llm_preset
            or ""
        )
        return model, origin

    def passages(self, paths: Sequence[Path | str]) -> Iterator[tuple[str, list[Chunk]]]:
        """Each file under ``paths`` with the passages an ingest would make of it, without
        embedding or storing anything."""
        for key, _document, chunks in self.documents(paths):
            yield key, chunks

    def documents(self, paths: Sequence[Path | str]) -> Iterator[tuple[str, Document, list[Chunk]]]:
        """Each file under ``paths`` as an ingest would read it (loaded, and its passages),
        without embedding or storing anything."""
        given = [Path(p) for p in paths]
        root = self.document_root or common_root(given)  # an estimate records no root
        if root is not None:
            yield from self._ingestor(root, area=None, actor=None).documents(given)

    def key_of(self, path: Path | str) -> str:
        """The key a file is (or would be) stored under."""
        root = self.document_root
        place = place_of(path, root) if root is not None else None
        return place.key if place is not None else readable_path(path)

    def remove(self, path: Path | str, *, actor: str | None = None) -> int:
        """Drop a file, or every file under a folder, from the index. Returns how many."""
        store = self.store
        key = path if isinstance(path, str) and store.get_source(path) else self.key_of(path)
        keys = [key] + [info.path for info in store.list_sources(under=key)]
        removed = 0
        with store.updating():
            for gone in dict.fromkeys(keys):
                if store.remove_source(gone):
                    removed += 1
                    self.accounts.audit(actor or local_actor(), "delete", gone, "removed")
            store.refresh()
        return removed

    @cached_property
    def understanding(self) -> Understanding:
        """Query understanding by the answering chat model if there is one, else by rules."""
        rules = RuleUnderstanding(self.tokenizer)
        generator = self.generator
        if isinstance(generator, LLMGenerator):
            return ModelUnderstanding(generator.chat, rules)
        return rules

    def query(
        self, text: str, filters: Filters | None = None, keywords: Sequence[str] = ()
    ) -> Query:
        """The question as the retrievers see it. Official names it mentions (synonyms file)
        restrict it to the documents naming them, and join its lexical terms, as do
        ``keywords``."""
        expansion: list[str] = list(keywords)
        matches = self.synonyms.matches(text) if self.synonyms else {}
        names = frozenset(matches.values())
        if names:
            expansion += sorted(n for n in names if n not in text)
            if self.settings.entity_filters and not (filters and filters.entities):
                filters = replace(filters or Filters(), entities=names)
        return Query(
            text,
            tokenizer=self.tokenizer,
            embedder=self.embedder,
            filters=filters,
            expansion=expansion,
            aliases=list(matches),
        )

    def retrieve(
        self, question: str, k: int, filters: Filters | None = None
    ) -> tuple[Query, list[Hit], list[str]]:
        """The question's query, its hits, and what else was searched (query understanding:
        keywords, other wordings, and the rewritten question of a first step)."""
        settings = self.settings
        retriever = self.retriever
        understanding = self.understanding if _understands(settings) else None
        if understanding is None:
            query = self.query(question, filters)
            return query, retriever.retrieve(query, k), []
        keywords = understanding.keywords(question) if settings.keyword_extraction else []
        query = self.query(question, filters, keywords)
        queries = [query]
        searches: list[str] = []
        if settings.multi_query:
            for text in understanding.paraphrases(question, settings.multi_query_count):
                queries.append(self.query(text, filters, keywords))
                searches.append(text)
        extra: list[list[Hit]] = []
        if settings.decompose:
            step = understanding.first_step(question)
            if step:
                step_query = self.query(step, filters)
                step_hits = retriever.retrieve(step_query, k)
                extra.append(step_hits)
                searches.append(step)
                found = self.generator.generate(step_query, step_hits)
                if not found.refused:
                    rewritten = understanding.rewrite(question, step, found.text)
                    if rewritten.strip() != question.strip():
                        queries.append(self.query(rewritten, filters, keywords))
                        searches.append(rewritten)
        if keywords:
            searches.append("keywords: " + " ".join(keywords))
        if len(queries) == 1 and not extra:
            return query, retriever.retrieve(query, k), searches
        depth = max(2 * k, 10)
        lists = [retriever.retrieve(q, depth) for q in queries] + extra
        weights = [QUESTION_WEIGHT] + [1.0] * (len(lists) - 1)
        return query, fuse_hits(lists, k, rrf_k=settings.rrf_k, weights=weights), searches

    def check_question(self, text: str) -> None:
        """Refuse a question or search with nothing to search for (:class:`UnsearchableError`):
        empty, punctuation or emoji only, ``' OR 1=1 --``. Otherwise the best-ranked passage
        of nothing would be given as an answer."""
        if not searchable(self.tokenizer.tokenize(text)):
            raise UnsearchableError(text)

    def search(
        self, text: str, *, k: int | None = None, filters: Filters | None = None
    ) -> list[Hit]:
        """Ranked passages for a query, each with the per-retriever evidence."""
        self.check_question(text)
        store = self._bind()
        store.refresh(wait=False)
        return self.retrieve(text, k or self.settings.top_k, filters)[1]

    def parts(self, question: str) -> list[str]:
        """Questions asked together, when ``decompose`` is on; else ``[]``."""
        return self.understanding.parts(question) if self.settings.decompose else []

    def ask(
        self,
        question: str,
        *,
        k: int | None = None,
        filters: Filters | None = None,
        history: Sequence[Turn] = (),
    ) -> Answer:
        """Answer from the documents with numbered citations, or refuse.

        ``history`` holds the conversation's earlier turns, oldest first: a follow-up
        (「それは何時に復旧しましたか？」) is made standalone before retrieval and the answer
        carries that form in ``standalone``. With ``decompose`` on, questions asked together
        are answered one by one and the answers joined, citations numbered across them.
        """
        self.check_question(question)
        store = self._bind()
        store.refresh(wait=False)
        return self._ask(question, self.standalone(question, history), k, filters, history)

    def standalone(self, question: str, history: Sequence[Turn]) -> str:
        """``question`` as it would be asked with no conversation before it: made so by rules
        (:mod:`shirabe.answering.followup`) and, when they find it needs the conversation and
        a chat model answers, written by the model."""
        if not history:
            return question
        ruled = standalone(question, history)
        generator = self.generator
        if ruled == question or not isinstance(generator, LLMGenerator):
            return ruled
        return rewritten(generator.chat, question, history, ruled)

    def _ask(
        self,
        question: str,
        asked: str,
        k: int | None,
        filters: Filters | None,
        history: Sequence[Turn],
    ) -> Answer:
        started = time.perf_counter()
        parts = self.parts(asked)
        if parts:
            answers = [self._answer(part, k, filters) for part in parts]
            answer = merge_answers(asked, parts, answers)
            answer.searches = parts
            answer.timings["total"] = time.perf_counter() - started
        else:
            answer = self._answer(asked, k, filters, _said(question, history))
            again = carried(question, history) if answer.refused and asked == question else None
            if again is not None:  # 「発売日はいつですか？」 alone found nothing: of what?
                retried = self._answer(again, k, filters, _said(question, history))
                if not retried.refused:
                    answer, asked = retried, again
            elif answer.refused and self._named(
                carried_in_vain(answer.refusal_reason, question, asked, history), filters
            ):  # a new topic (有給休暇の申請方法は？ after AQ-300): asked as written
                alone = self._answer(question, k, filters)
                if not alone.refused:
                    answer, asked = alone, question
        return _asked_as(answer, question, asked)

    def _named(self, terms: Sequence[str], filters: Filters | None) -> bool:
        """Whether the documents the asker may read name every one of ``terms`` somewhere
        (AQ-300 is a product of theirs; INC-2024-0099 is no incident of theirs)."""
        if not terms:
            return False
        for term in terms:
            hits = self.search(term, k=5, filters=filters)
            if not any(term.lower() in folded(h.chunk.text) for h in hits):
                return False
        return True

    def _answer(
        self,
        question: str,
        k: int | None,
        filters: Filters | None,
        conversation: Sequence[str] = (),
    ) -> Answer:
        """The answer to ``question``; ``conversation`` is the conversation it was asked in
        (:attr:`Query.conversation`)."""
        timings: dict[str, float] = {}
        started = time.perf_counter()
        query, hits, searches = self.retrieve(question, k or self.settings.top_k, filters)
        query.conversation = tuple(conversation)
        timings["retrieve"] = time.perf_counter() - started
        mark = time.perf_counter()
        answer = self._generate(query, hits)
        timings["generate"] = time.perf_counter() - mark
        timings["total"] = time.perf_counter() - started
        answer.timings = {**answer.timings, **timings}
        answer.searches = searches
        return answer

    def _generate(self, query: Query, hits: list[Hit]) -> Answer:
        """The generator's answer; when no passage held the kind of fact asked (a weight for
        何kg), it is looked for once more in twice as many passages of the same documents,
        searched with the words documents use for what is asked (重さ is written 質量; the
        spec table's row may rank just below the first ``k``)."""
        answer = self.generator.generate(query, hits)
        if answer.refused and answer.refusal_code == "kind" and hits:
            sources = {h.chunk.source for h in hits}
            spelled = mentions.spellings(query.text)
            wider = (
                self.query(query.text, query.filters, [*query.expansion, *spelled])
                if spelled
                else query
            )
            deeper = [
                h
                for h in self.retriever.retrieve(wider, 2 * len(hits))
                if h.chunk.source in sources
            ]
            if len(deeper) > len(hits):
                again = self.generator.generate(query, deeper)
                if not again.refused:
                    return again
        return answer

    def ask_stream(
        self,
        question: str,
        *,
        k: int | None = None,
        filters: Filters | None = None,
        history: Sequence[Turn] = (),
    ) -> Iterator[GenerationEvent]:
        """``ask`` as a stream of events: hits, answer text tokens, citations, then the finished
        answer (``DoneEvent``), or an ``ErrorEvent`` if the model server fails midway.

        Generators that cannot stream give their whole text as one token. A question with
        nothing to search for is refused here, before the first event.
        """
        self.check_question(question)
        return self._stream(question, k, filters, history)

    def _stream(
        self, question: str, k: int | None, filters: Filters | None, history: Sequence[Turn]
    ) -> Iterator[GenerationEvent]:
        store = self._bind()
        store.refresh(wait=False)
        asked = self.standalone(question, history)
        streams = isinstance(self.generator, StreamingGenerator)
        if self.parts(asked) or (history and not streams):  # one block of text, as ask gives
            yield from answer_events(self._ask(question, asked, k, filters, history))
            return
        started = time.perf_counter()
        query, hits, searches = self.retrieve(asked, k or self.settings.top_k, filters)
        query.conversation = _said(question, history)
        retrieved = time.perf_counter() - started
        generator = self.generator
        if isinstance(generator, StreamingGenerator):
            events = generator.stream(query, hits)
        else:
            events = answer_events(self._generate(query, hits))
        for event in events:
            if isinstance(event, DoneEvent):
                total = time.perf_counter() - started
                event.answer.timings = {
                    **event.answer.timings,
                    "retrieve": retrieved,
                    "generate": total - retrieved,
                    "total": total,
                }
                event.answer.searches = searches
                _asked_as(event.answer, question, asked)
            yield event

    def status(self) -> IndexStatus:
        return self.store.status()

    def ingest_runs(self, limit: int = 20) -> list[dict[str, object]]:
        """The newest ingest runs first, with their counts (index-wide: for admins)."""
        return self.store.ingest_runs(limit)

    def migrate(self, *, embeddings_from: Path | None = None) -> Migration:
        """Bring the store's schema up to date (every command also does on opening it); with
        ``embeddings_from``, copy that embedded index's embedding cache into the store."""
        return self.backend.migrate(embeddings_from=embeddings_from)

    def close(self) -> None:
        for writer in ("enricher", "cleaner", "_writer"):
            part = self.__dict__.get(writer)
            if part is not None:
                part.close()
        generator = self.__dict__.get("generator")  # only if it was ever made
        close_generator = getattr(generator, "close", None)
        if callable(close_generator):
            close_generator()  # a model server's HTTP connections
        accounts = self.__dict__.get("accounts")
        if accounts is not None:
            accounts.close()
        if self._store is not None:
            self._store.close()

    def __enter__(self) -> Shirabe:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


EARLIER_SAID = 2
"""Earlier questions a chat model reads before a follow-up."""


def _said(question: str, history: Sequence[Turn]) -> tuple[str, ...]:
    """The conversation ``question`` was asked in: its last earlier questions, then
    ``question`` as it was asked; empty without earlier turns."""
    if not history:
        return ()
    return (*(t.question for t in history[-EARLIER_SAID:]), question)


def _asked_as(answer: Answer, question: str, asked: str) -> Answer:
    """The answer to ``asked`` shown as the answer to ``question``, with the standalone form
    when a conversation changed it."""
    answer.question = question
    if asked != question:
        answer.standalone = asked
    return answer
