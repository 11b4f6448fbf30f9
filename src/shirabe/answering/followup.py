"""Follow-up questions made standalone by rules, before retrieval.

「それは何時に復旧しましたか？」 after 「INC-2024-0004はどんな障害ですか？」 is searched as
「INC-2024-0004は何時に復旧しましたか？」. The rules, in order:

1. A question that needs nothing from before is kept as it is: it names its own subject and
   has no demonstrative (それ, その, こちら, 同じ …) and is not a fragment.
2. A fragment naming another code (「INC-2024-0006のほうは？」「では、AQ-250は？」) asks the
   previous question again about that code.
3. A demonstrative (それ / これ / あれ / こちら / その / この / 同じ) is replaced by the
   previous question's subject: its codes, else the words before its first は.
4. A fragment (「重さは？」「部長の場合は？」) or a question with no subject of its own
   (「何時に復旧しましたか？」) is asked with the previous subject in front
   (「AQ-300の重さは？」), or, when it names a condition (〜の場合, 〜なら, 〜では), as the
   previous question under that condition.

The previous question is the standalone form of the turn before, so a third turn carries the
subject of the first.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

_CODE = re.compile(r"(?<![0-9A-Za-z])[A-Za-z][A-Za-z0-9]*(?:[-_./][A-Za-z0-9]+)+")
_OPENERS = re.compile(r"^(?:では|じゃあ|それでは|それじゃ|なら|あと|また|ちなみに|で)[、,\s]*")
_DEMONSTRATIVE = re.compile(
    r"(?:それ|これ|あれ|こちら|そちら|そこ|ここ)(?=[はがをにでのもと、])|"
    r"(?:その|この|あの|同じ|上記の|前述の)"
)
_CONDITION = re.compile(r"(.+?(?:の場合|のとき|の時|なら|では|だと))(?:は|って)?[?？。]?$")
_FRAGMENT = re.compile(r"^(.{1,20}?)(?:のほう|の方)?(?:は|って|も)[?？。]?$")
_TOPIC = re.compile(r"[はがをも]|について|って")
_ENDING = re.compile(r"[?？。]+$")


@dataclass(frozen=True, slots=True)
class Turn:
    """One earlier exchange of a conversation."""

    question: str
    answer: str = ""


def _plain(text: str) -> str:
    return unicodedata.normalize("NFKC", text).strip()


def carried(question: str, history: Sequence[Turn]) -> str | None:
    """The question with the conversation's subject in front (「AQ-300について、発売日は
    いつですか？」), for a question that found nothing on its own; None without a subject."""
    if not history:
        return None
    previous = _standalone(history[-1].question, history[:-1])
    about = subject(previous)
    answered = list(dict.fromkeys(_CODE.findall(_plain(history[-1].answer))))
    if not _CODE.search(about) and len(answered) == 1:
        about = answered[0]
    if not about or about in question:
        return None
    return f"{about}について、{_plain(question)}"


def subject(question: str) -> str:
    """What a question is about: its codes (INC-2024-0004), else the words before its first
    は / が / について (有給休暇の申請方法は → 有給休暇の申請方法)."""
    text = _OPENERS.sub("", _plain(question))
    codes = _CODE.findall(text)
    if codes:
        return "・".join(dict.fromkeys(codes))
    found = re.match(r"^(.+?)(?:について|は|が|って)", text)
    return found.group(1) if found else ""


def standalone(question: str, history: Sequence[Turn]) -> str:
    """The question as it would be asked with no conversation before it (``question`` itself
    when it needs nothing from before)."""
    made = _standalone(question, history)
    return question if made == _plain(question) else made


def _standalone(question: str, history: Sequence[Turn]) -> str:
    text = _plain(question)
    if not history:
        return text
    previous = _plain(history[-1].question)
    if len(history) > 1:
        previous = _standalone(previous, history[:-1])
    about = subject(previous)
    if not _CODE.search(previous):  # the code the previous answer was about, if just one
        answered = list(dict.fromkeys(_CODE.findall(_plain(history[-1].answer))))
        if len(answered) == 1:
            about = answered[0]
    body = _OPENERS.sub("", text)
    fragment = _FRAGMENT.match(body)
    codes = _CODE.findall(body)
    old_codes = _CODE.findall(previous)
    if fragment and codes and old_codes and len(body) <= 30:
        swapped = previous
        for old, new in zip(old_codes, codes, strict=False):
            swapped = swapped.replace(old, new)
        return swapped
    if _DEMONSTRATIVE.search(body) and about:
        return _DEMONSTRATIVE.sub(lambda m: _replacement(m.group(), about), body, count=1)
    if _needs_context(body) and previous:
        condition = _CONDITION.match(body)
        if condition:
            return f"{condition.group(1)}、{previous}"
        if about:
            joint = "の" if "は" in body else "は"  # AQ-300の重さは？ / INC-…は何時に…
            return f"{about}{joint}{_ENDING.sub('', body)}{_question_end(body)}"
        return f"{previous} {body}"
    return text


def _replacement(word: str, about: str) -> str:
    if word in {"その", "この", "あの", "同じ", "上記の", "前述の"}:
        return f"{about}の"
    return about


def _needs_context(body: str) -> bool:
    """A fragment (重さは？, 部長の場合は？) or a question without a subject of its own
    (何時に復旧しましたか？: no は / が / を, no code)."""
    return bool(_FRAGMENT.match(body)) or not (_TOPIC.search(body) or _CODE.search(body))


def _question_end(body: str) -> str:
    return "" if _ENDING.search(body) is None else "？"
