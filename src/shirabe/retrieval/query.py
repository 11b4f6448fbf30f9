"""A question with its terms and vector, each computed at most once."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

from shirabe.embedders.protocol import Embedder, Vector
from shirabe.records import Filters
from shirabe.text.terms import query_weights
from shirabe.tokenizers.protocol import Tokenizer


class Query:
    """The question as every retriever and answerer sees it."""

    def __init__(
        self,
        text: str,
        *,
        tokenizer: Tokenizer,
        embedder: Embedder,
        filters: Filters | None = None,
        vector: Vector | None = None,
        expansion: Sequence[str] = (),
        aliases: Sequence[str] = (),
        conversation: Sequence[str] = (),
    ) -> None:
        self.text = text
        self.conversation = tuple(conversation)
        """For a question asked in a conversation: the earlier questions, oldest first, then
        the question as it was asked (``text`` may be its standalone form); else empty."""
        self.filters = filters
        self.expansion = tuple(expansion)
        self.aliases = tuple(aliases)
        """Spellings of official names found in the text (normalised), see shirabe.entities."""
        self._tokenizer = tokenizer
        self._embedder = embedder
        self._vector = vector

    @cached_property
    def tokens(self) -> list[str]:
        """The question's terms, then those of the expansion (extra words for the lexical
        side only: official names of aliases, extracted keywords)."""
        tokens = self._tokenizer.tokenize(self.text)
        for extra in self.expansion:
            tokens.extend(self._tokenizer.tokenize(extra))
        return tokens

    def words(self) -> list[tuple[str, str, tuple[str, ...]]]:
        """The question's words with their parts of speech, when the tokenizer gives them
        (``SudachiTokenizer.words``); else ``[]``. Read once per question."""
        return list(self._words)

    def words_of(self, text: str) -> list[tuple[str, str, tuple[str, ...]]]:
        """The words of another text (a passage's sentence), as :meth:`words` gives them."""
        return list(self._tokenizer.words(text))

    def synonym_groups_of(self, text: str) -> list[tuple[str, tuple[int, ...]]]:
        """The words of a text with their synonym groups, when the tokenizer gives them
        (``SudachiTokenizer.synonym_groups``); else ``[]``."""
        return list(self._tokenizer.synonym_groups(text))

    def synonyms(self, groups: Sequence[int]) -> list[str]:
        """The words the tokenizer's dictionary puts in ``groups`` (``[]`` without one, and from
        a tokenizer written before this method was part of the protocol)."""
        words = getattr(self._tokenizer, "synonyms", None)
        return list(words(groups)) if words is not None and groups else []

    @cached_property
    def _words(self) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
        return tuple(self.words_of(self.text))

    @cached_property
    def term_weights(self) -> dict[str, float]:
        return query_weights(self.tokens)

    @property
    def vector(self) -> Vector:
        """The question's vector, computed once. (Not a cached_property: before Python 3.12
        that holds one lock for every instance, so concurrent searches would embed their
        questions one after another.)"""
        if self._vector is None:
            self._vector = self._embedder.embed_query(self.text)
        return self._vector

    def tokenize(self, text: str) -> list[str]:
        return self._tokenizer.tokenize(text)
