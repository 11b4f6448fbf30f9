"""Answers without a language model: the best supporting sentences, quoted with citations."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from shirabe.answering import (
    asking,
    compound_nouns,
    fit,
    mentions,
    short_answers,
    showing,
    stage,
    tables,
)
from shirabe.answering.context import (
    Candidate,
    absent,
    echoes,
    gaps_of,
    line,
    near,
    restates,
)
from shirabe.answering.instructions import instruction_flags
from shirabe.answering.learned import AnswerModel, load_model
from shirabe.answering.refusal import quoted, refusal
from shirabe.indexing.passages import embedding_key, sentence_embedding_text
from shirabe.llm.protocol import ChatModel
from shirabe.records import Answer, Citation, Hit, RefusalCode
from shirabe.retrieval.query import Query
from shirabe.stores.protocol import Store
from shirabe.text.sentences import split_sentences
from shirabe.text.synonyms import Synonyms
from shirabe.text.terms import is_code


def coverage(query_tokens: Sequence[str], sentence_tokens: Sequence[str]) -> float:
    """Share of the query's distinct terms found in the sentence; bigrams count half."""
    wanted = set(query_tokens)
    if not wanted:
        return 0.0
    have = set(sentence_tokens)

    def weight(t: str) -> float:
        return 0.5 if t.startswith("~") else 1.0

    total = sum(weight(t) for t in wanted)
    return sum(weight(t) for t in wanted & have) / total


def clip(text: str, limit: int) -> str:
    """Shorten ``text`` to at most ``limit`` characters, marking the cut."""
    if len(text) <= limit:
        return text
    return text[: max(limit - 1, 1)] + "…"


_MARKER = short_answers.MARKER


@dataclass(frozen=True, slots=True)
class Decision:
    """What the answerer made of the passages: the candidates ranked best first, why none
    answers (None when one does), and the probability that one does (None when nothing was
    retrieved); ``listed``: the rows of the table or list a question asking for a whole thing
    is answered with (:func:`shirabe.answering.showing.listing`), empty for other answers."""

    ranked: list[Candidate]
    why: tuple[RefusalCode, str] | None
    probability: float | None = None
    judgement: stage.Judgement | None = None
    listed: list[Candidate] = field(default_factory=list)


class ExtractiveGenerator:
    """Picks sentences by query-term coverage, sentence similarity and the hit's rank."""

    name = "extractive"
    chat_model: ChatModel | None = None
    """Quotes the documents: no chat model writes its answers."""

    def __init__(
        self,
        *,
        store: Store,
        embedder_name: str,
        max_chars: int = 150,
        from_hits: int = 3,
        model: AnswerModel | None = None,
        answer_threshold: float | None = None,
    ) -> None:
        self._store = store
        self._embedder_name = embedder_name
        self._max_chars = max_chars
        self._from_hits = from_hits
        self._model = model
        self._answer_threshold = answer_threshold

    def close(self) -> None:
        """Holds nothing to let go of."""

    @property
    def model(self) -> AnswerModel:
        """The learned answer model: the one given, else the one shipped (read when first
        needed, so that reading candidates alone needs no model file)."""
        if self._model is None:
            self._model = load_model()
        return self._model

    @property
    def answer_threshold(self) -> float:
        """The probability below which the stage refuses: the setting, else the model's."""
        if self._answer_threshold is not None:
            return self._answer_threshold
        return self.model.threshold

    def refuse(
        self, query: Query, hits: list[Hit], why: tuple[RefusalCode, str] | None = None
    ) -> Answer:
        return refusal(query.text, hits, why or self.gate_reason(query, hits))

    def gate_reason(self, query: Query, hits: Sequence[Hit]) -> tuple[RefusalCode, str]:
        """Why the retrieval gate refuses: nothing found, a code no document names, or
        passages too far from the question."""
        if not hits:
            return "no_passage", "質問に関係する文書が見つかりません"
        unknown = self.unknown_codes(query, hits)
        if unknown:
            return "unknown", quoted(query.text, unknown) + "についての記載が見つかりません"
        return "weak", "質問に十分近い記載が見つかりません"

    def candidates(self, query: Query, hits: Sequence[Hit]) -> list[Candidate]:
        found: list[tuple[int, int, str]] = []
        for i, hit in enumerate(hits):
            sentences = split_sentences(hit.chunk.text)
            orders = instruction_flags(sentences)
            for order, (sentence, ordering) in enumerate(zip(sentences, orders, strict=True)):
                if (
                    tables.clean(sentence)
                    and not set(sentence) <= set("|-: ")
                    and not tables.is_header(hit.chunk.text, sentence)  # 施設名 | 施設コード
                    and not ordering
                ):
                    found.append((i, order, sentence))
        keys = [embedding_key(sentence_embedding_text(hits[i].chunk, s)) for i, _, s in found]
        vectors = self._store.get_embeddings(self._embedder_name, keys)
        qvec = query.vector if vectors else None
        out: list[Candidate] = []
        for (i, order, sentence), key in zip(found, keys, strict=True):
            vec = vectors.get(key)
            dense = float(np.dot(vec, qvec)) if vec is not None and qvec is not None else None
            out.append(
                Candidate(
                    i, order, sentence, coverage(query.tokens, query.tokenize(sentence)), dense
                )
            )
        return out

    def unknown_codes(self, query: Query, hits: Sequence[Hit]) -> list[str]:
        """Codes in the question (INC-2024-0009, AQ-500) that no retrieved passage contains.
        Only passages the asker may read are retrieved, so this says nothing about documents
        they may not read. Aliases of an official name (synonyms file) are known whatever the
        documents call it."""
        codes = [
            t
            for t in dict.fromkeys(query.tokens)
            if is_code(t) and not any(Synonyms.covers(a, t) for a in query.aliases)
        ]
        return absent(codes, hits)

    def decide(self, query: Query, hits: list[Hit]) -> Decision:
        """The candidates ranked best first, with why none answers (None when one does) and,
        with a learned model, the probability that one does."""
        if not hits:
            return Decision([], self.gate_reason(query, hits))
        candidates = self.candidates(query, hits)
        if not candidates:
            return Decision([], self.gate_reason(query, hits), 0.0)
        judgement = stage.judge(self.model, query, hits, candidates)
        probability = judgement.probability
        gate = self.gate_reason(query, hits)
        if gate[0] == "unknown":
            # A code that no retrieved passage names: the training questions (Wikipedia)
            # hardly ever name codes, so the model has not learned what their absence means.
            return Decision(judgement.ranked, gate, probability)
        ranked, found = self.answering(query, hits, judgement.ranked)
        whole = showing.listing(query, hits, ranked, self._from_hits) if found is None else []
        if probability < self.answer_threshold and not whole:
            # The checks below name what is missing more precisely when they find it.
            why = found or stage.reason(judgement)
            return Decision(ranked, why, probability, judgement)
        return Decision(ranked, found, probability, judgement, whole)

    def why_not(self, query: Query, hits: list[Hit]) -> tuple[RefusalCode, str] | None:
        """Why the passages cannot answer, as :meth:`generate` would refuse; None when a
        sentence answers (the gate of a chat model, which then writes the answer)."""
        return self.decide(query, hits).why

    def generate(self, query: Query, hits: list[Hit]) -> Answer:
        decision = self.decide(query, hits)
        if decision.why or not decision.ranked:
            answer = self.refuse(query, hits, decision.why)
        else:
            answer = self._written(
                query, hits, decision.ranked, decision.judgement, decision.listed
            )
        answer.confidence = decision.probability
        if decision.judgement is not None:
            answer.confidence_factors = self.model.explain(decision.judgement.question_row)
        return answer

    def _written(
        self,
        query: Query,
        hits: list[Hit],
        ranked: list[Candidate],
        judgement: stage.Judgement | None = None,
        listed: Sequence[Candidate] = (),
    ) -> Answer:
        """The answer quoted from the candidates ranked best first, the short answer first
        when the learned stage finds one; a question asking for a whole table or list
        (仕様を教えてください) is answered with its rows (``listed``)."""
        if listed:
            rows = " / ".join(showing.shown(c, hits) for c in listed)
            shown = clip(rows, self._max_chars - _MARKER) + "[1]"
            citation = Citation.of(1, hits[listed[0].hit_index])
            return Answer(query.text, shown, [citation], refused=False, hits=hits)
        if ranked[0].hit_index >= self._from_hits:  # the answer lies deeper: take it alone
            ranked = ranked[:1]
        else:
            ranked = [c for c in ranked if c.hit_index < self._from_hits]
        if showing.is_record(hits[ranked[0].hit_index].chunk):  # the row that answers, whole
            text, citation = showing.record(hits, ranked, self._max_chars)
            shown = clip(text, self._max_chars - _MARKER) + "[1]"
            return Answer(query.text, shown, [citation], refused=False, hits=hits)
        if not showing.is_record(hits[0].chunk):  # fields of lower-ranked rows read as prose
            ranked = [c for c in ranked if not showing.is_record(hits[c.hit_index].chunk)] or ranked
        lines = self._lines(ranked, hits, query)
        span, p = short_answers.best(self.model, query, hits, ranked, judgement)
        short = short_answers.opening(
            self.model, query.text, span, p, [t for _c, t in lines], self._max_chars
        )
        numbers: dict[int, int] = {}
        citations: list[Citation] = []
        pieces = [short] if short else []  # the asked figure alone, then where it is written
        for c, text in lines:
            if c.hit_index not in numbers:
                numbers[c.hit_index] = len(numbers) + 1
                citations.append(Citation.of(numbers[c.hit_index], hits[c.hit_index]))
            label = f"[{numbers[c.hit_index]}]"
            pieces.append(clip(text, self._max_chars - len(label)) + label)
        return Answer(
            question=query.text,
            text="\n".join(pieces),  # one quoted sentence a line
            citations=citations,
            refused=False,
            hits=hits,
            short=short,
            span=span or None,
            span_confidence=p if span else None,
        )

    def _lines(
        self, ranked: list[Candidate], hits: Sequence[Hit], query: Query
    ) -> list[tuple[Candidate, str]]:
        """The best sentence and, if it fits, the next best, the best first, as shown; a
        sentence that introduces cases (上限は次のとおりとする) brings each case in one line.
        A best sentence that only says again what the question says (梅雨の期間中ほとんど雨が
        降らない場合がある。 for …場合をなんという) comes with the sentence that says what it
        leaves out (:func:`shirabe.answering.showing.companion`): the one after it that goes
        on about it (このような梅雨のことを空梅雨という。), else the one before it that names
        its topic.

        Every line comes from the best sentence's passage, or from a passage of the same
        file and section: a line of another record (the next incident's measure, another
        product's price, another row of the table) is never added beside the answer."""
        chosen = [ranked[0]]
        used = min(len(ranked[0].text), self._max_chars - _MARKER) + _MARKER
        home = hits[ranked[0].hit_index].chunk
        rest = [
            c
            for c in ranked[1:]
            if c.hit_index == ranked[0].hit_index
            or showing.same_section(hits[c.hit_index].chunk, home)
        ]
        if tables.is_row(ranked[0].text):  # each row of a table is a record of its own
            rest = [
                c for c in rest if not tables.is_row(c.text) or showing.names_key(c, query.text)
            ]
        echo = echoes(query, ranked[0].text)
        if echo:
            told = showing.companion(ranked[0], ranked)
            rest = [*told, *(c for c in rest if not any(c is t for t in told))]
        for c in rest:
            if used + len(c.text) + _MARKER + 1 <= self._max_chars:  # 1: the line break
                chosen.append(c)
                used += len(c.text) + _MARKER + 1
                break
        # a case of a list (一般社員: …) comes with the sentence that introduces the list
        chosen = list(
            {id(c): c for c in (showing.introducing(c, ranked) or c for c in chosen)}.values()
        )
        lines: list[tuple[Candidate, str]] = []
        best = ranked[0]
        for c in chosen:
            cases = showing.cases(c, ranked)
            if not cases:
                lines.append((c, showing.shown(c, hits)))
                continue
            named = showing.named_case(cases, query.text)
            if named is not None:  # 課長 asked: its case first, then what the list says of all
                lines += [(named, showing.shown(named, hits)), (c, showing.shown(c, hits))]
                best = named
                continue
            listed = " / ".join(showing.shown(o, hits) for o in cases)
            if used + len(listed) + _MARKER + 1 <= self._max_chars:  # the sentence too
                lines.append((c, showing.shown(c, hits)))
                used += len(listed) + _MARKER + 1
            else:
                used += len(listed) - len(c.text)
            lines.append((c, listed))
        if echo:  # the sentence that says what it leaves out follows it
            lines.sort(key=lambda line: (line[0].hit_index, line[0].order))
        else:  # the answering line first, then the rest in document order
            lines.sort(key=lambda line: (line[0] is not best, line[0].hit_index, line[0].order))
        return lines

    def answering(
        self, query: Query, hits: Sequence[Hit], ranked: list[Candidate]
    ) -> tuple[list[Candidate], tuple[RefusalCode, str] | None]:
        """The candidates with the one that answers the question asked first, or why none
        does: the question names a code or word no passage found has (AED), no sentence holds the
        kind of fact asked (an amount for いくら, a weight for 何kg), or the passage does not
        mention the code or what the question asks about (AQ-250, 修理代).

        The answer is looked for in the sentences of the first ``from_hits`` passages, then,
        for a figure none of them gives for what is asked (the 加湿フィルター row of a parts
        table below the 集じんフィルター sentences) or a kind of fact none of them holds, in
        those of every hit.

        Why these checks stay beside the learned stage: each reads a signal its features do
        not carry, because the public training questions (Wikipedia) hardly ever ask it: a
        code or compound noun matched whole (加湿フィルター is not 集じんフィルター), a unit
        or counter against the figure's (dB, not kg), the row of a table that belongs to
        another key, a name written away from the figure. On JSQuAD valid (development;
        ``bench/rules.py``) they refuse, beyond the stage, 1.0% of answerable questions, 0.6%
        of those asked without their paragraph and 6.8% of made near misses; on the
        company-style sets, a stage without them let most near misses through
        (docs/benchmarks.md, "The learned answer stage"). A file's summary line goes last
        (:func:`showing.summaries_last`)."""
        asked = fit.answer_kind(query.text)
        ranked = showing.summaries_last(hits, ranked, asked)
        codes = [  # an alias of an official name (AQ300) is known by that name
            c
            for c in fit.codes(query.text)
            if not any(Synonyms.covers(a, c) for a in query.aliases)
        ]
        unknown = absent(codes, hits)
        if unknown:
            return ranked, (
                "unknown",
                quoted(query.text, unknown) + "についての記載が見つかりません",
            )
        fitting = self._holding(query, asked, codes, hits, ranked)
        if not (asked is not None and asked.kind == "number"):
            fitting = showing.of_records(codes, hits, fitting, query)
        if asked is not None and not fitting:
            return ranked, ("kind", f"{asked.name}（{asked.asked}）を示す記載が見つかりません")
        need = asking.needs(query.words(), asked) if asked is not None else None
        wanted = list(dict.fromkeys([*codes, *(need.terms if need else ())]))
        focus = need.focus if need else []
        conditions = need.conditions if need else []
        figure = asked if asked is not None and asked.kind in fit.FIGURES else None
        names = asking.names(query.words()) if figure else []
        texts = {(c.hit_index, c.order): c.text for c in ranked}
        missing: list[str] = []
        missing_apart = True  # whether ``missing`` came from a passage about another thing
        others: list[str] = []  # keys of rows holding the figure of something else
        apart: list[str] = []  # names the passage holds, but not next to the figure
        compounds = compound_nouns.compounds(query.words())
        whole = [  # 加湿フィルター: a sentence of 集じんフィルター is about another one
            (t, parts[-1]) for t, parts in compounds if len(parts) == 2 and parts[-1] in wanted
        ]
        passages: dict[int, Sequence[asking.Word]] = {}  # each passage's words, read once
        for c in fitting:
            if others and c.hit_index >= self._from_hits:
                break  # a table of such figures, without the row asked: not deeper passages
            chunk = hits[c.hit_index].chunk
            gaps, about_another = gaps_of(query, hits, c, wanted, need, whole, passages)
            other = figure and tables.other_row(query.text, figure, focus, chunk, c.text)
            away = [] if gaps or not names else mentions.missing_terms(names, near(hits, c, texts))
            away = away if len(away) == len(names) else []  # one name near it is enough
            if not gaps and not other and not away:
                return [c, *(o for o in ranked if o is not c)], None
            if not gaps and other:
                others += [other] if other not in others else []  # 住民票 asked of 戸籍謄本
            apart += [n for n in away if n not in apart]  # 14:00 for 本社, asked of 富山工場
            if gaps and (not missing or (len(gaps), about_another) < (len(missing), missing_apart)):
                # the reason of the passage that came closest: fewest gaps, and on a tie one
                # about the thing asked (the 加湿フィルター row lacks 交換) before one about
                # another kind of it (a sentence on replacing the 集じんフィルター)
                missing, missing_apart = gaps, about_another
        if figure and others:
            keys = "".join(f"「{k}」" for k in others[:3])
            return ranked, (
                "terms",
                f"表には{keys}の{figure.name}がありますが、質問のものについての記載は見つかりません",
            )
        if figure and apart:
            where = quoted(query.text, apart)
            shown = f"{where}の{figure.name}（{figure.asked}）"
            return ranked, ("terms", f"{shown}を示す記載が見つかりません")
        unmet = [c.clause for c in conditions if set(c.terms) & set(missing)]
        if asked is not None and unmet and set(missing) <= {t for c in conditions for t in c.terms}:
            where = "".join(f"「{c}」" for c in unmet)  # the figure is there, not its condition
            return ranked, (
                "terms",
                f"{where}の{asked.name}（{asked.asked}）を示す記載が見つかりません",
            )
        if asked is not None and missing and set(missing) <= set(codes):
            # the code is in the documents (else it is unknown), not next to such a figure
            shown = f"{quoted(query.text, missing)}の{asked.name}（{asked.asked}）"
            return ranked, ("terms", f"{shown}を示す記載が見つかりません")
        spelled = compound_nouns.whole_words(missing, compounds)  # 入タイマー, not 入
        return ranked, ("terms", quoted(query.text, spelled) + "についての記載が見つかりません")

    def _holding(
        self,
        query: Query,
        asked: fit.AnswerKind | None,
        codes: list[str],
        hits: Sequence[Hit],
        ranked: list[Candidate],
    ) -> list[Candidate]:
        """The candidates that hold a fact of the asked kind (a reason given for something the
        question names), those of the first ``from_hits`` passages first; for a name, a place
        or a way of doing, only those when any of them holds one (such facts are told too
        loosely for deeper passages to be tried)."""
        if asked is None:
            return [c for c in ranked if c.hit_index < self._from_hits]
        holds = [
            c
            for c in ranked
            if fit.has_kind(asked, c.text) and fit.fits_figure(query.text, asked, c.text)
        ]
        if asked.kind == "number":
            words = query.words()
            focus = asking.focus_terms(words, asked.asked) or asking.key_nouns(words)
            holds = [
                c
                for c in holds
                if not hits[c.hit_index].chunk.is_summary or showing.may_count(c.text, focus)
            ]
        if asked.kind == "reason":
            named = asking.key_nouns(query.words())
            holds = [
                c
                for c in holds
                if fit.reason_of(named, codes, c.text, line(hits, c))
                and not restates(query, c.text)
                and not fit.fault_asked(query.text, c.text)
            ]
        which = fit.which_place(query.text) if asked.kind == "place" else None
        if which:  # どこの業者: a sentence that names a 業者
            holds = [c for c in holds if not mentions.missing_terms([which], line(hits, c))]
        first = [c for c in holds if c.hit_index < self._from_hits]
        if asked.kind in showing.NAMES and first:
            first = showing.naming_first(query, showing.NAMES[asked.kind], first)
        if asked.kind == "time":
            first = showing.dated_first(query, first)
        if asked.kind == "person":  # 異動前の担当者 names no one for …担当していた人は誰
            holds = [c for c in holds if showing.names_someone(query, c.text)]
            kept = {id(c) for c in holds}
            first = [c for c in first if id(c) in kept]
        if first and asked.kind not in fit.FIGURES:
            return first  # names, places and ways are told too loosely to look deeper
        return [*first, *(c for c in holds if c.hit_index >= self._from_hits)]
