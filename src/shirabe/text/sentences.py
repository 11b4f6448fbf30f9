"""Sentence boundaries for Japanese text, as character spans.

Chunk splitting, overlap and sentence vectors all need the same notion of a sentence, so it
lives here: a sentence ends after 。！？!?． (runs of them stay together, as do the closing
brackets and quotes right after them) and at every line break. An ASCII ``.`` never ends a
sentence, so ``v2.3.1`` and ``1.5mL`` stay whole, and neither does a full-width ``．`` between
digits (約３．６Ｌ: a decimal point, as full-width text writes it).
"""

from __future__ import annotations

TERMINATORS = frozenset("。！？!?．")
CLOSERS = frozenset("」』）)】〕〉》]］\"'”’")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each non-empty sentence, trimmed of surrounding whitespace."""
    spans: list[tuple[int, int]] = []
    start = 0
    i = 0
    n = len(text)
    while i < n:
        char = text[i]
        if char == "\n":
            _append_trimmed(spans, text, start, i)
            i += 1
            start = i
        elif char in TERMINATORS and not _decimal_point(text, i):
            i += 1
            while i < n and (text[i] in TERMINATORS or text[i] in CLOSERS):
                i += 1
            _append_trimmed(spans, text, start, i)
            start = i
        else:
            i += 1
    _append_trimmed(spans, text, start, n)
    return spans


def _decimal_point(text: str, i: int) -> bool:
    return (
        text[i] == "．"
        and 0 < i < len(text) - 1
        and text[i - 1].isdigit()
        and text[i + 1].isdigit()
    )


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text`` as strings, in order."""
    return [text[start:end] for start, end in sentence_spans(text)]


def _append_trimmed(spans: list[tuple[int, int]], text: str, start: int, end: int) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if start < end:
        spans.append((start, end))
