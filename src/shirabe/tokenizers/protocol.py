"""The tokenizer interface used by the lexical (BM25) side."""

from __future__ import annotations

from typing import Final, Protocol

NGRAM_PREFIX: Final = "~"
"""Terms starting with this are character n-grams, never words: ``~東京``."""


class Tokenizer(Protocol):
    """Turns text into index terms. ``signature`` changes whenever the output would change."""

    @property
    def signature(self) -> str: ...

    def tokenize(self, text: str) -> list[str]: ...
