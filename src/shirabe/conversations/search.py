"""Finding one's chats by words: in their titles, questions and answers.

Texts are compared as NFKC in lower case (``ＡＱ－３００`` finds ``aq-300``); a chat matches
when every word of the search is somewhere in it. The faces decide which answers may be
searched (those whose documents the asker may still read), so a withheld answer never makes
a chat match.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass

MAX_WORDS = 8
"""Words of a search used at most (the rest are ignored)."""
EXCERPT_CHARS = 24
"""Characters shown on each side of a match."""


def fold(text: str) -> str:
    """NFKC, lower case, and white space as single spaces: the form texts are compared in."""
    return " ".join(unicodedata.normalize("NFKC", text).lower().split())


def search_words(text: str) -> list[str]:
    """The words of a search, folded, each once, at most :data:`MAX_WORDS`."""
    return list(dict.fromkeys(fold(text).split()))[:MAX_WORDS]


def excerpt(text: str, word: str) -> str:
    """The words around the first ``word`` in ``text`` (folded), on one line, or ``""``."""
    shown = " ".join(unicodedata.normalize("NFKC", text).split())
    folded = shown.lower()
    if len(folded) != len(shown):  # lower case changed the length: show the folded text
        shown = folded
    at = folded.find(word)
    if at < 0:
        return ""
    start, end = max(0, at - EXCERPT_CHARS), min(len(shown), at + len(word) + EXCERPT_CHARS)
    return ("…" if start else "") + shown[start:end] + ("…" if end < len(shown) else "")


@dataclass(frozen=True, slots=True)
class Searched:
    """One turn as searched: its question, its answer, and whether the answer may be read."""

    question: str
    answer: str
    readable: Callable[[], bool]


def matched(title: str, turns: Sequence[Searched], words: Sequence[str]) -> str | None:
    """Whether every word is in the title, a question, or an answer that may be read: the
    words around the first word where it was first found (``""`` for the title), or None."""
    texts: list[tuple[str, str]] = [(fold(title), "")]
    for turn in turns:
        texts.append((fold(turn.question), turn.question))
    answers = [(fold(t.answer), t) for t in turns]
    shown: str | None = None
    for word in words:
        where = next((raw for text, raw in texts if word in text), None)
        if where is None:
            found = next((t for text, t in answers if word in text and t.readable()), None)
            if found is None:
                return None
            where = found.answer
        if shown is None:
            shown = excerpt(where, word) if where else ""
    return shown
