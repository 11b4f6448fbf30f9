"""Follow-up questions made standalone by rules."""

from __future__ import annotations

import pytest

from shirabe.answering.followup import Turn, carried, standalone, subject


@pytest.mark.parametrize(
    ("before", "question", "searched"),
    [
        # a demonstrative is replaced by the previous subject
        (
            "INC-2024-0004はどんな障害ですか？",
            "それは何時に復旧しましたか？",
            "INC-2024-0004は何時に復旧しましたか?",
        ),
        (
            "有給休暇の申請方法は？",
            "その締め切りはいつですか？",
            "有給休暇の申請方法の締め切りはいつですか?",
        ),
        # a fragment naming another code asks the previous question about it
        (
            "INC-2024-0004はどんな障害ですか？",
            "INC-2024-0006のほうは？",
            "INC-2024-0006はどんな障害ですか?",
        ),
        (
            "AQ-300の希望小売価格はいくらですか？",
            "では、AQ-250は？",
            "AQ-250の希望小売価格はいくらですか?",
        ),
        # an attribute alone, or a question without a subject, gets the previous subject
        ("AQ-300の高さは何cmですか？", "重さは？", "AQ-300の重さは？"),
        (
            "INC-2024-0004はどんな障害ですか？",
            "何時に復旧しましたか？",
            "INC-2024-0004は何時に復旧しましたか？",
        ),
        # a condition asks the previous question under it
        (
            "東京に出張したときの宿泊費の上限はいくらですか？",
            "部長の場合は？",
            "部長の場合、東京に出張したときの宿泊費の上限はいくらですか?",
        ),
        # a question of its own is kept as typed
        (
            "有給休暇の申請方法は？",
            "社員証をなくしたらどうすればいいですか？",
            "社員証をなくしたらどうすればいいですか？",
        ),
    ],
)
def test_a_follow_up_made_standalone(before: str, question: str, searched: str) -> None:
    assert standalone(question, [Turn(before, "…")]) == searched


def test_the_first_question_is_kept_as_typed() -> None:
    assert standalone("それは何時ですか？", []) == "それは何時ですか？"


def test_a_third_turn_carries_the_subject_of_the_first() -> None:
    turns = [Turn("AQ-300の高さは何cmですか？"), Turn("重さは？")]
    assert standalone("では、AQ-250は？", turns) == "AQ-250の重さは？"


@pytest.mark.parametrize(
    ("question", "about"),
    [
        ("INC-2024-0004はどんな障害ですか？", "INC-2024-0004"),
        ("有給休暇の申請方法は？", "有給休暇の申請方法"),
        ("ERR-102とERR-105の違いは？", "ERR-102・ERR-105"),
        ("どうすればいいですか", ""),
    ],
)
def test_what_a_question_is_about(question: str, about: str) -> None:
    assert subject(question) == about


def test_a_question_that_found_nothing_is_asked_again_about_the_subject() -> None:
    turns = [Turn("AQ-300のメーカー希望小売価格はいくらですか？", "54,780円です。")]
    assert carried("発売日はいつですか？", turns) == "AQ-300について、発売日はいつですか?"
    assert carried("AQ-300の発売日はいつですか？", turns) is None  # already about it
    assert carried("発売日はいつですか？", []) is None


def test_the_code_an_answer_was_about_is_the_subject() -> None:
    turns = [
        Turn(
            "メールが止まった障害はどれですか？",
            "管理番号: INC-2024-0004 / 概要: 証明書の期限切れ[1]",
        )
    ]
    assert (
        standalone("それは何時に復旧しましたか？", turns) == "INC-2024-0004は何時に復旧しましたか?"
    )
