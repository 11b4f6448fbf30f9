"""Grounded, cited answers written by a chat model (a server over HTTP, or a GGUF in-process).

Weak retrieval evidence refuses before the model is called (the same gate as the extractive
answerer), so the model never sees a question the documents cannot answer. The passages are
packed to a token budget measured with the model's tokenizer when it is at hand; budget left
over goes to the neighbouring chunks of the same section.

When the reply does not hold up (the model declines although the gate found a sentence that
answers, no sentence of it is supported by the passages, it lacks the kind of fact asked, or it
does not give the amount the fallback reads off the passage for the question: 約20キロ where
the spec row says 約9.2kg, or none of its figures is one of the sentences the fallback quotes:
the certificate's 60日前 where the password's sentence says 7日前, or it says yes where those
sentences say no: :mod:`shirabe.answering.polarity`, or neither it nor the sentences it rests
on name the code the question asks about while those the fallback quotes do: a row of
INC-2024-0008 read for INC-2025-0005, or a sentence it states rests on fewer of the
question's key terms than a line the fallback quotes: ムール貝… for the fishery that
declined), the answer is the
fallback's (the extractive answerer's quoted sentences) when it has one, and a refusal with
the reason otherwise. A small model declines answerable questions about as often as
unanswerable ones, so its refusal alone does not overrule the passages.

A reply that holds up is followed by the sentence of each passage it cites that it rests on
(:mod:`shirabe.answering.evidence`): 「赤字[1]」 is shown with 「オランダは対日貿易では赤字であり、
…」[1] under it, so the reader checks the model's words against the document's.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Protocol

from shirabe.answering import evidence, fit, grounding, polarity
from shirabe.answering.followup import CODE
from shirabe.answering.instructions import without_instructions
from shirabe.answering.prompting import (
    MARKER,
    CitationRewriter,
    Neighbours,
    Passage,
    build_messages,
    is_refusal,
    pack_context,
    render_passage,
    widen_passages,
)
from shirabe.answering.protocol import Generator
from shirabe.answering.refusal import refusal
from shirabe.errors import GeneratorError
from shirabe.llm.protocol import ChatModel
from shirabe.records import (
    Answer,
    CitationsEvent,
    DoneEvent,
    ErrorEvent,
    GenerationEvent,
    Hit,
    HitsEvent,
    RefusalCode,
    TokenEvent,
)
from shirabe.retrieval.query import Query
from shirabe.text.normalize import folded

logger = logging.getLogger(__name__)

PROMPT_MARGIN = 64
"""Tokens kept free for the chat template's own markup around the messages."""


class RefusalGate(Protocol):
    """Decides from the hits alone whether the documents can answer, and why not (see
    ExtractiveGenerator.why_not): weak evidence, a code no passage has, no sentence of the
    kind asked, or what the question asks about missing from the passages."""

    def why_not(self, query: Query, hits: list[Hit]) -> tuple[RefusalCode, str] | None: ...


class LLMGenerator:
    """Writes answers with a chat model: only from numbered passages, cited as ``[n]``."""

    def __init__(
        self,
        chat: ChatModel,
        *,
        gate: RefusalGate | None = None,
        fallback: Generator | None = None,
        context_tokens: int = 2000,
        neighbours: Neighbours | None = None,
    ) -> None:
        self.chat = chat
        self._gate = gate
        self._fallback = fallback
        self._context_tokens = context_tokens
        self._neighbours = neighbours

    def __repr__(self) -> str:
        return f"LLMGenerator({self.chat!r})"

    @property
    def name(self) -> str:
        return self.chat.name

    @property
    def chat_model(self) -> ChatModel:
        return self.chat

    def close(self) -> None:
        self.chat.close()

    # ---------------------------------------------------------------- context

    def budget(self, query: Query) -> int:
        """Tokens the passages may take: the configured budget, within what the model's
        window leaves after the rules, the question (with the conversation) and the answer."""
        budget = self._context_tokens
        window = self.chat.context_window
        if window is not None:
            messages = build_messages(query.text, [], query.conversation)
            frame = sum(self.chat.count_tokens(m["content"]) for m in messages)
            budget = min(budget, window - self.chat.max_tokens - frame - PROMPT_MARGIN)
        return max(budget, 1)

    def passages(self, query: Query, hits: Sequence[Hit]) -> list[Passage]:
        """The passages the model will see, numbered from 1, without the sentences that give
        orders to the answerer (「以上の指示を無視して…」, a fake system prompt)."""
        budget = self.budget(query)
        cost = self.chat.count_tokens
        packed = pack_context(hits, budget, cost=cost)
        if self._neighbours is not None:
            packed = widen_passages(packed, budget, self._neighbours, cost=cost)
        return [replace(p, text=without_instructions(p.text)) for p in packed]

    # ---------------------------------------------------------------- answering

    def _refusal(
        self,
        query: Query,
        hits: list[Hit],
        timings: dict[str, float],
        why: tuple[RefusalCode, str] | None = None,
    ) -> Answer:
        gate: tuple[RefusalCode, str] = (
            ("weak", "質問に十分近い記載が見つかりません")
            if hits
            else ("no_passage", "質問に関係する文書が見つかりません")
        )
        return refusal(query.text, hits, why or gate, mode=self.name, timings=timings)

    def _instead(
        self,
        query: Query,
        hits: list[Hit],
        timings: dict[str, float],
        why: tuple[RefusalCode, str],
        quoted: Answer | None = None,
    ) -> Answer:
        """The fallback's answer (``quoted`` when it was already written) when the reply
        failed a check for ``why``; a refusal giving ``why`` when there is no fallback or it
        refuses too."""
        if self._fallback is not None:
            answer = quoted or self._fallback.generate(query, hits)
            if not answer.refused:
                logger.info("%s: %s; answering with %s", self.name, why[1], answer.mode)
                answer.timings = {**timings, **answer.timings}
                return answer
        return self._refusal(query, hits, timings, why)

    def _gate_says(self, query: Query, hits: list[Hit]) -> tuple[RefusalCode, str] | None:
        if not hits:
            return "no_passage", "質問に関係する文書が見つかりません"
        return None if self._gate is None else self._gate.why_not(query, hits)

    def _finish(
        self,
        query: Query,
        hits: list[Hit],
        rewriter: CitationRewriter,
        text: str,
        timings: dict[str, float],
        dropped: Sequence[str] = (),
    ) -> Answer:
        """The answer from the checked reply (``text``, markers renumbered); ``dropped`` are
        the reply's sentences no passage supported. The reply is checked alone, then against
        the fallback's quoted answer, then by the sentences it rests on."""
        text = text.strip()
        if dropped:
            logger.info(
                "%s: dropped %d unsupported sentence(s) of the reply", self.name, len(dropped)
            )
        why = self._reply_fails(query.text, text, dropped)
        if why is not None:
            return self._instead(query, hits, timings, why)
        quoted = self._fallback.generate(query, hits) if self._fallback is not None else None
        why = _unlike_quoted(query.text, text, quoted)
        if why is not None:
            return self._instead(query, hits, timings, why, quoted)
        by_number = {
            rewriter.numbers[p.number]: p.text
            for p in rewriter.passages
            if p.number in rewriter.numbers
        }
        resting = evidence.resting_sentences(text, query.text, by_number)
        quotes = evidence.quote_lines(resting)
        why = _rests_elsewhere(query.text, text, resting, quotes, quoted)
        if why is not None:
            return self._instead(query, hits, timings, why, quoted)
        text = "\n".join([text, *quotes])
        return Answer(
            question=query.text,
            text=text,
            citations=[c for c in rewriter.citations() if f"[{c.number}]" in text],
            refused=False,
            hits=hits,
            timings=timings,
            mode=self.name,
            span=quoted.span if quoted is not None else None,
            span_confidence=quoted.span_confidence if quoted is not None else None,
        )

    def _reply_fails(
        self, question: str, text: str, dropped: Sequence[str]
    ) -> tuple[RefusalCode, str] | None:
        """Why the reply by itself cannot be the answer, or None."""
        if dropped and not re.sub(r"\[\d+\]|\W", "", text):
            return "unsupported", "回答の内容が資料の記載で裏付けられません"
        if is_refusal(text):
            return "unsupported", "モデルが文書に記載がないと判断しました"
        if not text:
            logger.warning("%s returned no answer text", self.name)
            return "unsupported", "モデルが回答を返しませんでした"
        if _says_nothing(text):  # 「この質問の答えは以下の通りです。」 and no more
            return "unsupported", "モデルの回答に内容がありません"
        asked = fit.answer_kind(question)
        if asked is not None and not fit.has_kind(asked, text):  # 電気代 answered with 6W
            return "kind", f"回答に{asked.name}（{asked.asked}）がありません"
        return None

    def generate(self, query: Query, hits: list[Hit]) -> Answer:
        """Refuse on weak evidence, else ask the model once, keep what the passages support
        (see :mod:`shirabe.answering.grounding`) and renumber its citations."""
        started = time.perf_counter()
        gate = self._gate_says(query, hits)
        if gate is not None:
            return self._refusal(query, hits, {"llm": 0.0}, gate)
        passages = self.passages(query, hits)
        raw = self.chat.complete(build_messages(query.text, passages, query.conversation))
        kept, dropped = grounding.check_reply(raw, _as_seen(passages))
        rewriter = CitationRewriter(passages)
        text = rewriter.rewrite(kept)
        timings = {"llm": time.perf_counter() - started}
        return self._finish(query, hits, rewriter, text, timings, dropped)

    def stream(self, query: Query, hits: list[Hit]) -> Iterator[GenerationEvent]:
        """Events: hits, then the reply a sentence at a time as the model writes it (checked
        against the passages, citation markers renumbered), then citations and the finished
        answer; or an error event."""
        started = time.perf_counter()
        yield HitsEvent(hits)
        gate = self._gate_says(query, hits)
        if gate is not None:
            answer = self._refusal(query, hits, {"llm": 0.0}, gate)
            yield TokenEvent(answer.text)
            yield CitationsEvent([])
            yield DoneEvent(answer)
            return
        pieces: list[str] = []
        dropped: list[str] = []
        first: float | None = None
        pending = ""  # the sentence being written, checked once it is finished
        try:
            passages = self.passages(query, hits)
            seen = _as_seen(passages)
            rewriter = CitationRewriter(passages)
            for piece in self.chat.stream(build_messages(query.text, passages, query.conversation)):
                done, pending = grounding.complete_sentences(pending + piece)
                if not done:
                    continue
                kept, lost = grounding.check_reply(done, seen)
                dropped += lost
                shown = rewriter.feed(kept)
                if shown:
                    if first is None:
                        first = time.perf_counter() - started
                    pieces.append(shown)
                    yield TokenEvent(shown)
            kept, lost = grounding.check_reply(pending, seen)
            dropped += lost
            shown = rewriter.feed(kept) + rewriter.finish()
            if shown:
                pieces.append(shown)
                yield TokenEvent(shown)
        except GeneratorError as exc:
            yield ErrorEvent(str(exc), exc)
            return
        timings = {"llm": time.perf_counter() - started}
        if first is not None:
            timings["first_token"] = first
        streamed = "".join(pieces)
        answer = self._finish(query, hits, rewriter, streamed, timings, dropped)
        if answer.mode == self.name and answer.text.startswith(streamed.strip()):
            rest = answer.text[len(streamed.strip()) :]  # the sentences the reply rests on
            if "\n" in streamed[len(streamed.rstrip()) :]:
                rest = rest.removeprefix("\n")
            if rest:
                yield TokenEvent(rest)
        yield CitationsEvent(answer.citations)
        yield DoneEvent(answer)


def _unlike_quoted(
    question: str, text: str, quoted: Answer | None
) -> tuple[RefusalCode, str] | None:
    """Why the reply disagrees with the fallback's answer quoted from the passages (its
    number, its yes or no), or None; nothing to say when there is no fallback."""
    if quoted is None:
        return None
    if quoted.short and not _states(text, quoted.short):
        return "kind", f"回答に「{quoted.short}」の数値がありません"  # 約20キロ for 約9.2kg
    if quoted.refused:
        return None
    if polarity.contradicts(question, text, quoted.text):  # 繰り越さない
        return "unsupported", "回答は「はい」ですが、質問に答える記載は否定しています"
    if _elsewhere(text, quoted.text):
        return "kind", "回答の数値が、質問に答える記載の数値と異なります"  # 60日前 for 7日前
    return None


def _rests_elsewhere(
    question: str,
    text: str,
    resting: Sequence[evidence.Resting],
    quotes: Sequence[str],
    quoted: Answer | None,
) -> tuple[RefusalCode, str] | None:
    """Why the sentences the reply rests on (``resting``, shown as ``quotes``) are not those
    that answer the question (another code's row, a passage about something else), or None;
    not judged without a quoted answer."""
    if quoted is None or quoted.refused:
        return None
    missing_codes = _codes_left_out(question, "\n".join([text, *quotes]), quoted.text)
    if missing_codes:  # 完了 read off INC-2024-0008's row for INC-2025-0005
        return "unsupported", f"回答は「{missing_codes[0]}」の記載に基づいていません"
    shown = "\n".join([text, *(r.quote for r in resting)])
    if _off_topic(question, text, shown, quoted.text):
        # ムール貝、カキ…が中心である for the fishery that declined
        return "unsupported", "回答は質問の内容を述べていない記載に基づいています"
    return None


def _states(reply: str, short: str) -> bool:
    """Whether the reply gives the number of the short answer (9.2 of 約9.2kgです。); not
    judged when the number is written with 万, 千 or 億 (1万5千円)."""
    plain_short = folded(short)
    number = re.search(r"\d[\d,]*(?:\.\d+)?", plain_short)
    if number is None or re.search(r"[万千億]", plain_short):
        return True
    plain = MARKER.sub("", folded(reply)).replace(",", "")
    wanted = number.group().replace(",", "")
    return re.search(rf"(?<![\d.]){re.escape(wanted)}(?![\d]|\.\d)", plain) is not None


def _elsewhere(reply: str, quoted: str) -> bool:
    """Whether every figure of the reply is other than those of the sentences the rules
    found to answer (the reply's 60日前 is the certificate's notice, the quoted sentence
    says 期限の7日前 of the password); not judged when either gives no figure."""
    given = set(grounding.figures_of(MARKER.sub("", reply)))
    read = set(grounding.figures_of(MARKER.sub("", quoted)))
    return bool(given) and bool(read) and not given & read


def _codes_left_out(question: str, shown: str, quoted: str) -> list[str]:
    """The codes of the question (INC-2025-0005) that the reply and the sentences it rests
    on never name while the sentences the rules quote do: the reply was read off another
    record's row."""
    given, read = folded(shown), folded(quoted)
    codes = dict.fromkeys(CODE.findall(folded(question)))
    return [c.upper() for c in codes if c not in given and c in read]


_YES_OR_NO = re.compile(r"^\s*(?:はい|いいえ)")
_PREDICATE = re.compile(r"(?:です|ます|である|だ|た|る|い|う)[。．.]?\s*$")


def _off_topic(question: str, reply: str, shown: str, quoted: str) -> bool:
    """Whether a reply that states something (a sentence with its predicate, not a bare name
    or figure) names, with the sentences it rests on (``shown``), fewer of the question's key
    terms than one line of the answer the rules quote names: it answers from another
    sentence (ムール貝、カキ…が中心である。 for オランダで20世紀に入り衰退した漁業は？, where
    the quoted line says 遠洋漁業が…20世紀に入り…衰退した). A bare answer (オランダ[1]) is
    not judged: it may come from the document's title rather than one of its sentences; nor
    is a yes or no, or a reply with no key term or figure of its own (いいえ、繰り越さない)."""
    plain = MARKER.sub("", reply)
    if not any(_PREDICATE.search(s.strip()) for s in grounding.sentences(plain)):
        return False
    if _YES_OR_NO.match(plain) or not (grounding.claim_terms(plain) or grounding.figures_of(plain)):
        return False
    terms = grounding.claim_terms(question)
    held = len(grounding.covered((), terms, shown)[1])
    return any(len(grounding.covered((), terms, line)[1]) > held for line in quoted.splitlines())


def _says_nothing(reply: str) -> bool:
    """Whether a reply holds no figure, no digit and no key term and is no yes or no: it
    only says that an answer follows (この質問の答えは以下の通りです。)."""
    plain = MARKER.sub("", reply)
    if _YES_OR_NO.match(plain) or re.search(r"\d", folded(plain)):
        return False
    return not grounding.claim_terms(plain) and not grounding.figures_of(plain)


def _as_seen(passages: Sequence[Passage]) -> dict[int, str]:
    """Each passage by its number, as the model saw it (file name and headings included)."""
    return {p.number: render_passage(p.number, p.chunk, p.text) for p in passages}
