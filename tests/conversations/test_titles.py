"""Titles that name a chat's subject: the first question's key terms by a hand-computed table
(SudachiPy, the project's tokenizer), a chat model's title with a small fake model, and a
title its owner gave kept when the first question is edited."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest

from shirabe.access.accounts import Database
from shirabe.conversations import Conversations, Titles, terms_title
from shirabe.conversations.titles import clean_title, key_terms
from shirabe.errors import GeneratorError
from shirabe.llm.protocol import Message
from shirabe.tokenizers.sudachi import SudachiTokenizer

from tests.conversations.helpers import HANA, ask, turn

TOKENIZER = SudachiTokenizer()


@pytest.mark.parametrize(
    ("question", "title"),
    [
        ("有給休暇の申請方法は？", "有給休暇 申請方法"),
        ("INC-2024-0004の原因は何ですか？", "INC-2024-0004 原因"),
        ("AQ-300のメーカー希望小売価格はいくらですか？", "AQ-300 メーカー希望小売価格"),
        ("ＡＱ－３００の重さは何kgですか？", "AQ-300 重さ"),  # NFKC; 何kg asks, names nothing
        ("では、AQ-250は？", "AQ-250"),
        ("それは何時に復旧しましたか？", "復旧"),  # pronouns left out
        ("2024年度の出張旅費の精算はどうすればいいですか", "2024年度 出張旅費 精算"),
        ("東京都に住んでいる社員の通勤手当について教えてください", "東京都 社員 通勤手当"),
        ("ERR-105が出たら？", "ERR-105"),
        ("AQ-300とAQ-250とAQ-300の違いは？", "AQ-300 AQ-250 違い"),  # each once
        ("有給休暇と慶弔休暇と育児休業と介護休業の違い", "有給休暇 慶弔休暇 育児休業 介護休業"),
        ("給与は毎月何日に支払われますか？", "給与 毎月"),  # cut where it asks
        ("こんにちは", "こんにちは"),  # no key term: the question itself
    ],
)
def test_a_title_from_the_questions_key_terms(question: str, title: str) -> None:
    assert terms_title(question, TOKENIZER.words) == title


def test_key_terms_beyond_the_title() -> None:
    terms = key_terms("有給休暇と慶弔休暇と育児休業と介護休業と出張旅費の違い", TOKENIZER.words)
    assert terms == ["有給休暇", "慶弔休暇", "育児休業", "介護休業", "出張旅費", "違い"]
    assert len(terms_title("あ" * 200, TOKENIZER.words)) == 80


@pytest.mark.parametrize(
    ("reply", "title"),
    [
        ("AQ-300の重さ", "AQ-300の重さ"),
        ("題名: 「有給休暇の申請」\n説明は以上です。", "有給休暇の申請"),
        ("**ＩＮＣ－２０２４－０００４の原因**。", "INC-2024-0004の原因"),
        ("\n\n  タイトル：出張旅費  ", "出張旅費"),
        ("「」", ""),
    ],
)
def test_clean_title(reply: str, title: str) -> None:
    assert clean_title(reply) == title


class FakeChatModel:
    """A chat model that replies with what it is given, and records what it was asked."""

    name = "fake"
    context_window = 2048
    max_tokens = 64

    def __init__(self, reply: str | Exception) -> None:
        self.reply = reply
        self.asked: list[Sequence[Message]] = []

    def count_tokens(self, text: str) -> int:
        return len(text)

    def complete(self, messages: Sequence[Message], *, max_tokens: int | None = None) -> str:
        self.asked.append(messages)
        if isinstance(self.reply, Exception):
            raise self.reply
        return self.reply

    def stream(self, messages: Sequence[Message]) -> Iterator[str]:
        yield self.complete(messages)

    def close(self) -> None:
        pass


def test_a_chat_model_titles_a_new_chat_from_its_first_question(database: Database) -> None:
    model = FakeChatModel("題名: AQ-300の重量\n")
    chats = Conversations(database, titles=Titles(lambda: TOKENIZER, lambda: model))
    made = chats.create(HANA)
    ask(chats, HANA, made.id, "AQ-300の重さは何kgですか？", "約9.2kgです。")
    ask(chats, HANA, made.id, "保証期間は？", "1年です。")
    assert chats.get(HANA, made.id).title == "AQ-300の重量"
    assert len(model.asked) == 1  # the first question only
    assert model.asked[0][-1] == {"role": "user", "content": "AQ-300の重さは何kgですか？"}
    assert all("9.2kg" not in m["content"] for m in model.asked[0])  # never the answer


@pytest.mark.parametrize("reply", [GeneratorError("model server down"), "「」"])
def test_without_a_title_from_the_model_the_key_terms_name_it(reply: str | Exception) -> None:
    titles = Titles(lambda: TOKENIZER, lambda: FakeChatModel(reply))
    assert titles("INC-2024-0004の原因は何ですか？") == "INC-2024-0004 原因"
    assert Titles(lambda: TOKENIZER)("INC-2024-0004の原因は何ですか？") == "INC-2024-0004 原因"


def test_an_edited_first_question_names_the_chat_unless_its_owner_did(
    database: Database,
) -> None:
    chats = Conversations(database, titles=Titles(lambda: TOKENIZER))
    made = chats.create(HANA)
    ask(chats, HANA, made.id, "有給休暇の申請方法は？", "ミナモ勤怠から申請する")
    assert chats.get(HANA, made.id).title == "有給休暇 申請方法"
    chats.replace_turn(HANA, made.id, 1, turn("慶弔休暇の日数は？", "5日です"))
    assert chats.get(HANA, made.id).title == "慶弔休暇 日数"
    assert chats.rename(HANA, made.id, "休暇のまとめ").named
    chats.replace_turn(HANA, made.id, 1, turn("育児休業の期間は？", "1年です"))
    assert chats.get(HANA, made.id).title == "休暇のまとめ"  # the owner's title stays
    given = chats.create(HANA, "出張")
    ask(chats, HANA, given.id, "出張旅費の精算方法は？", "…")
    assert chats.get(HANA, given.id).title == "出張"
