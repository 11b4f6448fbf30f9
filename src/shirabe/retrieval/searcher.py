"""From a question to its ranked passages: the query, what else is searched, the fusion.

A question becomes a :class:`~shirabe.retrieval.query.Query`: official names it mentions (the
synonyms file) restrict it to the documents naming them and join its lexical terms. With query
understanding on (``multi_query``, ``keyword_extraction``, ``decompose``), other wordings,
keywords and the question rewritten after its first step are searched too, and the lists are
fused, the user's own words counting double.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from shirabe.embedders.protocol import Embedder
from shirabe.records import Answer, Filters, Hit
from shirabe.retrieval.hits import fuse_hits
from shirabe.retrieval.protocol import Retriever
from shirabe.retrieval.query import Query
from shirabe.retrieval.understanding import Understanding
from shirabe.settings import RetrievalSettings
from shirabe.text.synonyms import Synonyms
from shirabe.tokenizers.protocol import Tokenizer

QUESTION_WEIGHT = 2.0
"""In the fusion of several wordings, the user's own words count double: the others are
guesses, and a weak model's guesses can be off the subject."""

StepAnswer = Callable[[Query, list[Hit]], Answer]
"""Answers the first step of a question that hinges on another fact."""


@dataclass(slots=True)
class Retrieved:
    """A question's query, its hits, and what else was searched for it."""

    query: Query
    hits: list[Hit]
    searches: list[str] = field(default_factory=list)


class Searcher:
    """Retrieves the passages for a question, with the understanding the settings turn on."""

    def __init__(
        self,
        settings: RetrievalSettings,
        *,
        tokenizer: Tokenizer,
        embedder: Embedder,
        retriever: Retriever,
        synonyms: Synonyms,
        understanding: Callable[[], Understanding],
        step_answer: StepAnswer,
    ) -> None:
        """``understanding`` is called only when the settings turn understanding on (it may
        start a chat model); ``step_answer`` answers a decomposed question's first step."""
        self._settings = settings
        self._tokenizer = tokenizer
        self._embedder = embedder
        self.retriever = retriever
        self._synonyms = synonyms
        self._understanding = understanding
        self._step_answer = step_answer

    def query(
        self, text: str, filters: Filters | None = None, keywords: Sequence[str] = ()
    ) -> Query:
        """The question as the retrievers see it. Official names it mentions (synonyms file)
        restrict it to the documents naming them, and join its lexical terms, as do
        ``keywords``."""
        expansion: list[str] = list(keywords)
        matches = self._synonyms.matches(text) if self._synonyms else {}
        names = frozenset(matches.values())
        if names:
            expansion += sorted(n for n in names if n not in text)
            if self._settings.entity_filters and not (filters and filters.entities):
                filters = replace(filters or Filters(), entities=names)
        return Query(
            text,
            tokenizer=self._tokenizer,
            embedder=self._embedder,
            filters=filters,
            expansion=expansion,
            aliases=list(matches),
        )

    def retrieve(self, question: str, k: int, filters: Filters | None = None) -> Retrieved:
        """The question's query, its ``k`` best passages, and what else was searched."""
        settings = self._settings
        if not (settings.multi_query or settings.keyword_extraction or settings.decompose):
            query = self.query(question, filters)
            return Retrieved(query, self.retriever.retrieve(query, k))
        understanding = self._understanding()
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
                step_hits = self.retriever.retrieve(step_query, k)
                extra.append(step_hits)
                searches.append(step)
                found = self._step_answer(step_query, step_hits)
                if not found.refused:
                    rewritten = understanding.rewrite(question, step, found.text)
                    if rewritten.strip() != question.strip():
                        queries.append(self.query(rewritten, filters, keywords))
                        searches.append(rewritten)
        if keywords:
            searches.append("keywords: " + " ".join(keywords))
        if len(queries) == 1 and not extra:
            return Retrieved(query, self.retriever.retrieve(query, k), searches)
        depth = max(2 * k, 10)
        lists = [self.retriever.retrieve(q, depth) for q in queries] + extra
        weights = [QUESTION_WEIGHT] + [1.0] * (len(lists) - 1)
        fused = fuse_hits(lists, k, rrf_k=settings.rrf_k, weights=weights)
        return Retrieved(query, fused, searches)
