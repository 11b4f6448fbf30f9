"""Example questions for an empty chat, drawn from what the asker may read: the questions of an
eval file whose expected document they can read, else questions made from the headings of
their documents (「休暇規程の年次有給休暇について教えてください」).

Pure functions over plain values; the server gathers the documents and checks who may read
them.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import zip_longest
from typing import Any, TypeVar

from shirabe.evaluation.cases import Case
from shirabe.text.identifiers import find_identifiers

T = TypeVar("T")
_NONE: Any = object()
"""What :func:`in_turns` pads the shorter categories with."""
_NUMBERING = re.compile(
    r"^(?:第[0-9一二三四五六七八九十百]+[章節条項部編款]|\d+(?:\.\d+)*(?:[.)]|\s)|\(\d+\)|[①-⑳])\s*"
)
"""Numbering in front of a heading, after NFKC: 第2章, 第3条, 1., 1.2, (3), ①."""
_WORD = re.compile(r"[぀-ヿ一-鿿A-Za-z]")
_VERB_END = re.compile(r"[うくぐすずつづぬふぶぷむゆるい]$")
"""The endings of verbs and adjectives (確かめる, つなぐ, できない); nouns end otherwise
(お手入れ, 申し込み, お問い合わせ)."""
_GENERIC = frozenset(
    {
        "総則", "雑則", "附則", "その他", "概要", "はじめに", "目次", "目的", "改訂履歴", "付録",
        "定義", "用語", "用語の定義", "趣旨", "適用", "適用範囲", "施行日", "補則",
    }
)  # fmt: skip
"""Headings every rule book has: asking about them shows nothing of the documents."""
SHORT_TITLE = 12
"""A document title up to this long is put before the heading (「休暇規程の…」); a longer one
is named by the code it holds (「AQ-300の…」)."""
LONG_TOPIC = 32
"""Longer headings are sentences, not topics."""


@dataclass(frozen=True, slots=True)
class Headings:
    """One readable document: its title, category and heading paths in document order."""

    title: str
    category: str
    paths: Sequence[Sequence[str]]


def title_of(paths: Sequence[Sequence[str]], name: str) -> str:
    """A document's title: the heading above all its others, else its file ``name`` (first
    headings that differ, such as 第1章 and 第2章, are chapters, not a title)."""
    titled = {path[0] for path in paths if len(path) >= 2}
    return titled.pop() if len(titled) == 1 else name


def topic(heading: str) -> str | None:
    """A heading without its numbering (第2章, 1., (3)), or None when nothing worth asking
    about is left (a bare number, a generic heading such as 総則)."""
    text = unicodedata.normalize("NFKC", heading).strip()
    while (numbered := _NUMBERING.match(text)) and numbered.end() < len(text):
        text = text[numbered.end() :].strip()  # 第1章第2節 休日 → 休日
    wrapped = re.fullmatch(r"\(([^()]+)\)", text)
    text = wrapped.group(1).strip() if wrapped else _bare(text)  # 第3条（年次有給休暇）
    text = re.sub(r"(?:について|とは)$", "", text).strip()
    if len(text) < 2 or len(text) > LONG_TOPIC or text in _GENERIC:
        return None
    if not _WORD.search(text) or _VERB_END.search(text):
        return None  # no words, or a verb phrase (箱の中身を確かめる)
    return text


def _bare(text: str) -> str:
    """``text`` without a closing parenthesis (障害記録（2024年） → 障害記録)."""
    return re.sub(r"[（(][^）)]*[）)]$", "", text).strip()


def subject_of(title: str) -> str | None:
    """What a document is about, short enough to name in a question: its title when short
    (休暇規程, 障害記録 of 障害記録（2024年）), else the product or model code the title names
    (AQ-300 of ミナモ AQ-300 かんたんガイド); None when it has neither."""
    bare = _bare(title)
    if bare and len(bare) <= SHORT_TITLE:
        return bare
    codes = find_identifiers(title)
    return codes[0] if codes else None


def question_for(document: Headings) -> str | None:
    """A question about the first heading below the title worth asking about, naming what it
    is about (「AQ-300のお手入れについて…」, not 「お手入れについて…」); None for a document
    whose subject cannot be named briefly, or with nothing worth asking about."""
    name = subject_of(document.title)
    if name is None:
        return None
    for path in document.paths:
        if not path or (len(path) < 2 and len(document.paths) > 1):
            continue
        subject = topic(path[-1])
        if subject is None or subject == document.title:
            continue
        if name in subject:  # the heading names it itself
            return f"{subject}について教えてください"
        return f"{name}の{subject}について教えてください"
    return None


def in_turns(items: Iterable[T], category: Callable[[T], str]) -> Iterator[T]:
    """``items`` with their categories (in name order) taking turns, each category's items in
    their order, so that one large folder does not fill the list."""
    groups: dict[str, list[T]] = {}
    for item in items:
        groups.setdefault(category(item), []).append(item)
    for turn in zip_longest(*(groups[name] for name in sorted(groups)), fillvalue=_NONE):
        yield from (item for item in turn if item is not _NONE)


def from_headings(documents: Iterable[Headings], n: int) -> list[str]:
    """Up to ``n`` questions about ``documents``, in their order (read lazily: documents
    after the ``n``-th question are never asked for)."""
    out: list[str] = []
    for document in documents:
        question = question_for(document)
        if question is not None and question not in out:
            out.append(question)
            if len(out) >= n:
                break
    return out


def from_cases(cases: Sequence[Case], readable: Callable[[str], bool], n: int) -> list[str]:
    """Up to ``n`` answerable first-turn questions of an eval file whose expected document
    the asker may read (a case naming no document is never shown: its question could tell of
    documents they may not read)."""
    out: list[str] = []
    for case in cases:
        if case.expect_refusal or case.dialogue is not None or case.expect_source is None:
            continue
        if readable(case.expect_source.file) and case.question not in out:
            out.append(case.question)
        if len(out) >= n:
            break
    return out
