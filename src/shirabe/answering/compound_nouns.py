"""The compound nouns of a question (加湿フィルター, お試し用ボトル) and the other kinds of the
same thing a passage names instead (集じんフィルター for 加湿フィルター). Pure functions over
Sudachi words."""

from __future__ import annotations

from collections.abc import Sequence

from shirabe.answering.asking import Word, in_compound, is_noun, tells
from shirabe.answering.mentions import is_cjk
from shirabe.text.normalize import folded


def compounds(words: Sequence[Word]) -> list[tuple[str, tuple[str, ...]]]:
    """The compound nouns of a question written in Japanese script, each with the words it is
    made of (``加湿フィルター`` of 加湿 and フィルター, ``お試し用ボトル`` of 試し and
    ボトル): a run of nouns holding two words or more that say what the question is about
    (:func:`shirabe.answering.asking.tells`), from the first such word (and its prefix) to the
    last. Its words are looked for apart, as documents write them (気温との差 for 気温差); the
    compound tells a passage about another kind of the same thing (:func:`siblings`)."""
    found: list[tuple[str, tuple[str, ...]]] = []
    i = 0
    while i < len(words):
        if not in_compound(words, i):
            i += 1
            continue
        end = i
        while end < len(words) and in_compound(words, end):
            end += 1
        plains = [folded(words[j][0]) for j in range(i, end)]
        telling = [k for k, p in enumerate(plains) if tells(words[i + k], p)]
        if len(telling) >= 2:
            first = telling[0] - (telling[0] > 0 and words[i + telling[0] - 1][2][0] == "接頭辞")
            text = "".join(plains[first : telling[-1] + 1])  # お試し用ボトル, with its お
            if all(is_cjk(ch) for ch in text):
                found.append((text, tuple(plains[k] for k in telling)))
        i = end
    return found


def siblings(compound: str, head: str, words: Sequence[Word]) -> list[str]:
    """The other compounds a sentence (``words``) names with the head of the question's
    ``compound`` (集じんフィルター and 脱臭フィルター for 加湿フィルター, 切タイマー for
    入タイマー), when it does not name that compound: the sentence tells of another kind of
    the thing asked. Empty when it names the compound, or the head alone
    (フィルターを交換したら)."""
    plains = [folded(w[0]) for w in words]
    if compound in "".join(plains):
        return []
    found: list[str] = []
    for k, plain in enumerate(plains):
        if plain != head or not k or not is_noun(words[k - 1]) or words[k - 1][2][0] == "接頭辞":
            continue
        if k + 1 < len(words) and is_noun(words[k + 1]):
            continue  # 情報システム部 is a 部, not a システム
        start = k - 1
        while start > 0 and is_noun(words[start - 1]):
            start -= 1
        found.append("".join(plains[start : k + 1]))
    return found


def whole_words(terms: Sequence[str], found: Sequence[tuple[str, tuple[str, ...]]]) -> list[str]:
    """``terms`` with each word of a compound of the question (``found``, as
    :func:`compounds` gives them) written as the compound: 入タイマー for 入, as a reason
    names what the question asked about."""
    out: list[str] = []
    for term in terms:
        shown = next((text for text, parts in found if term in parts), term)
        if shown not in out:
            out.append(shown)
    return out
