"""Whether a passage names what a question is about: the question's terms found as written,
as all the character pairs of a compound, or as a field named by their stem; and the words
documents write for what a question names (重さ → 質量). Pure functions over text."""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import pairwise
from typing import Final

from shirabe.text.normalize import folded


def is_cjk(ch: str) -> bool:
    return "\u3040" <= ch <= "\u30ff" or "\u3400" <= ch <= "\u9fff" or ch in "々〆ヶ"


def kanji_of(word: str) -> str:
    """The kanji of a word (取消 for 取り消す and 取消し, 払戻 for 払い戻し)."""
    return "".join(ch for ch in word if "\u3400" <= ch <= "\u9fff" or ch == "々")


def char_pairs(text: str) -> set[str]:
    """Adjacent pairs of Japanese characters (kana included)."""
    return {a + b for a, b in pairwise(text) if is_cjk(a) and is_cjk(b)}


def covered(term: str, context: str, context_pairs: set[str]) -> bool:
    """A term is covered by the context text as written, or, when it is a compound of two
    or more CJK characters, by all its character pairs (有給 in 有給休暇; 修理代 is not covered
    by 修理 alone), or by a field or column named by its stem (``担当:`` for 担当者,
    ``内線:`` for 内線番号)."""
    if term in context:
        return True
    stem = re.sub(r"(?<=..)(?:者|員|番号)$", "", term)
    if stem != term:
        label = rf"(?:^|\n|\|)\s*{re.escape(stem)}\s*[:：|]"
        if re.search(label, context):
            return True
    if len(term) >= 2 and all(is_cjk(ch) for ch in term):
        pairs = char_pairs(term)
        return bool(pairs) and pairs <= context_pairs
    return False


def missing_terms(terms: Sequence[str], context: str) -> list[str]:
    """The terms that ``context`` (a passage with its headings and file name) does not cover."""
    plain = folded(context)
    if any(ch.isdigit() for t in terms for ch in t):  # 1447m and 1,447m
        plain += "\n" + _GROUPED.sub("", plain)
    pairs = char_pairs(plain)
    return [t for t in terms if not covered(_GROUPED.sub("", t), plain, pairs)]


def abbreviates(short: str, long: str) -> bool:
    """Whether ``short`` is written as a shortening of ``long``: shorter, from the same first
    character, with its characters in the same order (国保 of 国民健康保険, 年休 of 年次有給休暇;
    not 電気代 of 電気料金). Whether they mean the same is the dictionary's to say."""
    if not short or len(short) >= len(long) or short[0] != long[0]:
        return False
    rest = iter(long[1:])
    return all(ch in rest for ch in short[1:])


_GROUPED: Final = re.compile(r"(?<=\d),(?=\d{3})")
"""The thousands separator of a number (1,447)."""


SPELLINGS: Final[dict[str, tuple[str, ...]]] = {
    "重さ": ("質量", "重量"),
    "重量": ("質量",),
    "大きさ": ("寸法", "外形寸法", "サイズ"),
    "サイズ": ("寸法", "外形寸法"),
    "高さ": ("寸法", "外形寸法"),
    "幅": ("寸法", "外形寸法"),
    "奥行き": ("寸法", "外形寸法"),
    "値段": ("価格", "希望小売価格"),
    "価格": ("希望小売価格", "税込"),
    "料金": ("料金", "費用", "金額"),
    "費用": ("費用", "料金", "金額"),
    "容量": ("容量", "容積"),
    "広さ": ("面積", "適用床面積"),
}
"""Words documents write for what a question names (a spec table says 質量, not 重さ)."""


_ASKS_WEIGHT: Final = re.compile(r"何(?:kg|キログラム|キロ(?!メートル)|グラム|g|トン)")
"""A question that asks for a weight by its unit (本体は何キロありますか) without naming it."""


def spellings(question: str) -> list[str]:
    """The words documents use for the attributes a question names (重さ → 質量, 重量), or
    asks for by its unit (何キロ: a weight)."""
    text = folded(question)
    named = [word for word in SPELLINGS if word in text]
    if _ASKS_WEIGHT.search(text) and "重さ" not in named:
        named.append("重さ")
    found: list[str] = []
    for word in named:
        found += [w for w in SPELLINGS[word] if w not in found and w not in text]
    return found
