"""Searching one's chats by title, questions and answers: the caller's own only, every word
somewhere in the chat, answers that may no longer be read left out (real SQLite and
PostgreSQL), and the folding and excerpts by hand-computed tables."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from shirabe.conversations import Conversations
from shirabe.conversations.search import excerpt, fold, search_words

from tests.conversations.helpers import HANA, KEN, ask, turn


def everything(_sources: Sequence[str]) -> bool:
    return True


def titles(
    kept: Conversations,
    owner: str,
    text: str,
    may_read: Callable[[Sequence[str]], bool] = everything,
    limit: int = 50,
) -> list[str]:
    found = kept.search(owner, text, may_read=may_read, limit=limit)
    return [f.conversation.title for f in found]


@pytest.fixture
def chats(kept: Conversations) -> Conversations:
    """Hana's chats on leave, AQ-300 and expenses; Ken's on AQ-300 and leave too."""
    for owner, title, question, answer in [
        (HANA, "有給休暇", "有給休暇の申請方法は？", "ミナモ勤怠から3営業日前までに申請する"),
        (HANA, "製品", "ＡＱ－３００の重さは？", "AQ-300 の質量は約9.2kgです。"),
        (HANA, "経費", "出張の日当は？", "日当は3,000円です。"),
        (KEN, "ケンの会話", "AQ-300の有給休暇は？", "有給休暇の申請方法はミナモ勤怠です。"),
    ]:
        made = kept.create(owner, title)
        ask(kept, owner, made.id, question, answer)
    return kept


def test_only_the_callers_own_chats_match(chats: Conversations) -> None:
    assert titles(chats, HANA, "有給休暇") == ["有給休暇"]
    assert titles(chats, KEN, "有給休暇") == ["ケンの会話"]
    assert titles(chats, HANA, "ケンの会話") == []  # another owner's title never matches
    assert titles(chats, "user:nobody", "AQ-300") == []


def test_titles_questions_and_answers_match_in_any_width_and_case(chats: Conversations) -> None:
    assert titles(chats, HANA, "経費") == ["経費"]  # the title
    assert titles(chats, HANA, "aq-300") == ["製品"]  # the question, full-width ＡＱ－３００
    assert titles(chats, HANA, "ミナモ勤怠") == ["有給休暇"]  # the answer
    assert titles(chats, HANA, "９.２ＫＧ") == ["製品"]
    assert titles(chats, HANA, "日当 3,000円") == ["経費"]  # every word, anywhere in the chat
    assert titles(chats, HANA, "日当 有給休暇") == []
    assert titles(chats, HANA, "   ") == []


def test_an_answer_that_may_not_be_read_is_not_searched(chats: Conversations) -> None:
    def nothing(_sources: Sequence[str]) -> bool:
        return False

    assert titles(chats, HANA, "ミナモ勤怠", may_read=nothing) == []  # only in the answer
    assert titles(chats, HANA, "申請方法", may_read=nothing) == ["有給休暇"]  # the question


def test_results_are_limited_and_ordered_as_the_list(chats: Conversations) -> None:
    first = next(c for c in chats.of(HANA) if c.title == "有給休暇")
    chats.pin(HANA, first.id)
    assert titles(chats, HANA, "は") == ["有給休暇", "経費", "製品"]  # pinned, then recent
    assert titles(chats, HANA, "は", limit=2) == ["有給休暇", "経費"]
    found = chats.search(HANA, "質量", may_read=everything)
    assert [f.excerpt for f in found] == ["AQ-300 の質量は約9.2kgです。"]


def test_a_version_not_chosen_is_not_searched(chats: Conversations) -> None:
    made = next(c for c in chats.of(HANA) if c.title == "経費")
    chats.add_version(HANA, made.id, 1, turn("出張の日当は？", "宿泊を伴う出張は4,000円です。"))
    assert titles(chats, HANA, "4,000円") == ["経費"]
    chats.choose_version(HANA, made.id, 1, 1)
    assert titles(chats, HANA, "4,000円") == []


@pytest.mark.parametrize(
    ("text", "folded"),
    [
        ("ＡＱ－３００", "aq-300"),
        ("  有給\n休暇  ", "有給 休暇"),
        ("ｶﾀｶﾅ", "カタカナ"),
        ("ERR-105", "err-105"),
    ],
)
def test_fold(text: str, folded: str) -> None:
    assert fold(text) == folded


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("有給休暇　申請", ["有給休暇", "申請"]),  # an ideographic space separates
        ("AQ-300 aq-300", ["aq-300"]),
        (" ".join("abcdefghij"), list("abcdefgh")),  # eight words at most
        ("", []),
    ],
)
def test_search_words(text: str, words: list[str]) -> None:
    assert search_words(text) == words


@pytest.mark.parametrize(
    ("text", "word", "shown"),
    [
        ("AQ-300 の質量は約9.2kgです。", "質量", "AQ-300 の質量は約9.2kgです。"),
        ("あ" * 30 + "休暇" + "い" * 30, "休暇", "…" + "あ" * 24 + "休暇" + "い" * 24 + "…"),
        ("ＡＱ－３００\nの重さ", "aq-300", "AQ-300 の重さ"),
        ("休暇", "給与", ""),
    ],
)
def test_excerpt(text: str, word: str, shown: str) -> None:
    assert excerpt(text, word) == shown
