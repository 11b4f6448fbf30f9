"""Follow-up questions made standalone by rules, and by a chat model when there is one."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest

from shirabe.answering.followup import (
    carried,
    carried_in_vain,
    carried_words,
    parse_rewrite,
    rewrite_prompt,
    rewritten,
    standalone,
    subject,
)
from shirabe.errors import GeneratorError
from shirabe.llm.protocol import Message
from shirabe.records import Turn


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
        # a demonstrative before a noun the subject names stands for the subject so far
        (
            "社員番号G90012のアカウント種別は？",
            "その種別でミナモ精算は使えますか？",
            "社員番号G90012のアカウント種別でミナモ精算は使えますか?",
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
        # a condition naming another value of the kind the previous question named
        (
            "課長が出張で泊まるホテル代はいくらまで会社が出してくれますか？",
            "部長の場合は？",
            "部長が出張で泊まるホテル代はいくらまで会社が出してくれますか?",
        ),
        (
            "東京支店の電話番号は？",
            "大阪支店の場合は？",
            "大阪支店の電話番号は?",
        ),
        # a condition that is another case of the previous one takes its place
        (
            "本人が結婚するときの慶弔休暇は何日ですか？",
            "子の結婚の場合は？",
            "子の結婚の場合の慶弔休暇は何日ですか?",
        ),
        # a topic of a word or two, nothing after it but the question: the previous subject's
        (
            "AQ-300の希望小売価格はいくらですか？",
            "発売日はいつですか？",
            "AQ-300の発売日はいつですか？",
        ),
        # a short topic with words of its own after it is a question of its own
        (
            "AQ-300の初年度の販売目標は？",
            "販売店はデモ機を何台まで借りられますか？",
            "販売店はデモ機を何台まで借りられますか？",
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


@pytest.mark.parametrize(
    ("before", "answer", "searched"),
    [
        # the answer lists both as cases: the value asked before is replaced
        (
            "課長の出張手当は？",
            "課長: １泊あたり１２，０００円[1]\n部長: １泊あたり１４，０００円[1]",
            "部長の出張手当は?",
        ),
        # the answer lists the new value, not one the question named: a condition
        (
            "担当者の出張手当は？",
            "部長: １泊あたり１４，０００円[1]",
            "部長の場合、担当者の出張手当は?",
        ),
    ],
)
def test_the_answers_cases_say_which_values_are_of_one_kind(
    before: str, answer: str, searched: str
) -> None:
    assert standalone("部長の場合は？", [Turn(before, answer)]) == searched


def test_the_first_question_is_kept_as_typed() -> None:
    assert standalone("それは何時ですか？", []) == "それは何時ですか？"


def test_a_third_turn_carries_the_subject_of_a_short_second() -> None:
    turns = [Turn("AQ-300の希望小売価格はいくらですか？"), Turn("発売日はいつですか？")]
    assert standalone("保証期間は？", turns) == "AQ-300の保証期間は？"


def test_a_third_turn_carries_the_subject_of_the_first() -> None:
    turns = [Turn("AQ-300の高さは何cmですか？"), Turn("重さは？")]
    assert standalone("では、AQ-250は？", turns) == "AQ-250の重さは？"


@pytest.mark.parametrize(
    ("turns", "question", "searched"),
    [
        (  # who was asked: the one person the answer names
            [Turn("8月15日の当番は誰ですか？", "8月15日（金） — 当番: 見本 太郎（総務部長）[1]")],
            "その人の社員番号を教えてください。",
            "見本 太郎の社員番号を教えてください。",
        ),
        (  # a fragment asks who again
            [
                Turn("8月14日の当番は誰ですか？", "8月14日（木） — 当番: 架空 次郎[1]"),
                Turn("15日は？", "8月15日（金） — 当番: 見本 太郎（総務部長）[1]"),
            ],
            "その人の社員番号は？",
            "見本 太郎の社員番号は?",
        ),
        (  # the person the question named, not the one its answer names
            [Turn("試作 三郎さんの部署はどこですか？", "担当: 例田 次郎[1]")],
            "彼が担当した障害は？",
            "試作 三郎が担当した障害は?",
        ),
        (  # the person is the subject carried, not the attribute asked of them
            [Turn("試作 三郎さんの部署はどこですか？", "部署: 情報システム部[1]")],
            "兼務している担当は？",
            "試作 三郎の兼務している担当は？",
        ),
        (  # two people answered: the reference is left to the other rules
            [Turn("当番は誰ですか？", "14日: 架空 次郎[1]\n15日: 見本 太郎[1]")],
            "その人の社員番号は？",
            "当番の人の社員番号は?",
        ),
        (  # その方法 refers to no person
            [Turn("当番は誰ですか？", "当番: 見本 太郎[1]")],
            "その方法は？",
            "当番の方法は?",
        ),
        (  # not asked who: a name in the answer is not the person referred to
            [Turn("夏季休業はいつですか？", "8月13日～17日。連絡先 見本 太郎[1]")],
            "その方法は？",
            "夏季休業の方法は?",
        ),
    ],
)
def test_a_person_referred_back_to_is_named(
    turns: list[Turn], question: str, searched: str
) -> None:
    assert standalone(question, turns) == searched


@pytest.mark.parametrize(
    ("question", "about"),
    [
        ("INC-2024-0004はどんな障害ですか？", "INC-2024-0004"),
        ("有給休暇の申請方法は？", "有給休暇の申請方法"),
        ("ERR-102とERR-105の違いは？", "ERR-102・ERR-105"),
        ("どうすればいいですか", ""),
        # the topic before は may hold a clause of its own
        (
            "ミナモ精算の画面が極端に遅くなった障害はいつ起きましたか？",
            "ミナモ精算の画面が極端に遅くなった障害",
        ),
        ("領収書の添付が必須になるのはいくらからですか？", "領収書の添付"),  # a clause made a noun
        ("会社では何を用意しますか", ""),  # では is no topic
        ("電源が入らないときの対処は？", "電源が入らないときの対処"),
    ],
)
def test_what_a_question_is_about(question: str, about: str) -> None:
    assert subject(question) == about


def test_a_question_that_found_nothing_is_asked_again_about_the_subject() -> None:
    turns = [Turn("AQ-300のメーカー希望小売価格はいくらですか？", "54,780円です。")]
    assert carried("発売日はいつですか？", turns) == "AQ-300について、発売日はいつですか?"
    assert carried("AQ-300の発売日はいつですか？", turns) is None  # already about it
    assert carried("発売日はいつですか？", []) is None


ABOUT_AQ300 = [Turn("AQ-300の重さは何kgですか？", "約9.2kgです。\n質量: 約9.2kg[1]")]
NOT_FOUND = "「AQ-300」についての記載が見つかりません"


@pytest.mark.parametrize(
    ("reason", "question", "asked", "history", "carried"),
    [
        # what the conversation carried in is what no passage names: a new topic
        (NOT_FOUND, "有給休暇の申請方法は？", "AQ-300の有給休暇の申請方法は？", ABOUT_AQ300,
         ["AQ-300"]),
        ("「aq-300」についての記載が見つかりません", "有給休暇の残日数は？",
         "AQ-300の有給休暇の残日数は？", ABOUT_AQ300, ["aq-300"]),
        # the question's own word is missing: asking it alone cannot help
        ("「保証期間」についての記載が見つかりません", "保証期間の延長は？",
         "AQ-300の保証期間の延長は？", ABOUT_AQ300, []),
        ("金額（いくら）を示す記載が見つかりません", "月々の電気代は？", "AQ-300の月々の電気代は？",
         ABOUT_AQ300, []),
        (NOT_FOUND, "AQ-300の重さは？", "AQ-300の重さは？", ABOUT_AQ300, []),
        (None, "有給休暇の申請方法は？", "AQ-300の有給休暇の申請方法は？", ABOUT_AQ300, []),
        # it asks after what came before: それ, では, その, a condition, no subject of its own
        ("「INC-2024-0099」についての記載が見つかりません", "それは何時に復旧しましたか？",
         "INC-2024-0099は何時に復旧しましたか？",
         [Turn("INC-2024-0004はどんな障害ですか？", "証明書の期限切れ[1]")], []),
        (NOT_FOUND, "では、フィルターの交換時期は？", "AQ-300のフィルターの交換時期は？",
         ABOUT_AQ300, []),
        (NOT_FOUND, "重さは？", "AQ-300の重さは？", ABOUT_AQ300, []),
        (NOT_FOUND, "一般社員の場合は？", "一般社員の場合は、AQ-300の重さは？", ABOUT_AQ300, []),
        # the turn before was refused itself: what it named is missing from the documents
        ("「AQ-500」についての記載が見つかりません", "フィルターの交換時期は？",
         "AQ-500のフィルターの交換時期は？",
         [Turn("AQ-500の重さは？", "ドキュメントに記載がありません")], []),
    ],
)  # fmt: skip
def test_what_the_conversation_carried_in_vain(
    reason: str | None, question: str, asked: str, history: list[Turn], carried: list[str]
) -> None:
    assert carried_in_vain(reason, question, asked, history) == carried


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


@pytest.mark.parametrize(
    ("turns", "question", "searched"),
    [
        (  # the code answered, of the two the answer names the one after the asked thing
            [
                Turn("AQ-300のERR-105はどういう意味ですか？", "フィルターの交換時期です。[1]"),
                Turn(
                    "その交換に使う集じんフィルターの品番は？",
                    "新しいフィルター（集じんフィルター AQF-30H、脱臭フィルター AQF-30D）[1]",
                ),
            ],
            "値段はいくらですか？",
            "AQF-30Hの値段はいくらですか？",
        ),
        (  # a 管理番号 asked and answered
            [Turn("ERR-107が出た障害の管理番号は？", "管理番号: INC-2024-0006 / 概要: ERR-107[1]")],
            "それは何時に復旧しましたか？",
            "INC-2024-0006は何時に復旧しましたか?",
        ),
        (  # no code asked for: the previous subject stays
            [Turn("AQ-300の付属品は何ですか？", "AQF-30H、AQF-30D が付属します。[1]")],
            "重さは？",
            "AQ-300の重さは？",
        ),
    ],
)
def test_the_code_an_answer_gave_is_the_subject_after_a_code_was_asked_for(
    turns: list[Turn], question: str, searched: str
) -> None:
    assert standalone(question, turns) == searched


def test_the_model_reads_the_last_turns_and_the_question() -> None:
    history = [
        Turn("AQ-200の重さは？", "約7kgです。"),
        Turn("INC-2024-0004はどんな障害ですか？", "ストレージ障害です。" + "詳細" * 200),
        Turn("原因は？", "容量不足です。"),
        Turn("影響は？", "受付が止まりました。"),
    ]
    prompt = rewrite_prompt("それは何時に復旧しましたか？", history)
    assert "AQ-200" not in prompt  # only the last three turns
    assert "質問: INC-2024-0004はどんな障害ですか?" in prompt
    assert "回答: ストレージ障害です。" + "詳細" * 95 + "…" in prompt  # answers cut to 200
    assert prompt.endswith("最後の質問: それは何時に復旧しましたか?")


RULED = "INC-2024-0004は何時に復旧しましたか?"


@pytest.mark.parametrize(
    ("reply", "made"),
    [
        ("INC-2024-0004はいつ復旧しましたか？", "INC-2024-0004はいつ復旧しましたか？"),
        ("書き換えた質問: 「INC-2024-0004の復旧時刻は？」\n説明…", "INC-2024-0004の復旧時刻は？"),
        ("それは何時に復旧しましたか？", None),  # the carried code is lost
        ("INC-2024-0005は何時に復旧しましたか？", None),  # another code
        ("", None),
        ("INC-2024-0004 " + "あ" * 200, None),  # not one short question
        ("INC-2024-0004", None),  # shares no word with the question
        (  # an answer, not the question
            "INC-2024-0004は「証明書の期限切れ」です[1]。その復旧は10月15日です[2]。",
            None,
        ),
        ("INC-2024-0004は障害です。何時に復旧しましたか？", None),
    ],
)
def test_a_models_rewrite_is_used_only_when_it_is_one_question_keeping_the_codes(
    reply: str, made: str | None
) -> None:
    assert parse_rewrite(reply, "それは何時に復旧しましたか？", RULED) == made


class Scripted:
    """A chat model that replies with a fixed text, or fails."""

    name = "llm:scripted"
    context_window = 4096
    max_tokens = 64

    def __init__(self, reply: str | None) -> None:
        self.reply = reply
        self.prompts: list[str] = []

    def count_tokens(self, text: str) -> int:
        return len(text)

    def complete(self, messages: Sequence[Message], *, max_tokens: int | None = None) -> str:
        self.prompts.append(messages[-1]["content"])
        if self.reply is None:
            raise GeneratorError("model server unreachable")
        return self.reply

    def stream(self, messages: Sequence[Message]) -> Iterator[str]:
        yield self.complete(messages)

    def close(self) -> None:
        pass


def test_the_rules_form_is_kept_when_the_model_fails_or_loses_the_subject() -> None:
    history = [Turn("INC-2024-0004はどんな障害ですか？", "ストレージ障害です。")]
    question = "それは何時に復旧しましたか？"
    good = Scripted("INC-2024-0004のサービスは何時に復旧しましたか？")
    assert rewritten(good, question, history, RULED) == good.reply
    assert "最後の質問: それは何時に復旧しましたか?" in good.prompts[0]
    assert rewritten(Scripted(None), question, history, RULED) == RULED
    assert rewritten(Scripted("何時に復旧しましたか？"), question, history, RULED) == RULED


@pytest.mark.parametrize(
    ("ruled", "question", "words"),
    [
        (
            "東京の場合、出張の宿泊費の上限はいくらですか?",
            "東京の場合は？",
            ["出張", "宿泊費", "上限"],
        ),
        ("INC-2024-0004は何時に復旧しましたか?", "それは何時に復旧しましたか？", ["INC-2024-0004"]),
        ("ＡＱ－３００の値段は?", "値段は？", ["AQ-300"]),
        ("有給休暇の申請方法は?", "有給休暇の申請方法は？", []),
    ],
)
def test_the_words_the_rules_carried_are_those_the_question_lacks(
    ruled: str, question: str, words: list[str]
) -> None:
    assert carried_words(ruled, question) == words


TOKYO = "東京の場合、出張の宿泊費の上限はいくらですか?"


@pytest.mark.parametrize(
    ("reply", "made"),
    [
        (
            "東京に出張したときの宿泊費の上限はいくらですか？",
            "東京に出張したときの宿泊費の上限はいくらですか？",
        ),
        ("東京の場合の日当はいくらですか？", None),  # another subject in place of the carried one
        ("東京の場合の上限はいくらですか？", None),  # 宿泊費 dropped
    ],
)
def test_a_models_rewrite_keeps_every_word_the_rules_carried(reply: str, made: str | None) -> None:
    assert parse_rewrite(reply, "東京の場合は？", TOKYO) == made
