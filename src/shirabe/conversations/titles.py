"""A conversation's title, made from its first question so that chats on one subject can be
told apart: the chat model's short title when there is one, else the question's key terms
(nouns joined into the compounds they form, IDs such as ``INC-2024-0004`` and product names
such as ``AQ-300`` kept whole). Only the question is read, never an answer: a title stays
shown when an answer is withheld from its asker.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence

from shirabe.errors import GeneratorError
from shirabe.llm.protocol import ChatModel
from shirabe.records import TITLE_CHARS
from shirabe.text.normalize import normalize
from shirabe.tokenizers.protocol import Tokenizer

log = logging.getLogger(__name__)

Words = Callable[[str], list[tuple[str, str, tuple[str, ...]]]]
"""A tokenizer's words of a text: surface, normalised form and part of speech."""

MAX_TERMS = 4
"""Key terms a title names at most."""

_ASCII_RUN = re.compile(r"(?<![0-9A-Za-z])[0-9A-Za-z]+(?:[._\-/:+][0-9A-Za-z]+)*")
_KEPT = frozenset({"名詞", "接頭辞", "接尾辞"})
_LEFT_OUT = frozenset(
    {"いくら", "いつ", "どこ", "どれ", "こと", "もの", "ため", "よう", "とき", "ところ"}
    | {"方", "ほう", "際", "件", "場合"}
)
"""Nouns that ask or point rather than name a subject."""
_QUOTES = "「」『』\"'`*#＃【】[]()（）"
_LABEL = re.compile(r"^(?:題名|タイトル|title)\s*[:：]\s*", re.IGNORECASE)

TITLE_PROMPT = (
    "あなたは会話に題名を付けます。次の質問の主題を表す短い名詞句（20文字以内）を一つだけ、"
    "説明や記号を付けずに返してください。製品名や ID（AQ-300、INC-2024-0004 など）は"
    "そのまま含めてください。"
)


def title_of(text: str) -> str:
    """``text`` on one line, cut to :data:`TITLE_CHARS` characters."""
    line = " ".join(text.split())
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1] + "…"


def key_terms(question: str, words: Words) -> list[str]:
    """The question's key terms in order, each once: runs of nouns (with their prefixes and
    suffixes) and ASCII codes that touch each other, joined; what is asked (何日, いくら) left
    out."""
    text = normalize(question)
    spans = [(m.start(), m.end(), True) for m in _ASCII_RUN.finditer(text)]
    codes = list(spans)
    offset = 0
    for surface, _, pos in words(text):
        start = text.find(surface, offset) if surface else -1
        if start < 0:
            continue
        end = offset = start + len(surface)
        if not any(a < end and start < b for a, b, _ in codes):
            spans.append((start, end, bool(pos) and pos[0] in _KEPT))
    spans.sort()
    terms: list[str] = []
    term_start = term_end = -1
    for start, end, content in [*spans, (len(text) + 1, len(text) + 1, False)]:
        if content and start == term_end:
            term_end = end
            continue
        if term_start >= 0:
            terms.append(text[term_start:term_end])
        term_start, term_end = (start, end) if content else (-1, -1)
    asked = (t.partition("何")[0] for t in terms)  # 毎月何日: what is asked is not the subject
    return list(dict.fromkeys(t for t in asked if t and t not in _LEFT_OUT))


def terms_title(question: str, words: Words) -> str:
    """The question's first key terms, or the question itself when it has none."""
    terms = key_terms(question, words)[:MAX_TERMS]
    return title_of(" ".join(terms) if terms else question)


def clean_title(reply: str) -> str:
    """A chat model's reply as a title: its first line, without a ``題名:`` label or the
    quotes and marks around it; empty when nothing is left."""
    line = next((part.strip() for part in reply.splitlines() if part.strip()), "")
    line = _LABEL.sub("", normalize(line)).strip(_QUOTES + " 　。.")
    return title_of(line)


class Titles:
    """Titles for new conversations: the chat model's, when one is given and answers, else
    the question's key terms."""

    def __init__(
        self,
        tokenizer: Callable[[], Tokenizer],
        chat_model: Callable[[], ChatModel | None] = lambda: None,
    ) -> None:
        self._tokenizer = tokenizer
        self._chat_model = chat_model

    def __call__(self, question: str) -> str:
        model = self._chat_model()
        if model is not None:
            named = self._asked(model, question)
            if named:
                return named
        return terms_title(question, self._tokenizer().words)

    @staticmethod
    def _asked(model: ChatModel, question: str) -> str:
        messages: Sequence[dict[str, str]] = [
            {"role": "system", "content": TITLE_PROMPT},
            {"role": "user", "content": question},
        ]
        try:
            return clean_title(model.complete(messages, max_tokens=48))
        except GeneratorError as exc:
            log.warning("the chat model gave no title (%s); the question's terms name it", exc)
            return ""
