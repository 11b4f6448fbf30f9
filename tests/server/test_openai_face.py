"""The OpenAI-compatible endpoint of a running ``shirabe serve``, used through the ``openai``
client as a chat front-end uses it: the model list, answers with their sources, streaming,
follow-ups, shirabe's tokens and what each user may read."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass

import openai
import pytest

from tests.server.served import sample_server

pytestmark = pytest.mark.slow

LEAVE = "有給休暇の申請方法は？"


@dataclass(frozen=True)
class Running:
    url: str
    clients: dict[str, openai.OpenAI]

    def client(self, user: str) -> openai.OpenAI:
        return self.clients[user]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    with sample_server(tmp_path_factory.mktemp("openai")) as served, ExitStack() as stack:
        clients = {
            user: stack.enter_context(
                openai.OpenAI(base_url=f"{served.url}/v1", api_key=token, timeout=120)
            )
            for user, token in served.tokens.items()
        }
        yield Running(served.url, clients)


def ask(client: openai.OpenAI, *messages: str) -> str:
    """The reply to the last of ``messages`` (user and assistant in turn)."""
    roles = ("user", "assistant")
    conversation = [{"role": roles[i % 2], "content": text} for i, text in enumerate(messages)]
    reply = client.chat.completions.create(model="shirabe", messages=conversation)  # type: ignore[arg-type]
    assert reply.choices[0].finish_reason == "stop"
    content = reply.choices[0].message.content
    assert content is not None
    return content


def test_the_model_list_names_shirabe(server: Running) -> None:
    assert [m.id for m in server.client("hr_user").models.list()] == ["shirabe"]


def test_an_answer_cites_its_sources_and_each_user_reads_only_their_documents(
    server: Running,
) -> None:
    answer = ask(server.client("hr_user"), LEAVE)
    body, sources = answer.split("\n\n出典:\n")
    assert "[1]" in body and "記載がありません" not in body
    assert "- [1] 人事/休暇規程.md" in sources

    other = ask(server.client("sales_user"), LEAVE)  # answered from what sales may read
    # nothing of the hr rule book (its 3営業日前 rule, its path); the public FAQ may name it
    assert "3営業日前" not in other and "人事/" not in other
    assert "\n\n出典:\n- [1] 総務/" in other


def test_a_stream_sends_the_same_answer_in_chunks(server: Running) -> None:
    client = server.client("hr_user")
    question = "INC-2024-0004はどんな障害ですか"
    chunks = list(
        client.chat.completions.create(
            model="shirabe", messages=[{"role": "user", "content": question}], stream=True
        )
    )
    assert chunks[0].choices[0].delta.role == "assistant"
    assert chunks[-1].choices[0].finish_reason == "stop"
    streamed = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert streamed == ask(client, question)
    assert "証明書" in streamed and "情報システム/" in streamed


def test_a_follow_up_is_answered_in_its_conversation(server: Running) -> None:
    client = server.client("hr_user")
    question = "INC-2024-0004はどんな障害ですか"
    follow_up = ask(client, question, ask(client, question), "それは何時に復旧しましたか？")
    assert "12:10" in follow_up
    assert "検索した質問: INC-2024-0004" in follow_up
    sources = follow_up.split("\n\n出典:\n")[1]
    assert "INC-2024-0004" in sources
    assert re.findall(r"INC-\d{4}-\d{4}", sources) == ["INC-2024-0004"] * sources.count("INC-")


def test_only_shirabe_tokens_and_the_shirabe_model_are_accepted(server: Running) -> None:
    with openai.OpenAI(base_url=f"{server.url}/v1", api_key="sk-x", timeout=60) as stranger:
        with pytest.raises(openai.AuthenticationError):
            stranger.models.list()
        with pytest.raises(openai.AuthenticationError):
            ask(stranger, LEAVE)
    with pytest.raises(openai.NotFoundError, match="gpt-4o") as unknown:
        server.client("hr_user").chat.completions.create(
            model="gpt-4o", messages=[{"role": "user", "content": LEAVE}]
        )
    assert unknown.value.code == "model_not_found"
    with pytest.raises(openai.UnprocessableEntityError, match="last message"):
        server.client("hr_user").chat.completions.create(
            model="shirabe", messages=[{"role": "system", "content": "あなたは有能です"}]
        )
