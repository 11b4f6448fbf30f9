"""What is written around a candidate sentence of an answer: its passage with headings and
file name, the sentences next to it, and what the passage does not name of what a question
needs. Pure functions over retrieved hits."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from shirabe.answering import asking, compound_nouns, mentions
from shirabe.records import Hit
from shirabe.retrieval.query import Query
from shirabe.text.normalize import folded


@dataclass(frozen=True, slots=True)
class Candidate:
    hit_index: int
    order: int
    text: str
    lexical: float
    dense: float | None
    score: float = 0.0


def absent(codes: Sequence[str], hits: Sequence[Hit]) -> list[str]:
    """The codes (lower-cased) that no hit's text, headings or file name holds as a word."""
    if not codes:
        return []
    text = unicodedata.normalize("NFKC", " ".join(context(h) for h in hits)).lower()
    return [c for c in codes if not re.search(rf"(?<![0-9a-z]){re.escape(c)}(?![0-9a-z])", text)]


def line(hits: Sequence[Hit], candidate: Candidate) -> str:
    """A sentence with the headings of its passage; for a field of a record (a row of a CSV
    file or a sheet, one ``header: value`` line per field), the record's first field too,
    which names it as a heading would (管理番号: INC-2025-0005 for its 概要)."""
    chunk = hits[candidate.hit_index].chunk
    key = [chunk.text.split("\n", 1)[0]] if "row" in chunk.locator else []
    return " ".join([candidate.text, *key, *chunk.heading_path])


def context(hit: Hit) -> str:
    """What a passage says, with its headings and file name."""
    chunk = hit.chunk
    return " ".join([chunk.text, *chunk.heading_path, chunk.source])


def near(hits: Sequence[Hit], candidate: Candidate, texts: dict[tuple[int, int], str]) -> str:
    """What is written next to a sentence: itself, the sentence before it (whose subject it
    may leave unsaid) or, when it opens by pointing back, every sentence before it, its
    passage's first sentence (its topic), headings and file name."""
    first = 0 if REFERS.match(candidate.text) else candidate.order - 1  # それらの見解は
    before = [texts.get((candidate.hit_index, o), "") for o in range(first, candidate.order)]
    opening = texts.get((candidate.hit_index, 0), "")  # the passage's topic
    chunk = hits[candidate.hit_index].chunk
    return " ".join([line(hits, candidate), *before, opening, chunk.source])


REFERS: Final = re.compile(
    r"\W{0,3}(?:また、|さらに、|なお、|そして、|特に、)?"
    r"(?:それ(?!ぞれ)|その(?!他|ほか)|これ(?!まで|から)|この|こう|そう|同(?!時|様|意|一|額|封)|前者|後者)"
)
"""A sentence that opens by pointing back (それらの見解は, この制度は) to what the passage named
before it."""


def lacking(
    query: Query,
    hits: Sequence[Hit],
    candidate: Candidate,
    wanted: Sequence[str],
    need: asking.Needs | None,
) -> list[str]:
    """What the candidate's passage does not name of what the question needs: its terms
    and, when a way of doing is asked for a verb, the verb, which the sentence or its
    headings name (a cleaning row of a table about the part is no way to replace it, though
    the passage says 交換 elsewhere). A condition the passage names in part (東京 of
    東京に出張したとき, under 第6条（宿泊費）) may have its other words elsewhere in the same
    document (出張 in 旅費's other articles), and so may what the asked thing belongs to
    (出張 of 一般社員の出張の宿泊費) when the passage names the thing itself (宿泊費)."""
    hit = hits[candidate.hit_index]
    said = context(hit)
    found = shortened(query, mentions.missing_terms(wanted, said), said)
    action = need.action if need else None
    document = ""
    # (terms, whether all of them may be elsewhere): a condition named in part; what the asked
    # thing belongs to (出張 of 出張の宿泊費, under 第6条（宿泊費）) when the passage names the
    # thing and does not tie it to something else (総合運動公園の駐車場 for 東出張所の駐車場)
    groups = [(c.terms, False) for c in need.conditions] if need else []
    owners = need.owners if need else ()
    if owners and need and not set(need.focus[len(owners) :]) & set(found):
        tied = re.search(rf"(\w+)の{re.escape(need.focus[-1])}", candidate.text)
        if not tied or mentions.missing_terms(list(owners), tied.group(1)) != list(owners):
            groups.append((owners, True))
    for terms, whole in groups:
        unnamed = [t for t in terms if t in found]
        if unnamed and (len(unnamed) < len(terms) or whole):
            document = document or " ".join(
                context(h) for h in hits if h.chunk.source == hit.chunk.source
            )
            named = set(unnamed) - set(mentions.missing_terms(unnamed, document))
            if not whole and len(terms) >= LOOSE_CONDITION and len(unnamed) - len(named) == 1:
                named = set(unnamed)  # 電話で of 保育所の入所について保育課に電話で聞くとき
            found = [t for t in found if t not in named]
    if action and not asking.does(action.verb, query.tokenize(line(hits, candidate))):
        found.append(action.verb)
    return found


def shortened(query: Query, terms: Sequence[str], said: str) -> list[str]:
    """The ``terms`` that ``said`` does not write in a long or short form either: a word the
    dictionary puts in the same synonym group that one of them abbreviates (国保 asked,
    国民健康保険 written; 年休 asked, 年次有給休暇 written, never 年末年始休業)."""
    groups: dict[str, set[int]] = {}
    for term in terms:
        words = query.synonym_groups_of(term)
        if len(words) == 1 and words[0][1]:
            groups[term] = set(words[0][1])
    if not groups:
        return list(terms)
    written = [(w, set(ids)) for w, ids in query.synonym_groups_of(said) if ids]
    return [
        t
        for t in terms
        if not any(
            ids & groups.get(t, set())
            and (mentions.abbreviates(t, w) or mentions.abbreviates(w, t))
            for w, ids in written
        )
    ]


LOOSE_CONDITION: Final = 4
"""A condition of this many nouns or more may leave one of them to other words (保育課に電話で
聞くとき, answered by a row of 保育課 with its 内線)."""


_SAYS_WHY: Final = frozenset({"原因", "理由", "為", "所為", "目的", "背景", "結果", "影響", "由来"})
"""Words that mark a reason (原因：…, …のため) and say nothing of it themselves."""


def restates(query: Query, sentence: str) -> bool:
    """Whether a reason sentence only says again what the question says (原因：フロア
    スイッチの電源ユニットの故障。 for フロアスイッチの電源ユニットが故障したのはなぜ): it has
    no word of its own besides the words that mark a reason."""
    asked = set(query.tokens)
    own = [
        t
        for t in query.tokenize(sentence)
        if not t.startswith("~") and t not in asked and t not in _SAYS_WHY
    ]
    return not own


ECHO_SHARE: Final = 0.2
"""The largest share of a sentence's distinct words not in the question for it to only echo
the question."""


def echoes(query: Query, sentence: str) -> bool:
    """Whether a sentence says little beyond the question it matches best (梅雨の期間中
    ほとんど雨が降らない場合がある。 for 梅雨の期間中ほとんど雨が降らない場合をなんという):
    at most a fifth of its words are not the question's."""
    asked = set(query.tokens)
    words = [t for t in dict.fromkeys(query.tokenize(sentence)) if not t.startswith("~")]
    if not words:
        return False
    own = [t for t in words if t not in asked]
    return len(own) <= ECHO_SHARE * len(words)


def another_kind(
    query: Query,
    hits: Sequence[Hit],
    candidate: Candidate,
    whole: Sequence[tuple[str, str]],
    passages: dict[int, Sequence[asking.Word]],
) -> list[str]:
    """The compounds of the question (``whole``: each compound with its head) whose candidate
    sentence, or passage when it does not name them, tells of another kind of the thing asked
    (集じんフィルターを交換したら, for 加湿フィルターの交換; the 本体ボトル row, for お試し用
    ボトル). Compounds the question names itself (集合注射 beside 予防注射) are no other kind.
    ``passages`` keeps the words of each passage once read."""
    asked = folded(query.text)

    def other(compound: str, head: str, words: Sequence[asking.Word]) -> bool:
        return any(s not in asked for s in compound_nouns.siblings(compound, head, words))

    found: list[str] = []
    if not whole:
        return found
    said = context(hits[candidate.hit_index])
    sentence = query.words_of(candidate.text)
    for compound, head in whole:
        if other(compound, head, sentence):
            found.append(compound)
        elif mentions.missing_terms([compound], said):
            key = candidate.hit_index
            if key not in passages:
                passages[key] = query.words_of(said)
            if other(compound, head, passages[key]):
                found.append(compound)
    return found


_ITEM: Final = re.compile(r"^[ \t　]*[・•●○◆■◇][ \t　]*([^\s、。：:（(]{2,30})", re.MULTILINE)
"""A line of a list opening with its item's name (・高額療養費, ・葬祭費　5万円)."""


def another_item(question: str, passage: str, sentence: str) -> list[str]:
    """The item of a list the question names (高額療養費) when ``sentence`` belongs to another
    item of the same list (申請期限は…2年です under ・葬祭費): each item's sentences follow its
    line. Empty when the passage lists no such items or the sentence is under the one asked."""
    at = passage.find(sentence)
    items = [(m.start(), m.group(1)) for m in _ITEM.finditer(passage)]
    if at < 0 or len(items) < 2:
        return []
    asked = folded(question)
    named = [name for _start, name in items if folded(name) in asked]
    under = [name for start, name in items if start <= at]
    if not named or not under or under[-1] in named:
        return []
    return named[:1]


def gaps_of(
    query: Query,
    hits: Sequence[Hit],
    candidate: Candidate,
    wanted: Sequence[str],
    need: asking.Needs | None,
    whole: Sequence[tuple[str, str]],
    passages: dict[int, Sequence[asking.Word]],
) -> tuple[list[str], bool]:
    """Why the candidate does not answer (:func:`lacking`, else :func:`another_kind`, else
    :func:`another_item`; empty when it answers), and whether that is because it tells of
    another thing than the one asked (a sentence on the 集じんフィルター for the
    加湿フィルター) rather than of the thing asked without what is needed (the 加湿フィルター
    row, which tells how to clean it, not how to replace it)."""
    gaps = lacking(query, hits, candidate, wanted, need)
    if gaps:
        return gaps, False
    chunk = hits[candidate.hit_index].chunk
    other = another_kind(query, hits, candidate, whole, passages) or another_item(
        query.text, chunk.text, candidate.text
    )
    return other, bool(other)
