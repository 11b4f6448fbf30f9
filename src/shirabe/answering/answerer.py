"""The answer stage as the engine uses it: the generator's answer to retrieved passages, with
one deeper look in the same documents when no passage held the kind of fact asked."""

from __future__ import annotations

from shirabe.answering import mentions
from shirabe.answering.protocol import Generator
from shirabe.records import Answer, Hit
from shirabe.retrieval.query import Query
from shirabe.retrieval.searcher import Searcher


class Answerer:
    """Answers a query from its hits with the configured generator."""

    def __init__(self, generator: Generator, searcher: Searcher) -> None:
        self.generator = generator
        self._searcher = searcher

    def answer(self, query: Query, hits: list[Hit]) -> Answer:
        """The generator's answer; when no passage held the kind of fact asked (a weight for
        何kg), it is looked for once more in twice as many passages of the same documents,
        searched with the words documents use for what is asked (重さ is written 質量; the
        spec table's row may rank just below the first ``k``)."""
        answer = self.generator.generate(query, hits)
        if not (answer.refused and answer.refusal_code == "kind" and hits):
            return answer
        sources = {h.chunk.source for h in hits}
        spelled = mentions.spellings(query.text)
        wider = (
            self._searcher.query(query.text, query.filters, [*query.expansion, *spelled])
            if spelled
            else query
        )
        deeper = [
            h
            for h in self._searcher.retriever.retrieve(wider, 2 * len(hits))
            if h.chunk.source in sources
        ]
        if len(deeper) > len(hits):
            again = self.generator.generate(query, deeper)
            if not again.refused:
                return again
        return answer
