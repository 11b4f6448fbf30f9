"""What a candidate line of an answer is, as numbers that mean the same in any corpus.

A candidate is a sentence, list item or table row of a retrieved passage. Its features say how
the retrievers ranked its passage, how close the sentence itself is to the question, how much
of the question's content (weighted by part of speech: names and codes weigh most) the
sentence, its passage and its headings cover, what kind of fact the question asks and whether
the line holds one, and where the line sits. Nothing here depends on a corpus's statistics
(no document frequencies), so that the same figure means the same thing in every index and
no count of unreadable documents reaches an answer. Pure functions; the learned stage
(:mod:`shirabe.answering.learned`) turns them into probabilities.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Final

from shirabe.answering import fit, tables
from shirabe.text.normalize import folded
from shirabe.text.terms import is_code

Word = tuple[str, str, tuple[str, ...]]
"""A word as the tokenizer gives it: surface, normalised form, part of speech."""

KINDS: Final = tuple(fit.KIND_NAMES)
"""The kinds of fact a question may ask (money, number, time, …)."""
RETRIEVERS: Final = ("bm25", "bm25_sentence", "dense", "dense_sentence")
MISSING_RANK: Final = 100.0
"""The rank given to a passage a retriever did not return (ranks are 1-based)."""

_QUESTION_WORDS: Final = frozenset(
    [
        "何",
        "なに",
        "なん",
        "誰",
        "だれ",
        "どなた",
        "どこ",
        "どちら",
        "いつ",
        "いくつ",
        "いくら",
        "どう",
        "どの",
        "どんな",
        "どれ",
        "なぜ",
    ]
)
_ASKING_CHARACTERS: Final = "何誰"
"""A word that begins with one of these asks (何回, 何時, 何番目, 誰々) or says nothing (何らか)."""
_EMPTY_NOUNS: Final = frozenset(
    [
        "こと",
        "もの",
        "ため",
        "ところ",
        "よう",
        "方",
        "場合",
        "とき",
        "時",
        "際",
        "の",
        "ん",
        "等",
        "など",
        "以上",
        "以下",
        "他",
        "ほか",
    ]
)
_NEGATION: Final = re.compile(r"ない|なかっ|ません|ず[、。に]|ぬ|不可|できません|禁止")
_NUMBER: Final = re.compile(r"\d")
_FIELD: Final = re.compile(r"^\s*([^:：|\n]{1,20})[:：]\s*\S")
_ROW: Final = re.compile(r"^\s*\|.*\|\s*$")


@dataclass(frozen=True, slots=True)
class Term:
    """A content word of the question, as compared with passages (folded), with its weight."""

    text: str
    weight: float
    code: bool = False
    spellings: tuple[str, ...] = ()
    """Other words of the term's synonym groups (folded) that the retrieved passages write:
    印鑑 for はんこ, 国民健康保険 for 国保. See :func:`with_spellings`."""

    def said_in(self, text: str) -> bool:
        """Whether ``text`` (folded) writes the term or one of its other spellings."""
        return self.text in text or any(s in text for s in self.spellings)


def weight_of(word: Word) -> float:
    """How much a question word says about what is asked, by its part of speech: a proper
    noun or a code most, a number or common noun next, a verb or adjective least; particles,
    question words, the words they make (何回, 何番, 誰々) and nouns that only hold a place
    (こと, 場合) nothing: what is asked is not written beside the answer."""
    surface, _normal, pos = word
    head = pos[0] if pos else ""
    if not surface.strip() or surface in _QUESTION_WORDS or surface in _EMPTY_NOUNS:
        return 0.0
    if surface[0] in _ASKING_CHARACTERS:
        return 0.0
    if is_code(folded(surface)):
        return 3.0
    if head == "名詞":
        if len(pos) > 1 and pos[1] == "固有名詞":
            return 3.0
        if len(pos) > 1 and pos[1] == "数詞":
            return 2.0
        if len(pos) > 2 and pos[2] in {"助数詞可能", "副詞可能"} and len(surface) == 1:
            return 0.5
        return 2.0 if len(surface) > 1 else 1.0
    if head in {"動詞", "形容詞"}:
        return 0.0 if len(pos) > 1 and pos[1] == "非自立可能" else 1.0
    if head == "形状詞":
        return 1.0
    return 0.0


def question_terms(words: Sequence[Word]) -> list[Term]:
    """The question's content words, each once, with their weights. A noun right after 何
    is its counter (年 of 何年, 種類 of 何種類): part of what is asked, so it weighs nothing."""
    terms: dict[str, Term] = {}
    merged = _with_codes(words)
    for i, word in enumerate(merged):
        w = weight_of(word)
        if w <= 0 or (i and merged[i - 1][0] == "何" and word[2][:1] == ("名詞",)):
            continue
        text = folded(word[0]).strip()
        if text and (text not in terms or terms[text].weight < w):
            terms[text] = Term(text, w, is_code(text))
    return list(terms.values())


_CODE_PART: Final = re.compile(r"[0-9A-Za-z._\-/:+]+")


def _with_codes(words: Sequence[Word]) -> list[Word]:
    """The words with each code the tokenizer split (INC, -, 2024, -, 0004) joined again into
    one word (INC-2024-0004), as the index keeps it whole."""
    out: list[Word] = []
    run: list[Word] = []
    for word in [*words, ("", "", ())]:
        if word[0] and _CODE_PART.fullmatch(word[0]):
            run.append(word)
            continue
        joined = "".join(w[0] for w in run)
        if len(run) > 1 and is_code(folded(joined)):
            out.append((joined, joined, ("名詞", "固有名詞", "一般", "*", "*", "*")))
        else:
            out.extend(run)
        run = []
        if word[0]:
            out.append(word)
    return out


def covered_weight(terms: Sequence[Term], text: str) -> float:
    """The share of the terms' weight that ``text`` (folded) holds as written."""
    total = sum(t.weight for t in terms)
    if total <= 0:
        return 0.0
    return sum(t.weight for t in terms if t.said_in(text)) / total


def held_in_part(terms: Sequence[Term], text: str) -> float:
    """The share of the terms' weight that ``text`` does not hold whole but holds the first
    part of: at least two characters and half the term (担当 of 担当者, 内線 of 内線番号)."""
    total = sum(t.weight for t in terms)
    if total <= 0:
        return 0.0
    part = 0.0
    for t in terms:
        if t.code or t.said_in(text):
            continue
        shortest = max(2, (len(t.text) + 1) // 2)
        if any(t.text[:n] in text for n in range(len(t.text) - 1, shortest - 1, -1)):
            part += t.weight
    return part / total


def other_spellings(
    terms: Sequence[Term],
    groups: Mapping[str, Sequence[str]],
    written: str,
) -> dict[str, tuple[str, ...]]:
    """For each term, the other words of its synonym groups (``groups``: a term's folded text
    to every word of its groups) that ``written`` (folded) holds. A code has none; a word of
    one character is too short to be told from part of another word."""
    out: dict[str, tuple[str, ...]] = {}
    for term in terms:
        if term.code:
            continue
        found = sorted(
            {
                f
                for word in groups.get(term.text, ())
                if len(f := folded(word).strip()) >= 2 and f != term.text and f in written
            }
        )
        if found:
            out[term.text] = tuple(found)
    return out


def with_spellings(q: Question, spellings: Mapping[str, tuple[str, ...]]) -> Question:
    """``q`` with each term's other spellings (:func:`other_spellings`)."""
    if not spellings:
        return q
    terms = tuple(replace(t, spellings=spellings.get(t.text, t.spellings)) for t in q.terms)
    return replace(q, terms=terms)


@dataclass(frozen=True, slots=True)
class Line:
    """A candidate line with what the features need of its passage."""

    text: str
    order: int
    """The line's place among its passage's candidate lines, from 0."""
    lines: int
    """How many candidate lines its passage has."""
    hit_index: int
    passage: str
    headings: str
    """The passage's heading path and file name, as one text."""
    before: str
    """The line before it in the passage ('' for the first)."""
    is_record: bool
    is_summary: bool
    ranks: dict[str, int]
    scores: dict[str, float]
    fused: float
    dense: float | None
    """The sentence's own cosine to the question, when its vector is known."""
    lexical: float
    """The share of the question's index terms (bigrams at half weight) in the line."""


@dataclass(frozen=True, slots=True)
class Question:
    """What the features need of the question, computed once."""

    text: str
    terms: tuple[Term, ...]
    kind: fit.AnswerKind | None
    negated: bool


def question(text: str, words: Sequence[Word]) -> Question:
    return Question(
        text=text,
        terms=tuple(question_terms(words)),
        kind=fit.answer_kind(text),
        negated=bool(_NEGATION.search(text)),
    )


LINE_FEATURES: Final = (
    "hit_index",
    "fused_ratio",
    *(f"rank_{r}" for r in RETRIEVERS),
    "dense_passage",
    "dense_best_sentence",
    "bm25_ratio",
    "bm25_sentence_ratio",
    "dense",
    "dense_gap",
    "dense_rank",
    "lexical",
    "lexical_gap",
    "lexical_rank",
    "cover_line",
    "cover_before",
    "cover_passage",
    "cover_headings",
    "cover_all",
    "part_line",
    "part_all",
    "uncovered_weight",
    "codes_asked",
    "codes_missing",
    "names_missing",
    *(f"asks_{k}" for k in (*KINDS, "none")),
    "holds_kind",
    "fits_figure",
    "has_number",
    "field_named",
    "is_field",
    "is_row",
    "is_item",
    "is_record",
    "is_summary",
    "order",
    "order_share",
    "length",
    "negated",
    "negation_match",
    "question_length",
    "question_weight",
)
"""The features of one candidate line, in the order :func:`line_features` gives them."""


def line_features(q: Question, line: Line, peers: Sequence[Line]) -> list[float]:
    """The features of ``line`` (one of ``peers``, every candidate of the question)."""
    text = folded(line.text)
    passage = folded(line.passage)
    headings = folded(line.headings)
    before = folded(line.before)
    terms = q.terms
    total = sum(t.weight for t in terms)
    everything = " ".join((passage, headings))
    uncovered = sum(t.weight for t in terms if not t.said_in(everything))
    codes = [t for t in terms if t.code]
    names = [t for t in terms if t.weight >= 3.0 and not t.code]
    dense_all = [p.dense for p in peers if p.dense is not None]
    best_dense = max(dense_all, default=0.0)
    dense = line.dense if line.dense is not None else 0.0
    lexical_all = [p.lexical for p in peers]
    top_scores = _top_scores(peers)
    kind = q.kind
    field = _FIELD.match(line.text)
    negated = bool(_NEGATION.search(text))
    values = [
        float(line.hit_index),
        line.fused / top_scores["fused"] if top_scores["fused"] > 0 else 0.0,
        *(float(line.ranks.get(r, MISSING_RANK)) for r in RETRIEVERS),
        line.scores.get("dense", 0.0),
        line.scores.get("dense_sentence", 0.0),
        _ratio(line.scores.get("bm25"), top_scores["bm25"]),
        _ratio(line.scores.get("bm25_sentence"), top_scores["bm25_sentence"]),
        dense,
        best_dense - dense,
        float(sum(1 for d in dense_all if d > dense)),
        line.lexical,
        max(lexical_all, default=0.0) - line.lexical,
        float(sum(1 for x in lexical_all if x > line.lexical)),
        covered_weight(terms, text),
        covered_weight(terms, " ".join((before, text))),
        covered_weight(terms, passage),
        covered_weight(terms, headings),
        covered_weight(terms, everything),
        held_in_part(terms, text),
        held_in_part(terms, everything),
        uncovered,
        float(len(codes)),
        float(sum(1 for t in codes if not t.said_in(everything))),
        float(sum(1 for t in names if not t.said_in(everything))),
        *(float(kind is not None and kind.kind == k) for k in KINDS),
        float(kind is None),
        float(kind is not None and fit.has_kind(kind, line.text)),
        float(kind is not None and fit.fits_figure(q.text, kind, line.text)),
        float(bool(_NUMBER.search(text))),
        float(field is not None and any(t.said_in(folded(field.group(1))) for t in terms)),
        float(field is not None),
        float(bool(_ROW.match(line.text))),
        float(bool(tables.LIST_MARKER.match(line.text))),
        float(line.is_record),
        float(line.is_summary),
        float(line.order),
        line.order / max(line.lines - 1, 1),
        math.log1p(len(line.text)),
        float(negated),
        float(negated == q.negated),
        math.log1p(len(q.text)),
        total,
    ]
    return values


def _ratio(value: float | None, top: float) -> float:
    if value is None or top <= 0:
        return 0.0
    return value / top


def _top_scores(peers: Sequence[Line]) -> dict[str, float]:
    """The highest fused and lexical scores among the candidates' passages."""
    return {
        "fused": max((p.fused for p in peers), default=0.0),
        "bm25": max((p.scores.get("bm25", 0.0) for p in peers), default=0.0),
        "bm25_sentence": max((p.scores.get("bm25_sentence", 0.0) for p in peers), default=0.0),
    }


QUESTION_FEATURES: Final = (
    "best",
    "second",
    "margin",
    "best_hit_index",
    "mass_top3",
    "best_cover_line",
    "best_cover_all",
    "best_uncovered",
    "best_holds_kind",
    "best_dense",
    "best_lexical",
    "top_dense_sentence",
    "top_dense",
    "codes_missing",
    "names_missing",
    "min_uncovered",
    "max_cover_all",
    "any_holds_kind",
    *(f"asks_{k}" for k in (*KINDS, "none")),
    "question_weight",
)
"""The features of a question over its candidates, in the order
:func:`question_features` gives them."""


def question_features(
    q: Question, rows: Sequence[Sequence[float]], scores: Sequence[float]
) -> list[float]:
    """Whether the candidates answer the question at all: the line model's best scores
    (``scores``, one per line row, as probabilities) with the features of the best line and
    of the passage retrieved first."""
    index = {name: i for i, name in enumerate(LINE_FEATURES)}
    order = sorted(range(len(scores)), key=lambda i: -scores[i])
    best = order[0] if order else None
    second = scores[order[1]] if len(order) > 1 else 0.0
    first = min(rows, key=lambda r: r[index["hit_index"]]) if rows else None

    def of(name: str) -> float:
        return rows[best][index[name]] if best is not None else 0.0

    def column(name: str) -> list[float]:
        return [r[index[name]] for r in rows]

    kind = q.kind
    total = sum(t.weight for t in q.terms)
    return [
        scores[best] if best is not None else 0.0,
        second,
        (scores[best] - second) if best is not None else 0.0,
        of("hit_index"),
        sum(sorted(scores, reverse=True)[:3]),
        of("cover_line"),
        of("cover_all"),
        of("uncovered_weight"),
        of("holds_kind"),
        of("dense"),
        of("lexical"),
        first[index["dense_best_sentence"]] if first else 0.0,
        first[index["dense_passage"]] if first else 0.0,
        min(column("codes_missing"), default=0.0),
        min(column("names_missing"), default=0.0),
        min(column("uncovered_weight"), default=total),
        max(column("cover_all"), default=0.0),
        max(column("holds_kind"), default=0.0),
        *(float(kind is not None and kind.kind == k) for k in KINDS),
        float(kind is None),
        total,
    ]
