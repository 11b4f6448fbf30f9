"""How much each query term counts in BM25: codes count more, character n-grams less."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Final

NGRAM_PREFIX: Final = "~"
"""Terms starting with this are character n-grams, never words: ``~東京``."""

CODE_WEIGHT = 3.0
NGRAM_WEIGHT = 1.0

_CODE = re.compile(
    r"^(?=.*[0-9])(?=.*[a-z])[0-9a-z]+(?:[-._/:+][0-9a-z]+)*$|^[0-9a-z]+(?:[-._/:+][0-9a-z]+)+$"
)


def is_code(term: str) -> bool:
    """Product codes, error codes, ticket and version numbers: ``err-107``, ``aq-300``, ``v2.3``.

    A term with letters and digits, or alphanumeric parts joined by separators. Plain numbers
    (``2024``) and plain words do not count.
    """
    return bool(_CODE.match(term))


def query_weights(
    tokens: Sequence[str], *, code_weight: float = CODE_WEIGHT, ngram_weight: float = NGRAM_WEIGHT
) -> dict[str, float]:
    """Per-term query weights (query term frequency times the kind's weight).

    A code in a question names exactly what is asked about, so a passage that has it should win
    over passages that merely share the question's common words.
    """
    weights: dict[str, float] = {}
    for term, count in Counter(tokens).items():
        if term.startswith(NGRAM_PREFIX):
            kind = ngram_weight
        elif is_code(term):
            kind = code_weight
        else:
            kind = 1.0
        weights[term] = count * kind
    return weights


def as_weights(terms: Mapping[str, float] | Sequence[str]) -> dict[str, float]:
    """Accept plain token lists (each occurrence counts once) as well as weighted terms."""
    if isinstance(terms, Mapping):
        return {t: float(w) for t, w in terms.items() if w > 0}
    return {t: float(c) for t, c in Counter(terms).items()}


FUNCTION_WORDS: Final = frozenset(
    "a an and are as at be by for from if in is it no not of on or so the to was with".split()  # noqa: SIM905
)
"""English words that say nothing searchable on their own (``' OR 1=1 --``)."""


def searchable(terms: Sequence[str]) -> bool:
    """Whether a query's terms hold anything to search for: a word with a letter in it (kana,
    kanji, Latin…) that is not an English function word, or a number or code of three
    characters or more (``20240401-001``). Punctuation, emoji, short numbers and
    ``' OR 1=1 --`` hold nothing."""
    return any(
        not t.startswith(NGRAM_PREFIX)
        and t.lower() not in FUNCTION_WORDS
        and (any(ch.isalpha() for ch in t) or ((is_code(t) or t.isdigit()) and len(t) >= 3))
        for t in terms
    )
