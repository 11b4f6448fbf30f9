"""A question with its terms and vector, each computed at most once."""

from __future__ import annotations

from functools import cached_property

from shirabe.embedders.protocol import Embedder, Vector
from shirabe.stores.protocol import Filters
from shirabe.terms import query_weights
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
    ) -> None:
        self.text = text
        self.filters = filters
        self._tokenizer = tokenizer
        self._embedder = embedder
        if vector is not None:
            self.__dict__["vector"] = vector

    @cached_property
    def tokens(self) -> list[str]:
        return self._tokenizer.tokenize(self.text)

    @cached_property
    def term_weights(self) -> dict[str, float]:
        return query_weights(self.tokens)

    @cached_property
    def vector(self) -> Vector:
        return self._embedder.embed_query(self.text)

    def tokenize(self, text: str) -> list[str]:
        return self._tokenizer.tokenize(text)
