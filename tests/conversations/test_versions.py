"""A turn's answers kept as versions (再生成), an edited question that replaces its turn and
removes the turns after it in one transaction, and pinned chats (real SQLite and
PostgreSQL)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from shirabe.access.accounts import Database, Row
from shirabe.conversations import Conversations
from shirabe.errors import ConversationError, NotFoundError

from tests.conversations.helpers import HANA, KEN, ask, turn


def answers(kept: Conversations, owner: str, ident: str) -> list[tuple[int, str, int, int]]:
    return [(t.position, t.answer, t.version, t.versions) for t in kept.turns(owner, ident)]


def test_asking_again_keeps_each_answer_as_a_version(kept: Conversations) -> None:
    made = kept.create(HANA)
    ask(kept, HANA, made.id, "AQ-300の重さは？", "約9.2kgです。")
    ask(kept, HANA, made.id, "保証期間は？", "1年です。")
    second = kept.add_version(HANA, made.id, 1, turn("AQ-300の重さは？", "9.2kg（本体のみ）"))
    assert (second.version, second.versions, second.answer) == (2, 2, "9.2kg（本体のみ）")
    # the turn shows the chosen answer, and the turns after it stay as they were
    assert answers(kept, HANA, made.id) == [
        (1, "9.2kg（本体のみ）", 2, 2),
        (2, "1年です。", 1, 1),
    ]
    first = kept.choose_version(HANA, made.id, 1, 1)
    assert (first.answer, first.version, first.versions) == ("約9.2kgです。", 1, 2)
    assert first.citations == [{"number": 1, "file": "人事/就業規則.md"}]
    assert kept.turns(HANA, made.id)[0].answer == "約9.2kgです。"  # kept, as a reload reads it
    third = kept.add_version(HANA, made.id, 1, turn("AQ-300の重さは？", "9.2kgです。"))
    assert (third.version, third.versions) == (3, 3)
    assert kept.choose_version(HANA, made.id, 1, 2).answer == "9.2kg（本体のみ）"


def test_versions_are_limited_and_belong_to_their_question_and_owner(
    kept: Conversations,
) -> None:
    made = kept.create(HANA)
    ask(kept, HANA, made.id, "AQ-300の重さは？", "約9.2kgです。")
    for n in (2, 3):
        kept.add_version(HANA, made.id, 1, turn("AQ-300の重さは？", f"回答{n}"))
    with pytest.raises(ConversationError, match="has 3 answers, the most kept"):
        kept.add_version(HANA, made.id, 1, turn("AQ-300の重さは？", "回答4"))
    with pytest.raises(ConversationError, match="is not this question"):
        kept.add_version(HANA, made.id, 1, turn("AQ-250の重さは？", "…"))
    with pytest.raises(NotFoundError, match="has no answer 4"):
        kept.choose_version(HANA, made.id, 1, 4)
    with pytest.raises(NotFoundError, match="has no turn 2"):
        kept.choose_version(HANA, made.id, 2, 1)
    for attempt in (
        lambda: kept.add_version(KEN, made.id, 1, turn("AQ-300の重さは？", "乗っ取り")),
        lambda: kept.choose_version(KEN, made.id, 1, 1),
        lambda: kept.replace_turn(KEN, made.id, 1, turn("別の質問", "…")),
        lambda: kept.pin(KEN, made.id),
    ):
        with pytest.raises(NotFoundError, match=f"conversation '{made.id}' not found"):
            attempt()
    assert answers(kept, HANA, made.id) == [(1, "回答3", 3, 3)]
    assert not kept.get(HANA, made.id).pinned


def test_feedback_is_given_on_the_answer_shown(kept: Conversations) -> None:
    made = kept.create(HANA)
    ask(kept, HANA, made.id, "AQ-300の重さは？", "約9.2kgです。")
    kept.give_feedback(HANA, made.id, 1, "down", "単位が違う")
    kept.add_version(HANA, made.id, 1, turn("AQ-300の重さは？", "9.2kgです。"))
    kept.give_feedback(HANA, made.id, 1, "up")  # on version 2: the first stays
    given = [(f.version, f.rating, f.turn.answer) for f in kept.feedback(owner=HANA)]
    assert given == [(1, "down", "約9.2kgです。"), (2, "up", "9.2kgです。")]
    kept.choose_version(HANA, made.id, 1, 1)
    again = kept.give_feedback(HANA, made.id, 1, "up", "やはり正しい")  # replaces version 1's
    assert (again.version, again.turn.answer) == (1, "約9.2kgです。")
    assert [(f.version, f.rating) for f in kept.feedback(owner=HANA)] == [(2, "up"), (1, "up")]


def test_an_edited_question_replaces_its_turn_and_removes_the_later_ones(
    kept: Conversations, database: Database
) -> None:
    made = kept.create(HANA)
    for question in ("有給休暇の日数は？", "その申請方法は？", "締め切りは？"):
        ask(kept, HANA, made.id, question, question + "の回答")
    kept.add_version(HANA, made.id, 2, turn("その申請方法は？", "二つ目の回答"))
    for position in (1, 2, 3):
        kept.give_feedback(HANA, made.id, position, "up")
    edited = kept.replace_turn(HANA, made.id, 2, turn("慶弔休暇の申請方法は？", "新しい回答"))
    assert (edited.position, edited.question, edited.answer) == (
        2,
        "慶弔休暇の申請方法は？",
        "新しい回答",
    )
    assert (edited.version, edited.versions) == (1, 1)  # the earlier answers are dropped
    assert answers(kept, HANA, made.id) == [
        (1, "有給休暇の日数は？の回答", 1, 1),
        (2, "新しい回答", 1, 1),
    ]
    assert [f.position for f in kept.feedback(owner=HANA)] == [1]  # on turn 1 only
    kept_versions = database.query("SELECT COUNT(*) AS n FROM turn_versions", ())
    assert int(kept_versions[0]["n"]) == 0
    assert kept.get(HANA, made.id).turns == 2
    assert ask(kept, HANA, made.id, "それは何日前まで？", "…") == 3  # the next turn follows
    with pytest.raises(NotFoundError, match="has no turn 9"):
        kept.replace_turn(HANA, made.id, 9, turn("…", "…"))


class LastStepFails:
    """A database whose transactions fail at their last step, after the others ran."""

    def __init__(self, database: Database) -> None:
        self.database = database

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        return self.database.query(sql, params)

    def change(self, sql: str, params: Sequence[Any] = ()) -> int:
        return self.database.change(sql, params)

    def changes(self, steps: Sequence[tuple[str, Sequence[Any]]]) -> list[int]:
        return self.database.changes([*steps, ("UPDATE no_such_table SET x = 1", ())])

    def close(self) -> None:
        self.database.close()


def test_an_edit_is_one_transaction(kept: Conversations, database: Database) -> None:
    made = kept.create(HANA)
    for question in ("有給休暇の日数は？", "その申請方法は？", "締め切りは？"):
        ask(kept, HANA, made.id, question, question + "の回答")
    kept.give_feedback(HANA, made.id, 3, "down")
    failing = Conversations(LastStepFails(database))
    with pytest.raises(Exception, match="no_such_table"):
        failing.replace_turn(HANA, made.id, 2, turn("慶弔休暇の申請方法は？", "新しい回答"))
    assert [t.question for t in kept.turns(HANA, made.id)] == [  # nothing was removed
        "有給休暇の日数は？",
        "その申請方法は？",
        "締め切りは？",
    ]
    assert [f.position for f in kept.feedback(owner=HANA)] == [3]
    with pytest.raises(Exception, match="no_such_table"):
        failing.add_version(HANA, made.id, 1, turn("有給休暇の日数は？", "二つ目"))
    assert answers(kept, HANA, made.id)[0] == (1, "有給休暇の日数は？の回答", 1, 1)


def test_pinned_conversations_are_listed_first(kept: Conversations) -> None:
    old = kept.create(HANA, "古い会話")
    new = kept.create(HANA, "新しい会話")
    assert [c.id for c in kept.of(HANA)] == [new.id, old.id]
    assert kept.pin(HANA, old.id).pinned
    ask(kept, HANA, new.id, "AQ-300の重さは？", "約9.2kgです。")  # used later, still below
    assert [(c.id, c.pinned) for c in kept.of(HANA)] == [(old.id, True), (new.id, False)]
    assert not kept.pin(HANA, old.id, pinned=False).pinned
    assert [c.id for c in kept.of(HANA)] == [new.id, old.id]


def test_deleting_a_conversation_deletes_its_versions(
    kept: Conversations, database: Database
) -> None:
    made = kept.create(HANA)
    ask(kept, HANA, made.id, "AQ-300の重さは？", "約9.2kgです。")
    kept.add_version(HANA, made.id, 1, turn("AQ-300の重さは？", "9.2kgです。"))
    kept.give_feedback(HANA, made.id, 1, "up")
    kept.delete(HANA, made.id)
    for table in ("turn_versions", "turns", "feedback"):
        assert int(database.query(f"SELECT COUNT(*) AS n FROM {table}", ())[0]["n"]) == 0
