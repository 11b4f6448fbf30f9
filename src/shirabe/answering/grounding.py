"""What a chat model's reply may keep: sentences the passages support, cited by them.

A reply is checked a sentence at a time, with the passages numbered as the model saw them
(file name and heading included), before its citation markers are renumbered for the user:

- A sentence speaking of the prompt's markup (「<passage id="1">の第1行に…」) is dropped, and
  so is a question (a small model may repeat the question asked instead of answering it).
- A sentence's **claim** is its figures with units (9.2kg, 14,000円) and its key terms: runs
  of two or more kanji or katakana and ASCII codes (宿泊費, ブラウザ, AQ-300), less words
  that only say where an answer comes from (記載, 文書, 資料).
- The passages a sentence cites **support** it when together they hold every figure and
  cover at least half of its key terms (as written, or a compound by all its character
  pairs, as the refusal gate matches question terms). A cited passage that adds nothing to
  the claim loses its marker.
- A sentence citing nothing, or citing passages that do not support it, is cited instead by
  the fewest passages that do (best first); when no passages do, it is dropped.
- A sentence with no claim (「以下のとおりです。」) and the refusal sentence are kept as they
  are.

So every ``[n]`` a user sees points to a passage that holds what its sentence says, and a
figure no passage holds (a computed 電気代, an invented weight) never reaches the user.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from shirabe.answering.mentions import missing_terms
from shirabe.answering.prompting import MARKER, is_refusal, marker_numbers
from shirabe.text.normalize import folded

SUPPORT_SHARE: Final = 1 / 2
"""The share of a sentence's key terms its citing passages must cover."""

_MARKUP = re.compile(
    r"</?\s*(?:passage|document|context|system|user|assistant)\b[^>]*>", re.IGNORECASE
)
_FIGURE = re.compile(
    r"\d[\d,]*(?:\.\d+)?\s*(?:[万億千]\s*)*"
    r"(?:円|ドル|kg|g|cm|mm|km|m|ml|l|w|kw|%|℃|°c|度|時間|分|秒|日|週間|か月|ヶ月|年|人|名|件|台|回|個|枚|畳|歳|倍)"
    r"(?![a-z])",
    re.IGNORECASE,
)
_TERM = re.compile(
    r"[\u4e00-\u9fff\u3400-\u4dbf々〆ヶ]{2,}|[\u30a1-\u30fa\u30fc]{2,}|"
    r"(?<![0-9a-z])[a-z][0-9a-z]*(?:[-_./][0-9a-z]+)*"
)
_SOURCE_WORDS: Final = frozenset(
    {
        "記載",
        "文書",
        "資料",
        "回答",
        "質問",
        "情報",
        "内容",
        "以下",
        "以上",
        "上記",
        "下記",
        "該当",
        "参照",
        "詳細",
        "ドキュメント",
        "パッセージ",
        "根拠",
        "出典",
        "引用",
        "場合",
    }
)
_END = re.compile(r"[。！？!?\n](?:\s*" + MARKER.pattern + r")*")
_POSSIBLE_MARKER = re.compile(r"\s*(?:[\[［【][\d,，、\s]*(?:[\]］】]\s*)?)*\Z")
_QUESTION = re.compile(r"[?？]\s*$")
_CLOSING = re.compile(r"[。！？!?]*\s*$")


def figures_of(text: str) -> list[str]:
    """The figures with units of ``text``, NFKC-normalised, without spaces or commas."""
    return [re.sub(r"[\s,]", "", m.group()) for m in _FIGURE.finditer(folded(text))]


def claim_terms(sentence: str) -> list[str]:
    """The key terms of a sentence (see the module notes), lower-cased, in order."""
    text = MARKER.sub(" ", folded(sentence))
    text = _FIGURE.sub(" ", text)
    found = [t for t in _TERM.findall(text) if t not in _SOURCE_WORDS and len(t) >= 2]
    return list(dict.fromkeys(found))


def complete_sentences(text: str) -> tuple[str, str]:
    """``text`` cut after its last finished sentence: what can be checked now, and the rest.
    A sentence is finished once something other than a citation marker follows its end, so
    markers written after the full stop (「…です。[1]」) stay with their sentence."""
    cut = 0
    for match in _END.finditer(text):
        rest = text[match.end() :]
        if rest and not _POSSIBLE_MARKER.match(rest):
            cut = match.end()
    return text[:cut], text[cut:]


def sentences(text: str) -> list[str]:
    """``text`` split into sentences, each with the markers written after its end; joined
    they give ``text`` back."""
    parts: list[str] = []
    start = 0
    for match in _END.finditer(text):
        parts.append(text[start : match.end()])
        start = match.end()
    if start < len(text):
        parts.append(text[start:])
    return parts


def covered(figures: Sequence[str], terms: Sequence[str], text: str) -> tuple[set[str], set[str]]:
    """Which of the figures (as :func:`figures_of` gives them) and key terms ``text`` holds:
    a figure written in it (spaces and commas aside), a term as :mod:`mentions` finds it."""
    flat = re.sub(r"[\s,]", "", folded(text))
    missing = set(missing_terms(terms, text))
    return {f for f in figures if f in flat}, {t for t in terms if t not in missing}


@dataclass(frozen=True, slots=True)
class _Claim:
    figures: tuple[str, ...]
    terms: tuple[str, ...]

    def covered(self, text: str) -> tuple[set[str], set[str]]:
        """The figures and the terms of the claim that ``text`` holds."""
        return covered(self.figures, self.terms, text)

    def held_by(self, texts: Sequence[str]) -> bool:
        figures, terms = self.covered("\n".join(texts))
        enough = not self.terms or len(terms) >= SUPPORT_SHARE * len(self.terms)
        return len(figures) == len(self.figures) and enough


def _supporting(claim: _Claim, cited: Sequence[int], passages: Mapping[int, str]) -> list[int]:
    """The cited passages that together support the claim, less those adding nothing; else
    the fewest passages that do (greedily, most of the claim first); else []."""
    if cited and claim.held_by([passages[n] for n in cited]):
        return [n for n in cited if any(claim.covered(passages[n]))]
    chosen: list[int] = []
    figures_left, terms_left = set(claim.figures), set(claim.terms)
    while not claim.held_by([passages[n] for n in chosen]):
        gains = {
            n: (len(f & figures_left) + len(t & terms_left), -n)
            for n in passages
            if n not in chosen
            for f, t in [claim.covered(passages[n])]
        }
        best = max(gains, key=lambda n: gains[n], default=None)
        if best is None or gains[best][0] == 0:
            return []
        chosen.append(best)
        figures, terms = claim.covered(passages[best])
        figures_left -= figures
        terms_left -= terms
    return chosen


def _cite(sentence: str, numbers: Sequence[int]) -> str:
    """``sentence`` with its markers replaced by ``numbers``, before its closing stop."""
    body = MARKER.sub("", sentence)
    newline = "\n" if body.endswith("\n") else ""
    body = body.rstrip("\n")
    stop = _CLOSING.search(body)
    head, tail = (body[: stop.start()], body[stop.start() :]) if stop else (body, "")
    marks = "".join(f"[{n}]" for n in numbers)
    return f"{head.rstrip()}{marks}{tail.strip()}{newline}"


def check_reply(reply: str, passages: Mapping[int, str]) -> tuple[str, list[str]]:
    """A model's reply (markers numbered as in the prompt) with each sentence cited by the
    passages that support it, and the sentences dropped that no passage supports, that
    speak of the prompt's markup or that ask a question; the kept text and the dropped
    sentences."""
    kept: list[str] = []
    dropped: list[str] = []
    for sentence in sentences(reply):
        if not sentence.strip() or is_refusal(sentence):
            kept.append(sentence)
            continue
        if _MARKUP.search(sentence) or _QUESTION.search(MARKER.sub("", sentence)):
            dropped.append(sentence.strip())
            continue
        claim = _Claim(tuple(figures_of(MARKER.sub("", sentence))), tuple(claim_terms(sentence)))
        if not claim.figures and not claim.terms:
            kept.append(sentence)
            continue
        cited = [
            n
            for m in MARKER.finditer(sentence)
            for n in marker_numbers(m.group(1))
            if n in passages
        ]
        support = _supporting(claim, list(dict.fromkeys(cited)), passages)
        if not support:
            dropped.append(sentence.strip())
        elif support == list(dict.fromkeys(cited)):
            kept.append(sentence)
        else:
            kept.append(_cite(sentence, support))
    return "".join(kept), dropped
