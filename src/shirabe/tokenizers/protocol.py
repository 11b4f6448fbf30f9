"""The tokenizer interface used by the lexical (BM25) side."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from shirabe.text.terms import NGRAM_PREFIX

__all__ = ["NGRAM_PREFIX", "Tokenizer"]


class Tokenizer(Protocol):
    """Turns text into index terms. ``signature`` changes whenever the output would change."""

    @property
    def signature(self) -> str: ...

    def tokenize(self, text: str) -> list[str]: ...

    def words(self, text: str) -> list[tuple[str, str, tuple[str, ...]]]:
        """The words of ``text``: surface, normalised form and part of speech (the answer
        stage's features read them); ``[]`` from a tokenizer that has no parts of speech."""
        ...

    def synonym_groups(self, text: str) -> list[tuple[str, tuple[int, ...]]]:
        """The words of ``text`` with the synonym groups of the tokenizer's dictionary;
        ``[]`` from a tokenizer without one."""
        ...

    def synonyms(self, groups: Sequence[int]) -> list[str]:
        """Every word the tokenizer's dictionary puts in one of ``groups`` (the ids
        :meth:`synonym_groups` gives), in no set order; ``[]`` from a tokenizer without one."""
        ...
