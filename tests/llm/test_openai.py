"""The OpenAI-compatible answerer against scripted HTTP responses (no server needed)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from pathlib import Path

import httpx
import numpy as np
import pytest

from shirabe.answering.llm import LLMGenerator, _elsewhere, _states
from shirabe.answering.refusal import REFUSAL_TEXT, refusal
from shirabe.answering.registry import make_generator
from shirabe.embedders.protocol import Matrix, Vector
from shirabe.errors import GeneratorError
from shirabe.llm.openai import (
    LLMConfig,
    OpenAIChat,
    delta_text,
    sse_data,
)
from shirabe.llm.registry import azure_config, llm_config
from shirabe.records import (
    Answer,
    Chunk,
    Citation,
    CitationsEvent,
    DoneEvent,
    ErrorEvent,
    Hit,
    HitsEvent,
    RefusalCode,
    TokenEvent,
)
from shirabe.retrieval.query import Query
from shirabe.settings import ChatModelSettings, Settings
from shirabe.stores.embedded.store import EmbeddedStore

KEY = "sk-test-0123456789abcdef"
BASE = "http://model.test/v1"


class StubTokenizer:
    signature = "stub"

    def tokenize(self, text: str) -> list[str]:
        return list(text)

    def words(self, text: str) -> list[tuple[str, str, tuple[str, ...]]]:
        return []

    def synonym_groups(self, text: str) -> list[tuple[str, tuple[int, ...]]]:
        return []

    def synonyms(self, groups: Sequence[int]) -> list[str]:
        return []


class StubEmbedder:
    name = "stub"
    dim = 2

    def embed_passages(self, texts: Sequence[str]) -> Matrix:
        return np.zeros((len(texts), 2), dtype=np.float32)

    def embed_query(self, text: str) -> Vector:
        return np.zeros(2, dtype=np.float32)


class Gate:
    def __init__(self, refuse: bool) -> None:
        self.refuse = refuse
        self.asked = 0

    def why_not(self, query: Query, hits: list[Hit]) -> tuple[RefusalCode, str] | None:
        self.asked += 1
        return ("weak", "質問に十分近い記載が見つかりません") if self.refuse else None


def query(text: str = "出張の日当はいくら？") -> Query:
    return Query(text, tokenizer=StubTokenizer(), embedder=StubEmbedder())


HITS = [
    Hit(Chunk(text="国内出張の日当は3000円。", source="規程.md", id=11, locator={"page": 2}), 1.0),
    Hit(Chunk(text="海外出張の日当は50ドル。", source="規程.md", id=12, locator={"page": 3}), 0.5),
]

Handler = Callable[[httpx.Request], httpx.Response]


class Quoting:
    """A fallback answerer: quotes the first passage, or refuses when told to."""

    name = "extractive"
    chat_model = None

    def __init__(self, refuse: bool = False, short: str | None = None) -> None:
        self.refuse = refuse
        self.short = short

    def close(self) -> None:
        pass

    def generate(self, query: Query, hits: list[Hit]) -> Answer:
        if self.refuse:
            return refusal(query.text, hits, ("kind", "金額を示す記載が見つかりません"))
        citation = Citation.of(1, hits[0])
        text = "\n".join(filter(None, [self.short, hits[0].chunk.text + "[1]"]))
        return Answer(query.text, text, [citation], False, hits, short=self.short)


def generator(
    handler: Handler,
    *,
    gate: Gate | None = None,
    fallback: Quoting | None = None,
    model: str | None = "tiny",
    retries: int = 2,
    timeout: float = 60.0,
    temperature: float = 0.0,
    max_tokens: int = 512,
) -> LLMGenerator:
    config = LLMConfig(
        base_url=BASE,
        model=model,
        backoff=0.0,
        retries=retries,
        timeout=timeout,
        temperature=temperature,
        max_tokens=max_tokens,
    )
    chat = OpenAIChat(config, transport=httpx.MockTransport(handler))
    return LLMGenerator(chat, gate=gate or Gate(False), fallback=fallback)


def completion(text: str) -> httpx.Response:
    return httpx.Response(200, json={"choices": [{"message": {"content": text}}]})


def replying(text: str) -> Handler:
    """A server that answers every request with ``text``."""
    body = completion(text)
    return lambda request: body


def sse(*pieces: str) -> httpx.Response:
    lines = [": keep-alive", ""]
    lines.append("data: " + json.dumps({"choices": [{"delta": {"role": "assistant"}}]}))
    for piece in pieces:
        lines += ["", "data: " + json.dumps({"choices": [{"delta": {"content": piece}}]})]
    lines += ["", "data: " + json.dumps({"choices": [{"delta": {}, "finish_reason": "stop"}]})]
    lines += ["", "data: [DONE]", ""]
    return httpx.Response(200, text="\n".join(lines), headers={"content-type": "text/event-stream"})


def test_generate_sends_a_grounded_request_and_maps_citations(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SHIRABE_LLM_API_KEY", KEY)
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return completion("海外は50ドル[2]、国内は3000円[1]です。")

    answer = generator(handler, temperature=0.2, max_tokens=99).generate(query(), HITS)
    assert len(seen) == 1
    request = seen[0]
    assert str(request.url) == f"{BASE}/chat/completions"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    body = json.loads(request.content)
    assert body["model"] == "tiny"
    assert body["stream"] is False
    assert (body["temperature"], body["max_tokens"]) == (0.2, 99)
    assert body["messages"][0]["role"] == "system"
    assert '<passage id="2" source="規程.md" location="p.3">' in body["messages"][1]["content"]
    assert answer.mode == "llm:tiny"
    assert not answer.refused
    assert answer.text == (
        "海外は50ドル[1]、国内は3000円[2]です。\n"
        "「海外出張の日当は50ドル。」[1]\n"
        "「国内出張の日当は3000円。」[2]"
    )
    assert [(c.number, c.chunk_id, c.locator) for c in answer.citations] == [
        (1, 12, {"page": 3}),
        (2, 11, {"page": 2}),
    ]
    assert answer.hits == HITS
    assert answer.timings["llm"] >= 0


def test_no_key_no_authorization_header(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SHIRABE_LLM_API_KEY", raising=False)
    headers: list[httpx.Headers] = []

    def handler(request: httpx.Request) -> httpx.Response:
        headers.append(request.headers)
        return completion("国内は3000円[1]。")

    generator(handler).generate(query(), HITS)
    assert "authorization" not in headers[0]


def test_refusal_gate_skips_the_model() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise AssertionError("the model must not be called")

    gate = Gate(True)
    answer = generator(handler, gate=gate).generate(query(), HITS)
    assert (answer.refused, answer.text, answer.citations) == (True, REFUSAL_TEXT, [])
    assert gate.asked == 1
    assert generator(handler).generate(query(), []).refused  # nothing retrieved
    events = list(generator(handler, gate=Gate(True)).stream(query(), HITS))
    assert [e.kind for e in events] == ["hits", "token", "citations", "done"]


def test_the_models_refusal_has_no_citations() -> None:
    answer = generator(lambda r: completion(f"{REFUSAL_TEXT}[1]。")).generate(query(), HITS)
    assert (answer.refused, answer.text, answer.citations) == (True, REFUSAL_TEXT, [])


def test_an_empty_answer_refuses(caplog: pytest.LogCaptureFixture) -> None:
    answer = generator(lambda r: completion("\n ")).generate(query(), HITS)
    assert (answer.refused, answer.text, answer.citations) == (True, REFUSAL_TEXT, [])
    assert "no answer text" in caplog.text


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        (f"{REFUSAL_TEXT}。", "モデルが文書に記載がないと判断しました"),
        ("\n ", "モデルが回答を返しませんでした"),
        ("社員食堂は11時から営業します[1]。", "回答の内容が資料の記載で裏付けられません"),
        ("日当は規程で定められています[1]。", "回答に金額（いくら）がありません"),
        (
            "この質問の答えは以下の通りです。\n\nこの質問の答えは以下の通りです。",
            "モデルの回答に内容がありません",
        ),
    ],
)
def test_a_reply_that_does_not_hold_up_gives_the_fallbacks_answer(reply: str, why: str) -> None:
    """The model declines, says nothing, cites what the passage does not say, or leaves out
    the amount asked: the quoted passage answers, and a refusal keeps the model's reason when
    the fallback refuses too."""
    answered = generator(lambda r: completion(reply), fallback=Quoting()).generate(query(), HITS)
    assert (answered.refused, answered.mode) == (False, "extractive")
    assert answered.text == "国内出張の日当は3000円。[1]"
    assert [c.chunk_id for c in answered.citations] == [11]
    assert "llm" in answered.timings
    events = list(generator(lambda r: sse(reply), fallback=Quoting()).stream(query(), HITS))
    done = events[-1]
    assert isinstance(done, DoneEvent) and done.answer.text == answered.text
    refused = generator(lambda r: completion(reply), fallback=Quoting(refuse=True))
    answer = refused.generate(query(), HITS)
    assert (answer.refused, answer.text, answer.refusal_reason) == (True, REFUSAL_TEXT, why)


def test_a_reply_that_holds_up_is_the_answer() -> None:
    reply = completion("国内出張の日当は3,000円です[1]。")
    for fallback in (Quoting(), Quoting(short="3000円です。")):
        answer = generator(lambda r: reply, fallback=fallback).generate(query(), HITS)
        assert (answer.mode, answer.text) == ("llm:tiny", "国内出張の日当は3,000円です[1]。")


@pytest.mark.parametrize("reply", ["日当は50ドルです[2]。", "日当は13000円です[1]。"])
def test_a_reply_without_the_figure_the_rules_read_gives_the_quoted_answer(reply: str) -> None:
    """The passage's row says 3000円 for the question; a reply giving another figure (one
    from a neighbouring passage, or one made up) is replaced by the quoted answer."""
    fallback = Quoting(short="3000円です。")
    answer = generator(lambda r: completion(reply), fallback=fallback).generate(query(), HITS)
    assert (answer.mode, answer.text) == ("extractive", "3000円です。\n国内出張の日当は3000円。[1]")
    quoted = generator(lambda r: completion(reply), fallback=Quoting()).generate(query(), HITS)
    assert (quoted.mode, quoted.refusal_code, quoted.text) == (
        "extractive",
        None,
        "国内出張の日当は3000円。[1]",
    )


def test_a_yes_where_the_quoted_sentence_says_no_gives_the_quoted_answer() -> None:
    hits = [Hit(Chunk(text="未使用分は翌年度に繰り越さない。", source="休暇.md", id=21), 1.0)]
    asked = query("使わなかった分は翌年度に繰り越せますか？")
    reply = completion("はい、翌年度に繰り越せます[1]。")
    answer = generator(lambda r: reply, fallback=Quoting()).generate(asked, hits)
    assert (answer.mode, answer.text) == ("extractive", "未使用分は翌年度に繰り越さない。[1]")
    denied = completion("いいえ、繰り越さない[1]。")
    kept = generator(lambda r: denied, fallback=Quoting()).generate(asked, hits)
    assert (kept.mode, kept.text) == ("llm:tiny", "いいえ、繰り越さない[1]。")


@pytest.mark.parametrize(
    ("reply", "quoted", "elsewhere"),
    [
        ("通知は60日前から届きます[1]。", "期限の7日前から通知が届きます。[1]", True),
        (
            "通知は7日前から届きます[1]。",
            "有効期限は90日で、期限の7日前から通知が届きます。[1]",
            False,
        ),
        ("有効期限は90日、通知は60日前です[1]。", "有効期限は90日です。[1]", False),  # one is
        ("通知はメールで届きます[1]。", "期限の7日前から通知が届きます。[1]", False),  # none
        ("通知は60日前です[1]。", "総務部へ連絡してください。[1]", False),  # nothing to compare
        ("3,000円です[1]。", "国内は3000円。[1]", False),
    ],
)
def test_whether_a_reply_gives_other_figures_than_the_quoted_sentences(
    reply: str, quoted: str, elsewhere: bool
) -> None:
    assert _elsewhere(reply, quoted) is elsewhere


def test_invented_citation_numbers_are_dropped() -> None:
    answer = generator(lambda r: completion("国内は3000円[1][4]。")).generate(query(), HITS)
    assert answer.text.splitlines()[0] == "国内は3000円[1]。"
    assert [c.chunk_id for c in answer.citations] == [11]


def test_model_is_discovered_when_not_configured() -> None:
    paths: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        paths.append(request.url.path)
        if request.url.path.endswith("/models"):
            return httpx.Response(200, json={"data": [{"id": "served-model"}]})
        assert json.loads(request.content)["model"] == "served-model"
        return completion("国内は3000円[1]。")

    gen = generator(handler, model=None)
    assert gen.generate(query(), HITS).mode == "llm:served-model"
    gen.generate(query(), HITS)
    assert paths == ["/v1/models", "/v1/chat/completions", "/v1/chat/completions"]


@pytest.mark.parametrize("status", [429, 500, 503])
def test_retries_on_rate_limits_and_server_errors(status: int) -> None:
    calls: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        if len(calls) < 3:
            return httpx.Response(status, headers={"retry-after": "0"}, json={"error": "busy"})
        return completion("国内は3000円[1]。")

    assert (
        generator(handler, retries=2).generate(query(), HITS).text.startswith("国内は3000円[1]。\n")
    )
    assert len(calls) == 3
    calls.clear()
    with pytest.raises(GeneratorError, match=f"model server at {BASE}: HTTP {status}"):
        generator(handler, retries=1).generate(query(), HITS)
    assert len(calls) == 2


def test_connection_errors_are_retried_then_reported() -> None:
    calls: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        raise httpx.ConnectError("refused", request=request)

    with pytest.raises(GeneratorError, match=r"cannot connect.*is the server running"):
        generator(handler, retries=2).generate(query(), HITS)
    assert len(calls) == 3


def test_client_errors_are_not_retried_and_never_show_the_key(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("SHIRABE_LLM_API_KEY", KEY)
    calls: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        return httpx.Response(401, json={"error": {"message": f"Incorrect API key: {KEY}"}})

    gen = generator(handler)
    with caplog.at_level(logging.DEBUG), pytest.raises(GeneratorError) as info:
        gen.generate(query(), HITS)
    assert len(calls) == 1
    message = str(info.value)
    assert "HTTP 401" in message
    assert BASE in message
    assert KEY not in message
    assert KEY not in repr(gen)
    assert KEY not in caplog.text


def test_timeouts_are_reported() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("slow", request=request)

    with pytest.raises(GeneratorError, match=r"no response within 0\.5 s"):
        generator(handler, timeout=0.5).generate(query(), HITS)
    events = list(generator(handler, timeout=0.5).stream(query(), HITS))
    assert [e.kind for e in events] == ["hits", "error"]
    assert isinstance(events[-1], ErrorEvent)
    assert "no response within" in events[-1].message


def test_stream_yields_tokens_then_citations_then_the_answer() -> None:
    bodies: list[dict[str, object]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        return sse("海外は", "50ドル[", "2]です。", "国内は", "3000円[1", "]です。")

    events = list(generator(handler).stream(query(), HITS))
    assert bodies[0]["stream"] is True
    assert isinstance(events[0], HitsEvent)
    assert events[0].hits == HITS
    tokens = [e.text for e in events if isinstance(e, TokenEvent)]
    # shown a sentence at a time, each once checked against the passages
    assert tokens == [
        "海外は50ドル[1]です。",
        "国内は3000円[2]です。",
        "\n「海外出張の日当は50ドル。」[1]\n「国内出張の日当は3000円。」[2]",
    ]
    assert [e.kind for e in events[-2:]] == ["citations", "done"]
    done = events[-1]
    assert isinstance(done, DoneEvent)
    assert done.answer.text == "".join(tokens)
    cited = events[-2]
    assert isinstance(cited, CitationsEvent)
    assert [c.chunk_id for c in cited.citations] == [12, 11]
    assert done.answer.timings["first_token"] <= done.answer.timings["llm"]


def test_stream_error_payload_ends_the_stream() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        text = (
            'data: {"choices":[{"delta":{"content":"国内"}}]}\n\n'
            'data: {"error":{"message":"oom"}}\n'
        )
        return httpx.Response(200, text=text)

    events = list(generator(handler).stream(query(), HITS))
    assert [e.kind for e in events] == ["hits", "error"]  # 国内… was no whole sentence yet
    assert isinstance(events[-1], ErrorEvent)
    assert "oom" in events[-1].message


def test_sse_parsing() -> None:
    lines = [
        "event: message",
        'data: {"choices":[{"delta":{"content":"あ"}}]}',
        "",
        "data:   ",
        'data:{"choices":[]}',
        "data: [DONE]",
        'data: {"choices":[{"delta":{"content":"後"}}]}',
    ]
    assert [delta_text(p) for p in sse_data(lines)] == ["あ", ""]
    with pytest.raises(GeneratorError, match="unreadable"):
        list(sse_data(["data: {oops"]))


def test_settings_choose_the_generator(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = EmbeddedStore(tmp_path / "index")  # the generators keep it; none is searched here
    default = Settings()
    extractive = make_generator(default.answering, default.chat_model, store, StubEmbedder())
    assert extractive.name == "extractive"
    preset = llm_config(ChatModelSettings(preset="ollama"))
    assert preset.base_url == "http://localhost:11434/v1"
    explicit = llm_config(
        ChatModelSettings(preset="ollama", base_url="http://gpu:9000/v1", model="m")
    )
    assert (explicit.base_url, explicit.model) == ("http://gpu:9000/v1", "m")
    with pytest.raises(ValueError, match="SHIRABE_CHAT_MODEL__PRESET"):
        llm_config(ChatModelSettings())
    monkeypatch.setenv("SHIRABE_ANSWERING__GENERATOR", "openai")
    monkeypatch.setenv("SHIRABE_CHAT_MODEL__PRESET", "lmstudio")
    monkeypatch.setenv("SHIRABE_CHAT_MODEL__TIMEOUT", "5")
    settings = Settings()
    assert settings.answering.generator == "openai"
    assert settings.chat_model.timeout == 5
    built = make_generator(
        settings.answering, settings.chat_model, store=store, embedder=StubEmbedder()
    )
    assert isinstance(built, LLMGenerator) and isinstance(built.chat, OpenAIChat)
    assert built.chat.base_url == "http://localhost:1234/v1"
    store.close()


def test_azure_settings_need_endpoint_and_deployment() -> None:
    with pytest.raises(ValueError, match="SHIRABE_CHAT_MODEL__AZURE_ENDPOINT"):
        azure_config(ChatModelSettings(azure_deployment="gpt4o"))
    config = azure_config(
        ChatModelSettings(
            azure_endpoint="https://acme.openai.azure.com/",
            azure_deployment="gpt4o-ja",
            azure_api_version="2024-06-01",
        )
    )
    assert config.base_url == "https://acme.openai.azure.com/openai/deployments/gpt4o-ja"
    assert (config.model, config.api_version) == ("gpt4o-ja", "2024-06-01")


def test_azure_requests_carry_api_version_and_api_key_header(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", KEY)
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return completion("国内は3000円です[1]。")

    config = LLMConfig(
        base_url="https://acme.openai.azure.com/openai/deployments/gpt4o-ja",
        model="gpt4o-ja",
        api_key_env="AZURE_OPENAI_API_KEY",
        api_version="2024-10-21",
    )
    chat = OpenAIChat(config, transport=httpx.MockTransport(handler))
    answer = LLMGenerator(chat, gate=Gate(False)).generate(query(), HITS)
    assert answer.text.splitlines()[0] == "国内は3000円です[1]。"
    (request,) = seen
    assert request.url.path == "/openai/deployments/gpt4o-ja/chat/completions"
    assert request.url.params["api-version"] == "2024-10-21"
    assert request.headers["api-key"] == KEY
    assert "authorization" not in request.headers


@pytest.mark.parametrize(
    ("reply", "short", "states"),
    [
        ("本体は約9.2kgです[1]。", "約9.2kgです。", True),
        ("本体は約20キロあります[1]。", "約9.2kgです。", False),
        ("本体は19.2kgです。", "9.2kgです。", False),  # a number is matched whole
        ("駐車場は3台あります[2]。", "2台です。", False),  # a citation marker is no figure
        ("6,600円です。", "6600円です。", True),
        ("1万5千円です。", "1万5千円です。", True),  # written with 万: not judged
    ],
)
def test_whether_a_reply_gives_the_amount_read_off_the_passage(
    reply: str, short: str, states: bool
) -> None:
    assert _states(reply, short) is states


def test_a_reply_read_off_another_records_row_gives_the_quoted_answer() -> None:
    """The question names INC-2025-0005; the quoted answer (the fallback's, from the first
    hit) is its row, while the reply and the row it rests on are INC-2024-0008's."""
    rows = "| 管理番号 | 対応状況 |\n|---|---|\n"
    hits = [
        Hit(Chunk(text=rows + "| INC-2025-0005 | 対応中 |", source="障害.csv", id=31), 1.0),
        Hit(Chunk(text=rows + "| INC-2024-0008 | 完了 |", source="障害.csv", id=32), 0.9),
    ]
    asked = query("INC-2025-0005の対応状況は？")
    other = completion("対応状況は完了です[2]。")
    answer = generator(lambda r: other, fallback=Quoting()).generate(asked, hits)
    assert (answer.mode, answer.text) == ("extractive", hits[0].chunk.text + "[1]")
    right = completion("対応中です[1]。")
    kept = generator(lambda r: right, fallback=Quoting()).generate(asked, hits)
    assert kept.mode == "llm:tiny"
    assert kept.text == "対応中です[1]。\n「INC-2025-0005: 対応中」[1]"


def test_a_reply_stating_another_sentence_gives_the_quoted_answer() -> None:
    """The quoted answer (the first hit) names the fishery that declined in the 20th century;
    the reply states the second passage's sentence about shellfish, which names none of the
    question's terms. A bare name is not judged (it may come from the title)."""
    declined = "遠洋漁業が盛んであったが、20世紀に入り衰退した。"
    hits = [
        Hit(Chunk(text=declined, source="蘭.md", id=41), 1.0),
        Hit(Chunk(text="沿岸ではムール貝、カキが中心である。", source="蘭.md", id=42), 0.9),
    ]
    asked = query("20世紀に入り衰退した漁業は？")
    other = completion("ムール貝、カキが中心である[2]。")
    answer = generator(lambda r: other, fallback=Quoting()).generate(asked, hits)
    assert (answer.mode, answer.text) == ("extractive", hits[0].chunk.text + "[1]")
    for reply in ("遠洋漁業です[1]。", "遠洋漁業[1]", "ムール貝[2]", f"{declined[:-1]}[1]。"):
        kept = generator(replying(reply), fallback=Quoting()).generate(asked, hits)
        assert kept.mode == "llm:tiny", reply
