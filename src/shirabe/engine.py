"""The library entry point: one object that ingests, searches and answers.

:class:`Shirabe` composes the steps, each a component of its own stage, built from the
settings when first used: the document root (:mod:`shirabe.indexing.root`), the ingest
(:mod:`shirabe.indexing.factory`), the planner (:mod:`shirabe.answering.planner`), the searcher
(:mod:`shirabe.retrieval.searcher`), the answer stage (:mod:`shirabe.answering.answerer`), the
audit writer (:mod:`shirabe.access.audit`). Each public method reads top to bottom:
``ask`` plans, retrieves and answers, and asks once more only when the planner says so.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from shirabe.access.audit import AuditWriter
from shirabe.answering.merge import merge_answers
from shirabe.answering.planner import Plan
from shirabe.answering.protocol import StreamingGenerator, answer_events
from shirabe.assembly import Assembly
from shirabe.errors import UnsearchableError
from shirabe.loaders.registry import supported_extensions
from shirabe.records import (
    AccessPreview,
    Answer,
    AuditEntry,
    AuditQuery,
    Chunk,
    Document,
    DoneEvent,
    Filters,
    GenerationEvent,
    Hit,
    IndexStatus,
    IngestReport,
    Progress,
    RunningIngest,
    Turn,
)
from shirabe.stores.protocol import Migration
from shirabe.text.terms import searchable

ACCESS_MAP = "access_map"
"""The audit log's action for a saved access map (its ``path`` is the map's file)."""


class Shirabe(Assembly):
    """Index folders of documents and answer questions about them, with citations.

    Components are built from the settings on first use, so constructing this object is cheap;
    the store, embedder, tokenizer, chunker and ingest-time chat model can be passed in instead
    (tests, custom backends).

    >>> app = Shirabe(Settings(home=Path(".shirabe")))   # doctest: +SKIP
    >>> app.ingest([Path("docs")])                        # doctest: +SKIP
    >>> print(app.ask("有給休暇の申請方法は？").text)      # doctest: +SKIP
    """

    # the index

    def ingest(
        self,
        paths: Sequence[Path | str],
        progress: Progress | None = None,
        *,
        area: Path | None = None,
        uploader: str | None = None,
        rejected: Sequence[tuple[Path, str]] = (),
        actor: str | None = None,
        workers: int = 0,
    ) -> IngestReport:
        """Add new files, replace changed ones, drop deleted ones under ``paths``; with
        ``workers``, read and embed them in that many worker processes
        (:meth:`Indexer.ingest <shirabe.indexing.indexer.Indexer.ingest>`)."""
        return self.indexer.ingest(
            paths,
            progress,
            area=area,
            uploader=uploader,
            rejected=rejected,
            actor=actor,
            workers=workers,
        )

    def work(self, *, wait: bool = False, progress: Progress | None = None) -> IngestReport:
        """Work as an ingest worker on the runs in the database (PostgreSQL) until none has
        files left, or with ``wait`` until stopped; the files this worker finished
        (:class:`Worker <shirabe.indexing.workers.Worker>`)."""
        return self.worker.run(wait=wait, progress=progress)

    def move_root(
        self, folder: Path | str, progress: Progress | None = None, *, actor: str | None = None
    ) -> IngestReport:
        """Make ``folder`` the document root (:meth:`Indexer.move_root
        <shirabe.indexing.indexer.Indexer.move_root>`)."""
        return self.indexer.move_root(folder, progress, actor=actor)

    def remove(self, path: Path | str, *, actor: str | None = None) -> int:
        """Drop a file, or every file under a folder, from the index. Returns how many."""
        return self.indexer.remove(path, actor=actor)

    def remove_failed(self, key: str | None = None, *, actor: str | None = None) -> list[str]:
        """Drop the failed entry at ``key``, or every failed one; the keys dropped
        (:meth:`Indexer.remove_failed <shirabe.indexing.indexer.Indexer.remove_failed>`)."""
        return self.indexer.remove_failed(key, actor=actor)

    def reread(
        self, key: str, progress: Progress | None = None, *, actor: str | None = None
    ) -> IngestReport:
        """Ingest again the file or folder at ``key``, in the uploads area or below the root
        (:meth:`Indexer.reread <shirabe.indexing.indexer.Indexer.reread>`)."""
        return self.indexer.reread(key, progress, actor=actor)

    def running_ingests(self) -> list[RunningIngest]:
        """The ingest runs under way in this process, oldest first, as far as each has gone."""
        return self.indexer.runs.now()

    def audit_log(
        self, *, limit: int = 100, offset: int = 0, query: AuditQuery | None = None
    ) -> list[AuditEntry]:
        """The audit log, newest first: the entries ``query`` asks for (index-wide: admins)."""
        return self.accounts.audit_log(limit=limit, offset=offset, query=query)

    # the access map

    def preview_access(self, text: str, *, limit: int | None = None) -> AccessPreview:
        """What saving the access map ``text`` would change: the documents whose readers
        change (the first ``limit``), and per group the documents it gains and loses. A map
        that does not parse is a :class:`ConfigurationError` naming the rule."""
        return self.readers.preview(self.access_file.parse(text), limit=limit)

    def change_access(
        self, text: str, progress: Progress | None = None, *, actor: str | None = None
    ) -> tuple[AccessPreview, IngestReport]:
        """Save the access map ``text`` (audited), then give every document whose readers
        it changes its new readers, reading it again with its embeddings from the cache;
        what changed, and the report of that reading. Other documents take the new map's
        signature at their next ingest."""
        old = self.access_file.text()
        self.access_file.write(text)
        change = self.readers.preview(self.access)
        if text.strip() != old.strip():
            moved = "".join(f", {g.group} +{g.gains} -{g.loses}" for g in change.groups)
            detail = f"{change.changed} document(s) change readers{moved}"
            AuditWriter(self.accounts, actor)(ACCESS_MAP, str(self.access_file.path), detail)
        keys = [c.path for c in change.changes]
        report = self.indexer.retag(keys, progress, actor=actor) if keys else IngestReport()
        return change, report

    def documents(self, paths: Sequence[Path | str]) -> Iterator[tuple[str, Document, list[Chunk]]]:
        """Each file under ``paths`` as an ingest would read it (loaded, and its passages),
        without embedding or storing anything."""
        return self.indexer.documents(paths)

    def ingest_runs(self, limit: int = 20) -> list[dict[str, object]]:
        """The newest ingest runs first, with their counts (index-wide: for admins)."""
        return self.store.ingest_runs(limit)

    def status(self) -> IndexStatus:
        return self.store.status()

    def warm_up(self) -> None:
        """Open the index, load the embedding model and read the tokenizer's synonym groups now,
        so that the first question does not wait for them (a server does this before its first
        request)."""
        self._bind().refresh(wait=False)
        self.embedder.embed_query("準備")
        synonyms = getattr(self.tokenizer, "synonyms", None)  # a tokenizer made before it: none
        if synonyms is not None:
            synonyms(())

    @staticmethod
    def file_types() -> list[str]:
        """Every file suffix some loader reads, with its dot, sorted (``.csv``, ``.docx``, …)."""
        return sorted(supported_extensions())

    def migrate(self, *, embeddings_from: Path | None = None) -> Migration:
        """Bring the store's schema up to date (every command also does on opening it); with
        ``embeddings_from``, copy that embedded index's embedding cache into the store."""
        return self.backend.migrate(embeddings_from=embeddings_from)

    # questions

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
        self._bind().refresh(wait=False)
        return self.searcher.retrieve(text, k or self.settings.retrieval.top_k, filters).hits

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
        self._bind().refresh(wait=False)
        return self._asked(self.planner.plan(question, history), k, filters)

    def _asked(self, plan: Plan, k: int | None, filters: Filters | None) -> Answer:
        """The answer to a planned question: its parts answered one by one and joined, or
        the question answered, and asked once more only when the planner says so."""
        if plan.parts:
            started = time.perf_counter()
            answers = [self._answer(part, k, filters) for part in plan.parts]
            answer = merge_answers(plan.asked, plan.parts, answers)
            answer.searches = plan.parts
            answer.timings["total"] = time.perf_counter() - started
            return plan.shown(answer)
        answer = self._answer(plan.asked, k, filters, plan.conversation)
        fallback = self.planner.fallback(plan, answer, filters)  # decided once
        if fallback is not None:
            again = self._answer(fallback.question, k, filters, fallback.conversation)
            if not again.refused:
                return plan.shown(again, fallback.question)
        return plan.shown(answer)

    def _answer(
        self, question: str, k: int | None, filters: Filters | None, said: Sequence[str] = ()
    ) -> Answer:
        """Retrieve, then answer ``question``; ``said`` is the conversation it was asked in."""
        started = time.perf_counter()
        found = self.searcher.retrieve(question, k or self.settings.retrieval.top_k, filters)
        found.query.conversation = tuple(said)
        retrieved = time.perf_counter()
        answer = self.answerer.answer(found.query, found.hits)
        done = time.perf_counter()
        answer.timings = {
            **answer.timings,
            "retrieve": retrieved - started,
            "generate": done - retrieved,
            "total": done - started,
        }
        answer.searches = found.searches
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
        self._bind().refresh(wait=False)
        plan = self.planner.plan(question, history)
        generator = self.generator
        streams = isinstance(generator, StreamingGenerator)
        if plan.parts or (history and not streams):  # one block of text, as ask gives
            yield from answer_events(self._asked(plan, k, filters))
            return
        started = time.perf_counter()
        found = self.searcher.retrieve(plan.asked, k or self.settings.retrieval.top_k, filters)
        found.query.conversation = plan.conversation
        retrieved = time.perf_counter() - started
        if isinstance(generator, StreamingGenerator):
            events = generator.stream(found.query, found.hits)
        else:
            events = answer_events(self.answerer.answer(found.query, found.hits))
        for event in events:
            if isinstance(event, DoneEvent):
                total = time.perf_counter() - started
                timings = {"retrieve": retrieved, "generate": total - retrieved, "total": total}
                event.answer.timings = {**event.answer.timings, **timings}
                event.answer.searches = found.searches
                plan.shown(event.answer)
            yield event

    def __enter__(self) -> Shirabe:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
