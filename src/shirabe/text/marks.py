"""Where an answer quotes a passage: the spans of the passage, as written, that the answer's
lines repeat.

An answer rarely quotes its passage character for character: 「・課長　　１泊あたり…」 is
shown as 「課長: １泊あたり…」, a table row ``| 空気清浄運転 | 4W | 12W |`` as
「空気清浄運転 — 静音: 4W / 標準: 12W」. Both are compared in a folded form (NFKC, lower case,
without spaces, list markers, table pipes, the colon of ``項目: 値`` and the other marks that
only lay text out), and each common run found there is mapped back to offsets into the
passage as written, so that the passage can be shown as it is with the quoted runs marked.
Pure functions over plain strings.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Final

MIN_RUN: Final = 4
"""The fewest folded characters a common run needs to count as quoted wherever it is: a
shorter one (円, 4W) counts only as a whole field on both sides (a table cell, the value of
``項目: 値``), and only where that is unambiguous."""
MIN_FIELD: Final = 2
"""The fewest folded characters of a field that counts (not 可 nor 1)."""

_LAYOUT: Final = frozenset("|｜:：/*`#-‐‑‒–—―−・･•●○◎◯■□◆◇▪▫▶►※★☆")
"""Characters that lay text out rather than say it (after NFKC): pipes, colons, bullets,
dashes, Markdown's ``*``, ``` ` ``` and ``#``. An answer drops or adds them freely."""
_LINE_MARKER: Final = re.compile(
    r"[ \t\u3000]*(?:#{1,6}[ \t\u3000]+|>[ \t\u3000]*"
    r"|(?:[0-9０-９]{1,3}(?:[.．](?![0-9０-９])|[)）])|[（(][0-9０-９]{1,3}[)）]"
    r"|[\u2460-\u2473\u2776-\u277f\u24eb-\u24f4])[ \t\u3000]*)"
)
"""What starts a line as a heading, quote, numbered item or circled number (``1.``, ``(2)``,
``①``; not ``9.2kg``): layout too, though its digits are otherwise words."""
_CITE: Final = re.compile(r"\[\d{1,3}\]")
_JOINS: Final = frozenset("\u3099\u309a\uff9e\uff9f")
"""Voiced sound marks written apart (ｶﾞ, か゛): folded with the letter before them."""


@dataclass(frozen=True, slots=True)
class Folded:
    """Text as compared, and for each of its characters the span of the text as written it
    came from."""

    chars: str
    spans: Sequence[tuple[int, int]]
    lines: Sequence[int]
    """The line (of the text as written) each character is on."""

    def gap(self, i: int) -> bool:
        """Whether spaces or layout stand before character ``i`` (or it is at an end)."""
        return i <= 0 or i >= len(self.chars) or self.spans[i - 1][1] != self.spans[i][0]

    def field(self, start: int, end: int) -> bool:
        """Whether ``chars[start:end]`` is a whole field: layout or an end on both sides."""
        return self.gap(start) and self.gap(end)


def fold(text: str) -> Folded:
    """``text`` as compared: NFKC, lower case, without spaces and layout."""
    ignored = _line_markers(text)
    breaks = [i for i, char in enumerate(text) if char == "\n"]
    chars: list[str] = []
    spans: list[tuple[int, int]] = []
    lines: list[int] = []
    i, n = 0, len(text)
    while i < n:
        end = i + 1
        while end < n and (unicodedata.combining(text[end]) or text[end] in _JOINS):
            end += 1
        if i not in ignored:
            for char in unicodedata.normalize("NFKC", text[i:end]).lower():
                if not char.isspace() and char not in _LAYOUT:
                    chars.append(char)
                    spans.append((i, end))
                    lines.append(bisect.bisect(breaks, i))
        i = end
    return Folded("".join(chars), spans, lines)


def _line_markers(text: str) -> set[int]:
    """Offsets of the characters that number or head a line (``1.``, ``①``, ``##``)."""
    ignored: set[int] = set()
    start = 0
    for line in text.split("\n"):
        found = _LINE_MARKER.match(line)
        if found:
            ignored.update(range(start, start + found.end()))
        start += len(line) + 1
    return ignored


def quoted(lines: Iterable[str], passage: str, *, min_run: int = MIN_RUN) -> list[tuple[int, int]]:
    """``(start, end)`` offsets into ``passage`` of the runs that ``lines`` repeat, in order,
    with touching or overlapping runs merged: each run of at least ``min_run`` folded
    characters (or a whole line), then the shorter fields left over that are whole fields of
    the passage too, on a line the long runs touched or found once in the passage."""
    wanted = fold(passage)
    found: list[tuple[int, int]] = []
    for line in lines:
        said = fold(line)
        if len(said.chars) < MIN_FIELD:
            continue
        matcher = SequenceMatcher(None, said.chars, wanted.chars, autojunk=False)
        runs: list[tuple[int, int, int]] = []  # (start in said, start in wanted, size)
        _long_runs(matcher, said, 0, len(said.chars), len(wanted.chars), min_run, runs)
        runs = _placed(runs, said, wanted)
        touched = {wanted.lines[b] for _, b, size in runs for b in range(b, b + size)}
        covered = [False] * len(said.chars)
        for a, b, size in runs:
            covered[a : a + size] = [True] * size
            found.append((wanted.spans[b][0], wanted.spans[b + size - 1][1]))
        for start, end in _fields(said, covered):
            at = _field_in(wanted, said.chars[start:end], touched)
            if at is not None:
                found.append((wanted.spans[at][0], wanted.spans[at + end - start - 1][1]))
    return _merged(found)


def _long_runs(
    matcher: SequenceMatcher[str],
    said: Folded,
    lo: int,
    hi: int,
    size: int,
    min_run: int,
    out: list[tuple[int, int, int]],
) -> None:
    """The longest common runs of ``said.chars[lo:hi]`` anywhere in the passage, then of
    what is left on either side, while they are long enough (or the whole line)."""
    if hi - lo < MIN_FIELD:
        return
    run = matcher.find_longest_match(lo, hi, 0, size)
    if run.size < min_run and run.size != len(said.chars):
        return
    out.append((run.a, run.b, run.size))
    _long_runs(matcher, said, lo, run.a, size, min_run, out)
    _long_runs(matcher, said, run.a + run.size, hi, size, min_run, out)


def _placed(
    runs: Sequence[tuple[int, int, int]], said: Folded, wanted: Folded
) -> list[tuple[int, int, int]]:
    """The runs, longest first, each found again where the passage has it several times: on
    a line a longer run of the same answer line is on (the row of the table it quotes), if
    one of its places is."""
    out: list[tuple[int, int, int]] = []
    lines: set[int] = set()
    for a, first, size in sorted(runs, key=lambda run: -run[2]):
        text = said.chars[a : a + size]
        at = wanted.chars.find(text)
        while at >= 0 and lines and wanted.lines[at] not in lines:
            at = wanted.chars.find(text, at + 1)
        b = at if at >= 0 else first
        out.append((a, b, size))
        lines.update(wanted.lines[i] for i in range(b, b + size))
    return out


def _fields(said: Folded, covered: Sequence[bool]) -> list[tuple[int, int]]:
    """The whole fields of the line that no long run covers, of at least ``MIN_FIELD``."""
    out: list[tuple[int, int]] = []
    start = 0
    for i in range(1, len(said.chars) + 1):
        if i == len(said.chars) or said.gap(i):
            if i - start >= MIN_FIELD and not any(covered[start:i]):
                out.append((start, i))
            start = i
    return out


def _field_in(wanted: Folded, field: str, lines: set[int]) -> int | None:
    """Where ``field`` is a whole field of the passage: on one of ``lines`` if it is there,
    else its only place; None when it is nowhere, or in several places and none of them."""
    places = []
    at = wanted.chars.find(field)
    while at >= 0:
        if wanted.field(at, at + len(field)):
            places.append(at)
        at = wanted.chars.find(field, at + 1)
    near = [at for at in places if wanted.lines[at] in lines]
    if near:
        return near[0]
    return places[0] if len(places) == 1 else None


def _merged(spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def marks(answer: str, passage: str, number: int | None = None) -> list[tuple[int, int]]:
    """The spans of ``passage`` that ``answer`` quotes. With the passage's citation
    ``number``, only the answer's lines that cite it (``[n]``) or cite nothing are read, unless
    no line cites it at all."""
    lines = answer.splitlines()
    if number is not None:
        tag = f"[{number}]"
        if any(tag in line for line in lines):
            lines = [line for line in lines if tag in line or not _CITE.search(line)]
    return quoted((_CITE.sub("", line) for line in lines), passage)
