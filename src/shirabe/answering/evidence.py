"""The sentence a chat model's answer rests on, quoted under it.

A model answers in a few words (「赤字[1]」, 「約9.2kgです。[1]」); the reader should not have
to open the passage to see what it says. Of the sentences of each passage the reply cites, the
one that holds most of the reply's claim (its figures and key terms, as
:mod:`shirabe.answering.grounding` reads them) and of the question's key terms is quoted on the
next line with its marker, a table row with its column headers. Nothing is added when no
sentence holds anything of the reply, or when the reply already says what the sentence says
(the model copied it). Pure functions over text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from shirabe.answering import tables
from shirabe.answering.grounding import claim_terms, covered, figures_of
from shirabe.answering.instructions import is_instruction
from shirabe.answering.prompting import MARKER, marker_numbers
from shirabe.text.normalize import folded
from shirabe.text.sentences import split_sentences

QUOTE_CHARS: Final = 200
"""The longest quote; a longer sentence is cut around the first thing of the reply it holds."""
ALREADY_SAID: Final = 0.8
"""The share of a sentence's key terms and figures a reply that copied it holds."""
MOST_QUOTES: Final = 3
"""Sentences quoted at most, one per cited passage."""


@dataclass(frozen=True, slots=True)
class Resting:
    """A sentence a reply rests on: the passage's marker number, the sentence as shown (a
    table row with its column headers), whether the reply copied it, and the reply's figures
    and terms (where a long sentence is cut)."""

    number: int
    quote: str
    copied: bool
    anchors: tuple[str, ...]


def _held(terms: list[str], figures: list[str], text: str) -> int:
    found_figures, found_terms = covered(figures, terms, text)
    return len(found_figures) + len(found_terms)


def _size(text: str) -> int:
    return len(claim_terms(text)) + len(figures_of(text))


def _clipped(sentence: str, anchors: list[str]) -> str:
    if len(sentence) <= QUOTE_CHARS:
        return sentence
    text = folded(sentence)
    at = min((i for a in anchors if (i := text.find(a)) >= 0), default=0)
    start = max(0, min(at - QUOTE_CHARS // 2, len(sentence) - QUOTE_CHARS))
    body = sentence[start : start + QUOTE_CHARS]
    head = "…" if start > 0 else ""
    tail = "…" if start + QUOTE_CHARS < len(sentence) else ""
    return f"{head}{body}{tail}"


def _best(text: str, own: tuple[list[str], list[str]], asked: list[str]) -> tuple[str, str] | None:
    """The sentence of a passage holding most of the reply (then of the question), as written
    and as shown; None when none holds anything of the reply."""
    best: tuple[tuple[int, int, int], str, str] | None = None
    for sentence in split_sentences(text):
        shown = tables.clean(sentence)
        if not shown or set(shown) <= set("|-: ") or is_instruction(sentence):
            continue
        held = _held(*own, shown)
        if held == 0:
            continue
        rank = (held + _held(asked, [], shown), held, -len(shown))
        if best is None or rank > best[0]:
            best = (rank, sentence, shown)
    return None if best is None else best[1:]


def resting_sentences(reply: str, question: str, passages: Mapping[int, str]) -> list[Resting]:
    """The sentence each passage the reply cites (``passages``: their texts by the reply's
    marker numbers) holds most of it in, in the order first cited; none for a passage that
    holds nothing of it."""
    plain = MARKER.sub("", reply)
    own = (claim_terms(plain), figures_of(plain))
    if not own[0] and not own[1]:
        return []
    asked = [t for t in claim_terms(question) if t not in own[0]]
    found: list[Resting] = []
    cited = [n for m in MARKER.finditer(reply) for n in marker_numbers(m.group(1))]
    for number in dict.fromkeys(cited):
        text = passages.get(number)
        best = None if text is None else _best(text, own, asked)
        if text is None or best is None:
            continue
        sentence, shown = best
        copied = _held(claim_terms(shown), figures_of(shown), plain) >= ALREADY_SAID * _size(shown)
        header = tables.table_header(text, sentence)
        quote = tables.with_header(sentence, header) if header else shown
        found.append(Resting(number, quote.rstrip(), copied, tuple(own[1] + own[0])))
    return found


def supporting_quotes(reply: str, question: str, passages: Mapping[int, str]) -> list[str]:
    """The lines to show under ``reply`` (markers numbered as ``passages``, the texts of the
    passages it cites): 「the sentence」[n] for each passage cited, in the order first cited,
    at most :data:`MOST_QUOTES`; none for a passage the reply already quotes or that holds
    nothing of it."""
    return quote_lines(resting_sentences(reply, question, passages))


def quote_lines(resting: Sequence[Resting]) -> list[str]:
    """The lines to show under the reply: 「the sentence」[n] for each sentence it rests on
    (see :func:`resting_sentences`) that it did not copy, at most :data:`MOST_QUOTES`."""
    lines: list[str] = []
    for r in resting:
        line = f"「{_clipped(r.quote, list(r.anchors))}」[{r.number}]"
        if not r.copied and line not in lines:
            lines.append(line)
        if len(lines) == MOST_QUOTES:
            break
    return lines
