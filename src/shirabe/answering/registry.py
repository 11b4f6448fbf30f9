"""Chooses how answers are written, among the ``shirabe.generators`` entry points and the
chat models of ``shirabe.chat_models``. A generator's factory is given the ``answering``
section of the settings."""

from __future__ import annotations

from collections.abc import Callable

from shirabe.answering.extractive import ExtractiveGenerator
from shirabe.answering.learned import load_model
from shirabe.answering.llm import LLMGenerator
from shirabe.answering.prompting import Neighbours
from shirabe.answering.protocol import Generator
from shirabe.embedders.protocol import Embedder
from shirabe.llm.protocol import ChatModel
from shirabe.llm.registry import make_chat_model
from shirabe.plugins import Registry
from shirabe.records import Chunk
from shirabe.settings import AnswerSettings, ChatModelSettings
from shirabe.stores.protocol import Store


def store_neighbours(store: Store) -> Neighbours:
    """Looks up the chunks before and after a chunk of the same file by position."""

    def neighbours(chunk: Chunk) -> tuple[Chunk | None, Chunk | None]:
        if chunk.id is None:
            return None, None
        near = store.get_chunks([chunk.id + d for d in (-2, -1, 1, 2) if chunk.id + d > 0])
        same = [c for c in near.values() if c.source == chunk.source and not c.is_summary]
        before = [c for c in same if c.position < chunk.position]
        after = [c for c in same if c.position > chunk.position]
        return (
            max(before, key=lambda c: c.position, default=None),
            min(after, key=lambda c: c.position, default=None),
        )

    return neighbours


GeneratorFactory = Callable[[AnswerSettings, Store, Embedder], Generator]
GENERATORS: Registry[GeneratorFactory] = Registry("generators")


def make_generator(
    options: AnswerSettings, chat_model: ChatModelSettings, store: Store, embedder: Embedder
) -> Generator:
    """The answer writer ``options.generator`` names: a generator of the
    ``shirabe.generators`` family, or a chat model of ``shirabe.chat_models`` (``openai``,
    ``azure``, ``llama``, made from ``chat_model``), which then writes the answers the
    extractive stage lets through."""
    if options.generator not in GENERATORS.names():
        model = make_chat_model(options.generator, chat_model)
        if model is not None:
            return chat(options, store, embedder, model)
    return GENERATORS.load(options.generator)(options, store, embedder)


def extractive(options: AnswerSettings, store: Store, embedder: Embedder) -> ExtractiveGenerator:
    """Quoted sentences with citations, or a refusal when the evidence is too weak (the
    ``extractive`` entry point, and the gate of every chat model)."""
    return ExtractiveGenerator(
        store=store,
        embedder_name=embedder.name,
        max_chars=options.max_chars,
        model=load_model(options.model),
        answer_threshold=options.threshold,
    )


def chat(options: AnswerSettings, store: Store, embedder: Embedder, model: ChatModel) -> Generator:
    """``model`` gated by the extractive answerer's refusal test, which also answers when the
    model's reply does not hold up."""
    gate = extractive(options, store, embedder)
    return LLMGenerator(
        model,
        gate=gate,
        fallback=gate,
        context_tokens=options.context_tokens,
        neighbours=store_neighbours(store) if options.neighbours else None,
    )
