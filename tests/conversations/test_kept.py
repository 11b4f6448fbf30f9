"""Conversations and feedback kept per owner (real SQLite and PostgreSQL)."""

from __future__ import annotations

import pytest

from shirabe.conversations import Conversations, client_owner, title_of
from shirabe.errors import ConversationError, NotFoundError

from tests.conversations.helpers import HANA, KEN, ask


def test_a_conversation_keeps_its_turns_in_order(kept: Conversations) -> None:
    made = kept.create(HANA)
    assert (made.title, made.turns) == ("", 0)
    assert ask(kept, HANA, made.id, "有給休暇の申請方法は？", "ミナモ勤怠から申請する[1]") == 1
    assert ask(kept, HANA, made.id, "その締め切りは？", "3営業日前まで[1]") == 2
    turns = kept.turns(HANA, made.id)
    assert [(t.position, t.question) for t in turns] == [
        (1, "有給休暇の申請方法は？"),
        (2, "その締め切りは？"),
    ]
    first = turns[0]
    assert first.sources == ("人事/就業規則.md",)  # repeats kept once
    assert first.categories == ("人事",)
    assert first.citations == [{"number": 1, "file": "人事/就業規則.md"}]
    again = kept.get(HANA, made.id)
    assert (again.title, again.turns) == (
        "有給休暇の申請方法は？",
        2,
    )  # titled by its first question


def test_conversations_are_listed_most_recent_first_and_renamed(kept: Conversations) -> None:
    old = kept.create(HANA, "古い会話")
    new = kept.create(HANA)
    ask(kept, HANA, new.id, "AQ-300の重さは？", "約9.2kgです。")
    ask(kept, HANA, old.id, "出張の日当は？", "3,000円です。")  # now the most recent
    assert [c.id for c in kept.of(HANA)] == [old.id, new.id]
    assert kept.rename(HANA, new.id, "  AQ-300 の\n仕様 ").title == "AQ-300 の 仕様"
    with pytest.raises(ConversationError, match="title must not be empty"):
        kept.rename(HANA, new.id, "   ")
    assert len(title_of("あ" * 200)) == 80


def test_another_owners_conversation_is_not_found(kept: Conversations) -> None:
    made = kept.create(HANA)
    ask(kept, HANA, made.id, "有給休暇の申請方法は？", "ミナモ勤怠から申請する[1]")
    assert kept.of(KEN) == []
    for attempt in (
        lambda: kept.get(KEN, made.id),
        lambda: kept.turns(KEN, made.id),
        lambda: kept.rename(KEN, made.id, "乗っ取り"),
        lambda: kept.delete(KEN, made.id),
        lambda: ask(kept, KEN, made.id, "給与は？", "…"),
        lambda: kept.give_feedback(KEN, made.id, 1, "down"),
    ):
        with pytest.raises(NotFoundError, match=f"conversation '{made.id}' not found"):
            attempt()
    assert kept.get(HANA, made.id).title == "有給休暇の申請方法は？"  # untouched
    assert len(kept.turns(HANA, made.id)) == 1


def test_a_conversation_holds_at_most_the_turns_set(kept: Conversations) -> None:
    made = kept.create(HANA)
    for n in range(3):
        ask(kept, HANA, made.id, f"質問{n}", "回答")
    with pytest.raises(ConversationError, match="has 3 turns, the most kept"):
        ask(kept, HANA, made.id, "質問3", "回答")


def test_feedback_is_given_on_a_stored_turn_and_deleted_with_it(kept: Conversations) -> None:
    made = kept.create(HANA)
    ask(kept, HANA, made.id, "AQ-300の重さは？", "約9.2kgです。[1]")
    first = kept.give_feedback(HANA, made.id, 1, "down", "単位が違う")
    assert (first.rating, first.comment, first.turn.answer) == (
        "down",
        "単位が違う",
        "約9.2kgです。[1]",
    )
    again = kept.give_feedback(HANA, made.id, 1, "up")  # replaces the first
    assert [(f.rating, f.comment) for f in kept.feedback()] == [("up", "")]
    assert again.turn.question == "AQ-300の重さは？"
    assert kept.feedback(rating="down") == []
    with pytest.raises(NotFoundError, match="has no turn 2"):
        kept.give_feedback(HANA, made.id, 2, "up")
    with pytest.raises(ConversationError, match="rating must be 'up' or 'down'"):
        kept.give_feedback(HANA, made.id, 1, "meh")  # type: ignore[arg-type]
    with pytest.raises(ConversationError, match="comment is longer than 2000"):
        kept.give_feedback(HANA, made.id, 1, "down", "x" * 2001)
    kept.delete(HANA, made.id)
    assert kept.of(HANA) == []
    assert kept.feedback() == []


def test_an_anonymous_browser_is_known_by_its_client_ids_hash() -> None:
    owner = client_owner("k3J9-aZ_0123456789abcd")
    assert owner.startswith("anon:") and "k3J9" not in owner
    assert owner == client_owner("k3J9-aZ_0123456789abcd")
    assert owner != client_owner("k3J9-aZ_0123456789abce")
    for bad in ("short", "has space in it 0123456", "é" * 20):
        with pytest.raises(ConversationError, match="client id must be 16-128"):
            client_owner(bad)
