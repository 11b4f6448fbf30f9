"""The tokenizer interface used by the lexical (BM25) side."""

from __future__ import annotations

from typing import Protocol

from shirabe.text.terms import NGRAM_PREFIX

__all__ = ["NGRAM_PREFIX", "Tokenizer"]


class Tokenizer(Protocol):
    """Turns text into index terms. ``signature`` changes whenever the output would change."""

    @property
    def signature(self) -> str: ...

    def tokenize(self, text: str) -> list[str]: ...
