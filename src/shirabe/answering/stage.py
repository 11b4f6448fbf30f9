"""The learned answer stage: which candidate line answers, and whether any does.

For a question and its retrieved passages, every sentence, list item and table row is a
candidate (:meth:`ExtractiveGenerator.candidates`). The stage describes each with the features
of :mod:`shirabe.answering.features`, scores them with the line model, and gives the question
model's calibrated probability that the candidates answer the question. Training
(:mod:`shirabe.training.lines`) builds its examples through the same functions, so the
model sees at training time exactly what it sees when answering.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from shirabe.answering import features, mentions, spans
from shirabe.answering.context import Candidate
from shirabe.answering.learned import AnswerModel
from shirabe.records import Hit, RefusalCode
from shirabe.retrieval.query import Query
from shirabe.text.normalize import folded


def candidate_lines(hits: Sequence[Hit], candidates: Sequence[Candidate]) -> list[features.Line]:
    """Each candidate as a :class:`features.Line`, in the order given."""
    per_hit: dict[int, list[Candidate]] = {}
    for c in candidates:
        per_hit.setdefault(c.hit_index, []).append(c)
    place: dict[tuple[int, int], int] = {}
    before: dict[tuple[int, int], str] = {}
    for i, found in per_hit.items():
        group = sorted(found, key=lambda c: c.order)
        for k, c in enumerate(group):
            place[(i, c.order)] = k
            before[(i, c.order)] = group[k - 1].text if k else ""
    out: list[features.Line] = []
    for c in candidates:
        hit = hits[c.hit_index]
        chunk = hit.chunk
        out.append(
            features.Line(
                text=c.text,
                order=place[(c.hit_index, c.order)],
                lines=len(per_hit[c.hit_index]),
                hit_index=c.hit_index,
                passage=chunk.text,
                headings=" ".join([*chunk.heading_path, chunk.source.rsplit("/", 1)[-1]]),
                before=before[(c.hit_index, c.order)],
                is_record="row" in chunk.locator,
                is_summary=chunk.is_summary,
                ranks=dict(hit.ranks),
                scores=dict(hit.scores),
                fused=hit.score,
                dense=c.dense,
                lexical=c.lexical,
            )
        )
    return out


@dataclass(frozen=True, slots=True)
class Judgement:
    """What the stage made of a question's candidates."""

    probability: float
    """The calibrated probability that the candidates answer the question."""
    ranked: list[Candidate]
    """The candidates, best first, each with its line probability as its score."""
    question: features.Question
    lines: list[features.Line] = field(default_factory=list)
    """The candidates as lines, in the order they were given (not ranked)."""
    line_rows: list[list[float]] = field(default_factory=list)
    question_row: list[float] = field(default_factory=list)


def spellings(
    query: Query, q: features.Question, hits: Sequence[Hit]
) -> dict[str, tuple[str, ...]]:
    """The other words of the question's terms' synonym groups that the passages or their
    headings write (ホテル代 asked, 宿泊費 written): the tokenizer's dictionary, not the
    corpus, says which words mean the same; so do the words documents write for an attribute
    a question names (:data:`mentions.SPELLINGS`: 重さ asked, a spec table's 質量 written),
    which the answerer searches with too."""
    ids = {folded(w).strip(): g for w, g in query.synonym_groups_of(query.text) if g}
    asked = [t for t in q.terms if t.text in ids or t.text in mentions.SPELLINGS]
    if not asked or not hits:
        return {}
    written = folded(
        "\n".join(
            f"{h.chunk.text}\n{' '.join(h.chunk.heading_path)}\n{h.chunk.source}" for h in hits
        )
    )
    groups = {
        t.text: [
            *(query.synonyms(ids[t.text]) if t.text in ids else ()),
            *mentions.SPELLINGS.get(t.text, ()),
        ]
        for t in asked
    }
    return features.other_spellings(asked, groups, written)


def describe(
    query: Query, hits: Sequence[Hit], candidates: Sequence[Candidate]
) -> tuple[features.Question, list[features.Line], list[list[float]]]:
    """The question, its candidate lines and their feature rows."""
    q = features.question(query.text, query.words())
    q = features.with_spellings(q, spellings(query, q, hits))
    lines = candidate_lines(hits, candidates)
    rows = [features.line_features(q, line, lines) for line in lines]
    return q, lines, rows


def judge(
    model: AnswerModel, query: Query, hits: Sequence[Hit], candidates: Sequence[Candidate]
) -> Judgement:
    """The candidates ranked by the line model, with the probability that they answer."""
    q, lines, rows = describe(query, hits, candidates)
    scores = model.line_scores(rows)
    qrow = features.question_features(q, rows, scores)
    ranked = [
        Candidate(c.hit_index, c.order, c.text, c.lexical, c.dense, score=s)
        for c, s in zip(candidates, scores, strict=True)
    ]
    ranked.sort(key=lambda c: (-c.score, c.hit_index, c.order))
    return Judgement(model.answerable(qrow), ranked, q, lines, rows, qrow)


def reason(judgement: Judgement) -> tuple[RefusalCode, str]:
    """Why the candidates do not answer, in Japanese: no line holds the kind of fact asked
    (an amount for いくら), else the words of the question that the best line's passage and
    its headings do not name (names and codes first), else that nothing is close enough."""
    q = judgement.question
    kind = q.kind
    holds = features.LINE_FEATURES.index("holds_kind")
    if kind is not None and not any(row[holds] for row in judgement.line_rows):
        return "kind", f"{kind.name}（{kind.asked}）を示す記載が見つかりません"
    best = judgement.ranked[0] if judgement.ranked else None
    line = next(
        (
            x
            for x in judgement.lines
            if best is not None and x.hit_index == best.hit_index and x.text == best.text
        ),
        None,
    )
    if line is not None:
        where = folded(" ".join((line.passage, line.headings)))
        missing = sorted(
            (t for t in q.terms if t.weight >= 2.0 and "何" not in t.text and not t.said_in(where)),
            key=lambda t: -t.weight,
        )
        if missing:
            named = "".join(f"「{_as_asked(q.text, t.text)}」" for t in missing[:3])
            return "terms", f"{named}についての記載が見つかりません"
    return "weak", "質問に十分近い記載が見つかりません"


def _as_asked(question: str, term: str) -> str:
    """A folded term as the question spells it (AQ-250, not aq-250)."""
    plain = unicodedata.normalize("NFKC", question)
    at = plain.lower().find(term)
    return plain[at : at + len(term)] if at >= 0 else term


SPAN_LINES = 2
"""The best lines (by the line model) whose spans may be the short answer."""


def best_span(
    model: AnswerModel,
    q: features.Question,
    lines: Sequence[str],
    line_scores: Sequence[float],
    words_of: Callable[[str], list[features.Word]],
) -> tuple[str, float]:
    """The most likely short answer among the spans of the best lines that hold the kind of
    fact asked, with its probability ('' and 0 when the question asks for a reason or a way
    of doing, when there is none, or without a span model)."""
    if model.spans is None or not spans.asks_for_span(q):
        return "", 0.0
    order = sorted(range(len(lines)), key=lambda i: -line_scores[i])[:SPAN_LINES]
    texts: list[str] = []
    rows: list[list[float]] = []
    for rank, i in enumerate(order):  # the spans of every line are scored in one pass
        words = words_of(lines[i])
        found = [s for s in spans.spans(words) if spans.fits(q, s.text)]  # described if fit
        if not found:
            continue
        texts += [s.text for s in found]
        rows += spans.span_features(q, words, found, float(line_scores[i]), rank)
    if not rows:
        return "", 0.0
    scores = model.span_scores(rows)
    k = max(range(len(rows)), key=lambda j: scores[j])
    return texts[k], scores[k]
