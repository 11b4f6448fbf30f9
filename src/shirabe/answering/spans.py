"""The short answer inside the answering line: candidate spans and their features.

A span is a run of words of the line that could be the asked fact by itself: a name, a
place, a date, a figure with its unit, a term in brackets. Runs are cut at particles,
auxiliaries, verbs and punctuation; every shorter run of one to ``MAX_WORDS`` words inside a
run is a candidate too (the answer is often part of a longer noun phrase). Each is described
by what kind of word it is against the kind of fact asked, how much of it the question
already says (an answer rarely repeats the question), how close it is to the words of the
question in the line, and what follows it. Pure functions; the learned stage scores them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from shirabe.answering.features import KINDS, Question, Word
from shirabe.answering.fit import has_kind
from shirabe.text.normalize import folded

MAX_WORDS: Final = 8
MAX_SPANS: Final = 80
"""Spans kept per line (the first ones, in the line's order), to bound the work."""

_JOINING: Final = frozenset({"名詞", "接頭辞", "接尾辞", "記号", "補助記号", "形状詞"})
_BREAKS: Final = frozenset("、。，．,.！？!?「」『』（）()[]［］【】:：;；/／\n")
_WH: Final = (
    ("誰", re.compile(r"誰|だれ|どなた|人物")),
    ("どこ", re.compile(r"どこ|どちら|場所|地域|国|都市")),
    ("いつ", re.compile(r"いつ|何年|何月|何日|何時|時期|年代")),
    (
        "いくつ",
        re.compile(
            r"いくつ|何[人個台回本枚件種名社冊匹頭歳位番]|どれ(?:く|ぐ)らい|どの(?:くらい|程度)"
        ),
    ),
    ("何という", re.compile(r"何と(?:いう|言う|呼ば)|なんという|名前|名称")),
    ("なに", re.compile(r"何|なに|なん|どの|どんな")),
)
_DIGIT: Final = re.compile(r"\d")
_DATE: Final = re.compile(r"\d+\s*(?:年|月|日|世紀|時|分)|[明大昭平令][治正和成]")
_KATAKANA: Final = re.compile(r"[ァ-ヺー]")
_KANJI: Final = re.compile(r"[\u3400-\u9fff々]")
_LATIN: Final = re.compile(r"[A-Za-z]")


@dataclass(frozen=True, slots=True)
class Span:
    text: str
    start: int
    """Index of its first word in the line's words."""
    end: int
    """Index after its last word."""
    whole: bool
    """The whole run (not a part of one)."""


_GROUPED: Final = re.compile(r"\d{1,3}(?:[,，]\d{3})+(?:\.\d+)?")
"""A number written with thousands separators (1,200, 54,780): its commas break nothing."""


def _joins(word: Word) -> bool:
    surface, _normal, pos = word
    if _GROUPED.fullmatch(surface):
        return True
    if not surface.strip() or any(ch in _BREAKS for ch in surface):
        return False
    head = pos[0] if pos else ""
    if head in {"記号", "補助記号"}:
        return surface in {"・", "-", "ー", "〜", "~", "％", "%", ".", ","}
    return head in _JOINING


def spans(words: Sequence[Word]) -> list[Span]:
    """The candidate spans of a line, in its order."""
    out: list[Span] = []
    i = 0
    n = len(words)
    while i < n and len(out) < MAX_SPANS:
        if not _joins(words[i]):
            i += 1
            continue
        j = i
        while j < n and _joins(words[j]):
            j += 1
        for a in range(i, j):
            for b in range(a + 1, min(j, a + MAX_WORDS) + 1):
                text = "".join(w[0] for w in words[a:b]).strip("・-〜~")
                if text:
                    out.append(Span(text, a, b, whole=(a == i and b == j)))
        i = j
    return out[:MAX_SPANS]


FACTOIDS: Final = frozenset({"誰", "どこ", "いつ", "いくつ", "何という"})
"""Question words that ask for a fact a few words say (a name, a place, a date, a figure)."""
FACT_KINDS: Final = frozenset({"money", "number", "time", "person", "place"})


def asks_for_span(q: Question) -> bool:
    """Whether the question asks for a name, place, date or figure, which a short answer can
    give alone (not a reason, a way of doing, or a description)."""
    if q.kind is not None:
        return q.kind.kind in FACT_KINDS
    return wh(q.text) in FACTOIDS


def fits(q: Question, text: str) -> bool:
    """Whether a span holds the kind of fact asked (an amount for いくら, a weight for
    何kg); any span does when the question's form does not say."""
    return q.kind is None or has_kind(q.kind, text)


def wh(question: str) -> str:
    """The question word's family (誰, どこ, いつ, いくつ, 何という, なに), '' for none."""
    for name, pattern in _WH:
        if pattern.search(question):
            return name
    return ""


SPAN_FEATURES: Final = (
    *(f"asks_{k}" for k in (*KINDS, "none")),
    *(f"wh_{w}" for w, _ in _WH),
    "wh_none",
    "length",
    "words",
    "whole",
    "digit",
    "date",
    "katakana",
    "kanji",
    "latin",
    "proper",
    "person",
    "place",
    "numeral",
    "in_question",
    "first_in_question",
    "distance",
    "before_match",
    "after_particle_ha",
    "after_particle_ga",
    "after_particle_no",
    "after_particle_wo",
    "after_particle_ni",
    "after_copula",
    "before_no",
    "at_line_start",
    "at_line_end",
    "share_in_line",
    "line_score",
    "line_rank",
)


def _kind_flags(q: Question) -> list[float]:
    kind = q.kind
    return [*(float(kind is not None and kind.kind == k) for k in KINDS), float(kind is None)]


def _wh_flags(question: str) -> list[float]:
    found = wh(question)
    return [*(float(found == name) for name, _ in _WH), float(not found)]


def span_features(
    q: Question,
    words: Sequence[Word],
    found: Sequence[Span],
    line_score: float,
    line_rank: int,
) -> list[list[float]]:
    """The features of each span of one line (``words``), in the order of ``found``."""
    asked = folded(q.text)
    question_chars = set(asked)
    matched = [
        i
        for i, w in enumerate(words)
        if not _asked_unit(q, w[0])
        and (
            (len(folded(w[0])) > 1 and folded(w[0]) in asked)
            or any(t.text == folded(w[0]) for t in q.terms)
        )
    ]
    matched = _with_runs(words, matched)
    fixed = _kind_flags(q) + _wh_flags(q.text)
    rows: list[list[float]] = []
    n = max(len(words), 1)
    for s in found:
        text = folded(s.text)
        pos = [w[2] for w in words[s.start : s.end]]
        nxt = words[s.end][0] if s.end < len(words) else ""
        after = words[s.end + 1][0] if s.end + 1 < len(words) else ""
        prev = words[s.start - 1][0] if s.start > 0 else ""
        distance = min((min(abs(m - s.start), abs(m - (s.end - 1))) for m in matched), default=n)
        rows.append(
            [
                *fixed,
                math.log1p(len(s.text)),
                float(s.end - s.start),
                float(s.whole),
                float(bool(_DIGIT.search(text))),
                float(bool(_DATE.search(text))),
                _share(_KATAKANA, s.text),
                _share(_KANJI, s.text),
                _share(_LATIN, s.text),
                float(any(len(p) > 1 and p[1] == "固有名詞" for p in pos)),
                float(any(len(p) > 2 and p[2] == "人名" for p in pos)),
                float(any(len(p) > 2 and p[2] == "地名" for p in pos)),
                float(any(len(p) > 1 and p[1] == "数詞" for p in pos)),
                sum(ch in question_chars for ch in text) / max(len(text), 1),
                float(text in asked),
                float(distance) / n,
                float(any(m >= s.end for m in matched)),
                float(nxt == "は"),
                float(nxt == "が"),
                float(nxt == "の"),
                float(nxt == "を"),
                float(nxt == "に"),
                float(
                    (nxt in {"で", "だ", "です"} and after in {"ある", "あり", "", "。"})
                    or nxt in {"である", "です", "だ"}
                ),
                float(prev == "の"),
                float(s.start == 0),
                float(s.end >= len(words) - 1),
                (s.end - s.start) / n,
                line_score,
                float(line_rank),
            ]
        )
    return rows


def _with_runs(words: Sequence[Word], matched: Sequence[int]) -> list[int]:
    """The matched words with the words joined to them (用 of 詰め替え用, whatever part of
    speech 詰め替え is read as): a figure in brackets after a compound is as near to it as
    to its first word."""
    out = set(matched)
    for i in matched:
        j = i
        while j > 0 and _joins(words[j - 1]):
            j -= 1
            out.add(j)
        j = i
        while j + 1 < len(words) and _joins(words[j + 1]):
            j += 1
            out.add(j)
    return sorted(out)


def _asked_unit(q: Question, surface: str) -> bool:
    """Whether a word of the line is the unit the question asks its figure in (mL of 何mL):
    every figure of that kind has it, so it does not place the answer near the question's
    words."""
    unit = q.kind.unit if q.kind is not None else None
    return bool(unit) and re.fullmatch(unit or "", folded(surface)) is not None


def _share(pattern: re.Pattern[str], text: str) -> float:
    return len(pattern.findall(text)) / max(len(text), 1)
