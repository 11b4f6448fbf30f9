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

from shirabe.answering import fit
from shirabe.answering.features import KINDS, Question, Word
from shirabe.answering.fit import has_kind
from shirabe.text.normalize import folded

MAX_WORDS: Final = 8
MAX_SPANS: Final = 160
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


_GROUPED: Final = re.compile(r"\d{1,3}(?:[,，]\d{3})+(?:\.\d+)?")
"""A number written with thousands separators (1,200, 54,780): its commas break nothing."""
_NUMERAL: Final = re.compile(r"[\d,，.．億万兆千百十]+")
"""A numeral word as the tokenizer reads it whole (2億3,580万)."""
_LATIN_OR_DIGIT: Final = re.compile(r"[A-Za-z0-9]")
_GIVEN_NAME: Final = ("人名", "名")
_LINKS: Final = {"の": "no", "から": "kara", "や": "ya", "と": "to"}
"""Particles inside a noun phrase that can be an answer whole (梅雨の中休み, 5月下旬から6月上旬,
台風や熱帯低気圧, 中国と台湾), each with the name of its span feature."""
_SYMBOLS: Final = frozenset({"記号", "補助記号", "空白"})
"""Parts of speech of symbols and spaces."""
MAX_LINKS: Final = 2
MAX_LINKED_WORDS: Final = 12


def surface(word: Word) -> str:
    """A word as a span shows it: cut before a reading or gloss in brackets that the
    tokenizer keeps inside the word (五月雨(さみだれ) is 五月雨)."""
    text = word[0]
    cut = min((i for i in (text.find("("), text.find("（")) if i > 0), default=-1)
    return text[:cut] if cut > 0 else text


def _closes(word: Word) -> bool:
    """The word ends a run: what follows it is in brackets."""
    return surface(word) != word[0]


def _joins(word: Word) -> bool:
    text = surface(word)
    pos = word[2]
    if _GROUPED.fullmatch(text):
        return True
    if len(pos) > 1 and pos[1] == "数詞" and _NUMERAL.fullmatch(text):
        return True
    if not text.strip() or any(ch in _BREAKS for ch in text):
        return False
    head = pos[0] if pos else ""
    if head in {"記号", "補助記号"}:
        return text in {"・", "-", "ー", "〜", "~", "％", "%", ".", ",", "="}
    return head in _JOINING


def _symbol(word: Word) -> bool:
    return not word[0].strip() or (bool(word[2]) and word[2][0] in _SYMBOLS)


def _runs(words: Sequence[Word]) -> list[tuple[int, int]]:
    """The maximal runs of joining words, as (first, after last) indices; a space between
    Latin letters or digits joins (16S rRNA), and one before a given name (例田 太郎)."""
    out: list[tuple[int, int]] = []
    joins = [_joins(w) for w in words]
    i, n = 0, len(words)
    while i < n:
        if not joins[i]:
            i += 1
            continue
        j = i + 1
        while j < n and not _closes(words[j - 1]):
            if joins[j]:
                j += 1
            elif (
                not words[j][0].strip()
                and j + 1 < n
                and joins[j + 1]
                and (
                    (
                        _LATIN_OR_DIGIT.search(words[j - 1][0])
                        and _LATIN_OR_DIGIT.search(words[j + 1][0])
                    )
                    or words[j + 1][2][2:4] == _GIVEN_NAME
                )
            ):
                j += 2
            else:
                break
        out.append((i, j))
        i = j
    return out


@dataclass(frozen=True, slots=True)
class Span:
    text: str
    start: int
    """Index of its first word in the line's words."""
    end: int
    """Index after its last word."""
    whole: bool
    """It starts where a run starts and ends where one ends."""
    links: tuple[str, ...] = ()
    """The particles it runs over (の of 梅雨の中休み), in order."""


def spans(words: Sequence[Word]) -> list[Span]:
    """The candidate spans of a line, in its order: every part of a run of one to
    ``MAX_WORDS`` words, and the runs joined by up to ``MAX_LINKS`` of の, から, や and と, from
    any word of the first to the end of the last."""
    out: list[Span] = []
    found = _runs(words)
    shown_as = [surface(w) for w in words]
    symbols = [_symbol(w) for w in words]

    def text(a: int, b: int) -> str:
        """The words' text, '' when a symbol begins or ends them (〜52dB of 19〜52dB)."""
        if symbols[a] or symbols[b - 1]:
            return ""
        return "".join(shown_as[a:b])

    for k, (i, j) in enumerate(found):
        for a in range(i, j):
            for b in range(a + 1, min(j, a + MAX_WORDS) + 1):
                if shown := text(a, b):
                    out.append(Span(shown, a, b, whole=(a == i and b == j)))
        links: tuple[str, ...] = ()
        last = k
        while len(links) < MAX_LINKS and last + 1 < len(found):
            gap, (nxt, end) = found[last][1], found[last + 1]
            if nxt != gap + 1 or words[gap][0] not in _LINKS or _closes(words[gap - 1]):
                break
            links += (words[gap][0],)
            last += 1
            for a in range(max(i, end - MAX_LINKED_WORDS), j):
                if shown := text(a, end):
                    out.append(Span(shown, a, end, whole=(a == i), links=links))
        if len(out) >= MAX_SPANS:
            break
    return out[:MAX_SPANS]


FACT_KINDS: Final = frozenset({"money", "number", "time", "person", "place"})


def asks_for_span(q: Question) -> bool:
    """Whether a short answer can give the asked fact alone: a name, place, date or figure,
    or a question whose form does not say what it asks (何という, …は？); not a reason or a
    way of doing, which take a sentence."""
    return q.kind is None or q.kind.kind in FACT_KINDS


_ASKING_WORD: Final = re.compile(
    r"誰|だれ|どなた|どこ|どちら|いつ(?!も|でも)|いくつ|いくら|どの|どんな|どれ"
    r"|何(?!か|も|でも|故|処)|なに(?!か|も)|なん(?!か|も|でも)"
)
"""Question words, not the words that only look like them (何か問題, いつも, 何も)."""


def asks_by_word(question: str) -> bool:
    """Whether the question asks with a question word (誰, いつ, 何mL, どこ…) or for a kind of
    fact, so that a span alone answers it: a yes-or-no question (運転は止まりますか, 何か問題は
    ありますか, 全国で使えますか) or a bare topic (適用床面積は？) is answered by the sentence
    that says it, not by a name or figure put first."""
    return bool(_ASKING_WORD.search(question)) or fit.answer_kind(question) is not None


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
    "links",
    *(f"link_{name}" for name in _LINKS.values()),
    "wh_particle_match",
    "before_in_question",
    "after_in_question",
    "window_cover",
    "wh_counter_match",
    "owner_cover",
)
_WH_PARTICLE: Final = re.compile(
    r"(?:誰|だれ|何[\u3400-\u9fff々]{0,2}?|なに|なん|どこ|どちら|いつ|どれ"
    r"|どの[^をがにでとはへ、。？?]{0,6}?)"
    r"(から|まで|が|を|に|で|と|へ|の)"
)
_PARTICLES: Final = _SYMBOLS | {"助詞"}
WINDOW: Final = 6
"""Words either side of a span whose question words count for ``window_cover``."""


_WH_COUNTER: Final = re.compile(r"(?:何|なん)([かヵヶ]月|(?![故処])[\u3400-\u9fff々]{1,2})")


def wh_counter(question: str) -> str:
    """What the question word is counted or named with (年 of 何年, 県 of 何県), '' for none."""
    found = _WH_COUNTER.search(folded(question))
    return found.group(1) if found else ""


def wh_particle(question: str) -> str:
    """The particle after the question word and its counter (が of 誰が, に of 何年に), ''
    for none."""
    found = _WH_PARTICLE.search(question)
    return found.group(1) if found else ""


_OPENING: Final = frozenset({"(", "（", "[", "［", "【"})
_CLOSING: Final = frozenset({")", "）", "]", "］", "】"})
OWNER_WORDS: Final = 6


def _past_brackets(words: Sequence[Word], i: int) -> int:
    """The index of the first word at or after ``i`` outside a bracketed gloss (the reading
    in 中休み（つゆのなかやすみ）という)."""
    if i < len(words) and words[i][0] in _OPENING:
        close = next((j for j in range(i + 1, len(words)) if words[j][0] in _CLOSING), -1)
        if close > 0:
            return close + 1
    return i


def _owner(words: Sequence[Word], start: int) -> str:
    """What a span in brackets says something of: the words just before the opening bracket
    back to a particle or punctuation, at most ``OWNER_WORDS`` (詰め替え用 of
    詰め替え用（1,200mL）, whatever part of speech 詰め替え is read as), folded; '' when the
    span is not in brackets."""
    if start == 0 or words[start - 1][0] not in _OPENING:
        return ""
    i = start - 1
    while i > max(0, start - 1 - OWNER_WORDS) and not _breaks_owner(words[i - 1]):
        i -= 1
    return "".join(folded(surface(w)) for w in words[i : start - 1])


def _breaks_owner(word: Word) -> bool:
    head = word[2][0] if word[2] else ""
    return head == "助詞" or (head in _SYMBOLS and word[0] != "・")


def _content_near(words: Sequence[Word], indices: range) -> str:
    """The first word of ``indices`` that is no particle or symbol, folded ('' for none)."""
    for i in indices:
        if 0 <= i < len(words) and (not words[i][2] or words[i][2][0] not in _PARTICLES):
            return folded(words[i][0])
    return ""


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
    particle = wh_particle(q.text)
    counter = wh_counter(q.text)
    total = sum(t.weight for t in q.terms) or 1.0
    folded_words = [folded(w[0]) for w in words]
    named = [
        (
            len(p) > 1 and p[1] == "固有名詞",
            len(p) > 2 and p[2] == "人名",
            len(p) > 2 and p[2] == "地名",
            len(p) > 1 and p[1] == "数詞",
        )
        for p in (w[2] for w in words)
    ]
    rows: list[list[float]] = []
    n = max(len(words), 1)
    for s in found:
        text = folded(s.text)
        proper, person, place, numeral = (
            any(flags) for flags in zip(*named[s.start : s.end], strict=True)
        )
        following = _past_brackets(words, s.end)
        nxt = words[following][0] if following < len(words) else ""
        after = words[following + 1][0] if following + 1 < len(words) else ""
        before = _content_near(words, range(s.start - 1, s.start - 3, -1))
        enclosed = following < len(words) and words[following][0] in _CLOSING
        behind = "" if enclosed else _content_near(words, range(following, following + 3))
        owner = _owner(words, s.start)
        near = (  # the two sides apart: no question word is matched across the span
            "".join(folded_words[max(0, s.start - WINDOW) : s.start])
            + "\0"
            + "".join(folded_words[s.end : s.end + WINDOW])
        )
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
                float(proper),
                float(person),
                float(place),
                float(numeral),
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
                float(len(s.links)),
                *(float(link in s.links) for link in _LINKS),
                float(bool(particle) and nxt == particle),
                float(len(before) > 1 and before in asked),
                float(len(behind) > 1 and behind in asked),
                sum(t.weight for t in q.terms if t.said_in(near) and not t.said_in(text)) / total,
                float(bool(counter) and text.endswith(counter)),
                sum(t.weight for t in q.terms if owner and t.said_in(owner)) / total,
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
