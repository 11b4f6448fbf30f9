"""How the parts of one index are made from its settings, each once, when first used.

:class:`Assembly` builds every component the engine composes: the store and its backend, the
embedder, tokenizer, chunker and retriever, the accounts with their sessions and directory
users, conversations and access map, the answer generator and its query understanding, the
searcher, planner and answer stage, the ingest-time writers, the document root and the
indexer. Constructing it is cheap; a store,
embedder, tokenizer, chunker or ingest-time chat model can be passed in instead (tests, custom
backends). :class:`shirabe.engine.Shirabe` is the assembly with the operations.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import Protocol, TypeVar

from shirabe.access.accounts import Accounts
from shirabe.access.audit import AuditWriter
from shirabe.access.directory import Directory, load_group_map
from shirabe.access.map import AccessMap, AccessMapFile
from shirabe.access.people import People
from shirabe.access.sessions import Sessions
from shirabe.answering.answerer import Answerer
from shirabe.answering.planner import Planner
from shirabe.answering.protocol import Generator
from shirabe.answering.registry import make_generator
from shirabe.chunking.protocol import Chunker
from shirabe.chunking.registry import make_chunker
from shirabe.conversations import Conversations, Titles
from shirabe.embedders.protocol import Embedder
from shirabe.embedders.registry import make_embedder
from shirabe.indexing.catalog import Catalog
from shirabe.indexing.crew import local_workers
from shirabe.indexing.factory import ingest_options
from shirabe.indexing.indexer import Indexer
from shirabe.indexing.ingest import Ingestor
from shirabe.indexing.page_images import PageImages
from shirabe.indexing.parts import IngestParts, ingest_signature
from shirabe.indexing.passages import chunk_terms
from shirabe.indexing.readers import Readers
from shirabe.indexing.root import DocumentRoot
from shirabe.indexing.spread import SpreadIngest
from shirabe.indexing.uploads import Uploads
from shirabe.indexing.workers import Worker
from shirabe.indexing.writers import IngestWriters
from shirabe.llm.protocol import ChatModel
from shirabe.retrieval.protocol import Retriever
from shirabe.retrieval.registry import make_retriever
from shirabe.retrieval.searcher import Searcher
from shirabe.retrieval.understanding import ModelUnderstanding, RuleUnderstanding, Understanding
from shirabe.settings import Settings, load_synonyms
from shirabe.stores.protocol import Backend, Store
from shirabe.stores.queue import WorkQueue, WorkRun, open_queue
from shirabe.stores.registry import make_backend
from shirabe.text.synonyms import Synonyms
from shirabe.tokenizers.protocol import Tokenizer
from shirabe.tokenizers.registry import make_tokenizer


class Closable(Protocol):
    def close(self) -> None: ...


C = TypeVar("C", bound=Closable)

NAMED_DEPTH = 5
"""Passages searched for a term a refusal names, to tell whether the documents name it."""


class Assembly:
    """The components of one index, made from ``settings`` when first used."""

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
        given = {"store": store, "embedder": embedder, "tokenizer": tokenizer, "chunker": chunker}
        self.__dict__.update({name: part for name, part in given.items() if part is not None})
        self._ingest_model = ingest_model
        self._bound = False
        self._open: list[Closable] = [store] if store is not None else []
        """What this assembly holds open, oldest first: closed newest first."""

    def _opened(self, part: C) -> C:
        """``part``, to be closed with the assembly."""
        self._open.append(part)
        return part

    def close(self) -> None:
        """Let go of what was opened (chat models, the accounts' database, the store),
        newest first."""
        while self._open:
            self._open.pop().close()

    # components, each made once when first used

    @cached_property
    def backend(self) -> Backend:
        """The kind of store the settings choose (embedded or PostgreSQL, or a plugin's)."""
        return make_backend(self.settings.store, self.settings.home)

    @cached_property
    def store(self) -> Store:
        return self._opened(self.backend.open_store())

    @cached_property
    def embedder(self) -> Embedder:
        return make_embedder(self.settings.embedder)

    @cached_property
    def tokenizer(self) -> Tokenizer:
        return make_tokenizer(self.settings.tokenizer)

    @cached_property
    def chunker(self) -> Chunker:
        return make_chunker(self.settings.ingest)

    @cached_property
    def retriever(self) -> Retriever:
        return make_retriever(self.settings.retrieval, self.store, self.embedder)

    @cached_property
    def synonyms(self) -> Synonyms:
        path = self.settings.retrieval.synonyms
        return load_synonyms(path) if path is not None else Synonyms()

    @cached_property
    def accounts(self) -> Accounts:
        """Users, groups and API tokens, kept by the store (this home, or the database)."""
        return self._opened(Accounts(self.backend.open_accounts()))

    @cached_property
    def sessions(self) -> Sessions:
        """Browsers signed in to the page, kept with the accounts."""
        return Sessions(self.accounts)

    @cached_property
    def directory(self) -> Directory:
        """Users who sign in with the company's accounts, with the groups the group map
        (``sign_in.group_map``) gives their directory groups."""
        sign_in = self.settings.sign_in
        return Directory(self.accounts, load_group_map(sign_in.group_map, sign_in.admin_groups))

    @cached_property
    def conversations(self) -> Conversations:
        """Conversations and feedback, per owner, kept with the accounts; new ones titled
        by the answering chat model (if any, and titles by it are on), else by key terms."""
        server = self.settings.server
        titles = Titles(
            lambda: self.tokenizer,
            lambda: self.generator.chat_model if server.model_titles else None,
        )
        return Conversations(
            self.accounts.database,
            max_turns=server.max_conversation_turns,
            max_versions=server.max_answer_versions,
            titles=titles,
        )

    @cached_property
    def people(self) -> People:
        """Users, groups and tokens as the command line and the admin page change them,
        audited (:mod:`shirabe.access.people`)."""
        return People(self.accounts, token_lifetime=self.settings.server.token_lifetime)

    @cached_property
    def access_file(self) -> AccessMapFile:
        """The access map file of the settings (read again when it changes)."""
        ingest = self.settings.ingest
        return AccessMapFile(ingest.access_map, ingest.default_groups)

    @property
    def access(self) -> AccessMap:
        """The access map in effect now."""
        return self.access_file.current()

    @cached_property
    def generator(self) -> Generator:
        s = self.settings
        return self._opened(make_generator(s.answering, s.chat_model, self.store, self.embedder))

    @cached_property
    def understanding(self) -> Understanding:
        """Query understanding by the answering chat model if there is one, else by rules."""
        rules = RuleUnderstanding(self.tokenizer)
        model = self.generator.chat_model
        return rules if model is None else ModelUnderstanding(model, rules)

    @cached_property
    def searcher(self) -> Searcher:
        return Searcher(
            self.settings.retrieval,
            tokenizer=self.tokenizer,
            embedder=self.embedder,
            retriever=self.retriever,
            synonyms=self.synonyms,
            understanding=lambda: self.understanding,
            step_answer=lambda query, hits: self.generator.generate(query, hits),  # noqa: PLW0108
        )

    @cached_property
    def planner(self) -> Planner:
        return Planner(
            chat_model=lambda: self.generator.chat_model,
            understanding=lambda: self.understanding,
            decompose=self.settings.retrieval.decompose,
            search=lambda term, filters: self.searcher.retrieve(term, NAMED_DEPTH, filters).hits,
        )

    @cached_property
    def answerer(self) -> Answerer:
        return Answerer(self.generator, self.searcher)

    @cached_property
    def writers(self) -> IngestWriters:
        """The enricher and page cleaner the settings turn on, with their chat model."""
        return self._opened(IngestWriters(self.settings, self._ingest_model))

    @cached_property
    def catalog(self) -> Catalog:
        """What each reader may see of the index (:mod:`shirabe.indexing.catalog`)."""
        return Catalog(self.store)

    @cached_property
    def root(self) -> DocumentRoot:
        """The document root (recorded at the first ingest) and the uploads area."""
        uploads = (self.settings.server.uploads or self.settings.home / "uploads").resolve()
        return DocumentRoot(self.accounts, uploads)

    @property
    def uploads(self) -> Path:
        """Where a server keeps uploaded files: an area of its own, never walked as part of
        the document root."""
        return self.root.uploads

    @property
    def upload_desk(self) -> Uploads:
        """Where each upload goes, who will read it, whether its uploader may put it there
        (:mod:`shirabe.indexing.uploads`)."""
        return Uploads(self.uploads, self.store, self.access)

    @cached_property
    def readers(self) -> Readers:
        """Who reads the documents, place by place, and what another access map would
        change (:mod:`shirabe.indexing.readers`)."""
        return Readers(self.store, self.root)

    @cached_property
    def page_images(self) -> PageImages:
        """A passage's PDF page as an image (:mod:`shirabe.indexing.page_images`)."""
        return PageImages(self.settings.ingest.passwords)

    def _bind(self) -> Store:
        """Check the index matches our model and tokenizer (once); re-tokenise if it changed."""
        store = self.store
        if not self._bound:
            if store.bind(
                embedding_model=self.embedder.name,
                embedding_dim=self.embedder.dim,
                tokenizer=self.tokenizer.signature,
            ):
                store.retokenize(lambda chunk: chunk_terms(chunk, self.tokenizer.tokenize))
            self._bound = True
        return store

    @cached_property
    def indexer(self) -> Indexer:
        """Ingests, re-roots and removes files (:mod:`shirabe.indexing.indexer`)."""
        return Indexer(self._bind, self.root, self.accounts, self._ingestor, self._spread)

    @cached_property
    def work_queue(self) -> WorkQueue:
        """The queue ingest workers share (:mod:`shirabe.stores.queue`): PostgreSQL only."""
        lost_after = self.settings.ingest.worker_lost_after
        return self._opened(open_queue(self.backend, self.store, lost_after=lost_after))

    @cached_property
    def worker(self) -> Worker:
        """This process as an ingest worker (:mod:`shirabe.indexing.workers`)."""
        attempts = self.settings.ingest.worker_attempts
        return Worker(self.work_queue, self._run_ingestor, recipe=self.recipe, attempts=attempts)

    @cached_property
    def recipe(self) -> str:
        """How the settings have files indexed: the ingest's signature, the tokenizer and the
        embedding model. Workers refuse a run opened with another recipe; nothing is bound or
        loaded to make it."""
        parts = self._parts(self.store)
        signature = ingest_signature(parts, ingest_options(self.settings))
        return f"{signature}|tokenizer={self.tokenizer.signature}|embedder={self.embedder.name}"

    def _parts(self, store: Store) -> IngestParts:
        return IngestParts(
            store=store,
            chunker=self.chunker,
            tokenizer=self.tokenizer,
            embedder=self.embedder,
            synonyms=self.synonyms,
            access=self.access,
            enricher=self.writers.enricher,
            cleaner=self.writers.cleaner,
        )

    def _ingestor(self, root: Path, skip: Sequence[Path], audit: AuditWriter) -> Ingestor:
        """An ingest below ``root``, never below ``skip``, telling ``audit`` of changes."""
        options = ingest_options(self.settings)
        return Ingestor(self._parts(self._bind()), options, root=root, skip=skip, on_change=audit)

    def _run_ingestor(self, run: WorkRun) -> Ingestor:
        """The ingest of a run of the queue, as the ingest that opened it set it up."""
        plan = run.plan
        audit = AuditWriter(self.accounts, plan.actor)
        return self._ingestor(Path(plan.root), [Path(p) for p in plan.skip], audit)

    def _spread(
        self, root: Path, skip: Sequence[Path], audit: AuditWriter, workers: int
    ) -> SpreadIngest:
        """An ingest below ``root`` spread over ``workers`` local worker processes; the
        store must host the workers' queue, which is asked before anything is loaded."""
        queue = self.work_queue
        return SpreadIngest(
            self._ingestor(root, skip, audit),
            queue,
            recipe=self.recipe,
            actor=audit.actor,
            start=local_workers(self.settings),
            workers=workers,
            attempts=self.settings.ingest.worker_attempts,
        )
