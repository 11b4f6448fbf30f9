"""How the OpenAI-compatible endpoint reads a conversation: the earlier user messages with the
answers that followed them, the lines it added to its own replies taken off."""

from __future__ import annotations

from typing import Any

import pytest

from shirabe.records import Turn
from shirabe.server.errors import ApiError
from shirabe.server.routes.openai import ChatRequest, answer_of


def request(*messages: tuple[str, Any]) -> ChatRequest:
    return ChatRequest.model_validate(
        {"model": "shirabe", "messages": [{"role": r, "content": c} for r, c in messages]}
    )


def test_earlier_questions_pair_with_the_answers_after_them() -> None:
    chat = request(
        ("system", "あなたは社内アシスタントです"),
        ("user", "INC-2024-0004は？"),
        ("assistant", "証明書の期限切れです。[1]\n\n出典:\n- [1] 障害記録.md"),
        ("user", "では、INC-2024-0005は？"),
        ("user", [{"type": "text", "text": "それは何時に"}, {"type": "text", "text": "復旧？"}]),
        ("assistant", "12:10です。"),
        ("user", "担当者は？"),
    )
    assert chat.question() == "担当者は？"
    assert chat.turns() == [
        Turn("INC-2024-0004は？", "証明書の期限切れです。[1]"),
        Turn("では、INC-2024-0005は？", ""),
        Turn("それは何時に復旧？", "12:10です。"),
    ]


@pytest.mark.parametrize(
    ("reply", "answer"),
    [
        ("回答です。[1]\n\n検索した質問: AQ-300の重さは？\n\n出典:\n- [1] a.md", "回答です。[1]"),
        (
            "一つ目\n\n---\n確認の結果、次の回答に置き換えます:\n\n二つ目[1]\n\n出典:\n- [1] a",
            "二つ目[1]",
        ),
        (
            "ドキュメントに記載がありません\n\n理由: 「食堂」についての記載が見つかりません",
            "ドキュメントに記載がありません",
        ),
        ("ほかのアシスタントの返事", "ほかのアシスタントの返事"),
    ],
)
def test_a_reply_read_back_is_its_answer(reply: str, answer: str) -> None:
    assert answer_of(reply) == answer


@pytest.mark.parametrize(
    "messages",
    [
        [("user", "質問"), ("assistant", "回答")],
        [("system", "指示だけ")],
        [("user", "   ")],
        [("user", "長" * 2001)],
    ],
)
def test_the_last_message_must_be_a_question_of_a_fair_length(
    messages: list[tuple[str, Any]],
) -> None:
    with pytest.raises(ApiError) as raised:
        request(*messages).question()
    assert raised.value.status_code == 422
