"""What text each chunk contributes to the dense side, and the cache keys of those texts."""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from shirabe.records import HEADING_SEPARATOR, Chunk
from shirabe.text.sentences import split_sentences

MIN_SENTENCE_CHARS = 8


def context_line(chunk: Chunk) -> str:
    """The heading path, which tells the encoder what the passage is about."""
    return HEADING_SEPARATOR.join(chunk.heading_path)


def chunk_embedding_text(chunk: Chunk) -> str:
    head = context_line(chunk)
    return f"{head}\n{chunk.text}" if head else chunk.text


def sentence_embedding_text(chunk: Chunk, sentence: str) -> str:
    head = context_line(chunk)
    return f"{head}: {sentence}" if head else sentence


def chunk_sentences(chunk: Chunk) -> list[str]:
    """Sentences of a chunk long enough to carry meaning on their own."""
    if chunk.is_summary:
        return []
    return [s for s in split_sentences(chunk.text) if len(s) >= MIN_SENTENCE_CHARS]


def sentence_units(chunk: Chunk) -> list[str]:
    """The sentences indexed on their own; empty when the chunk is a single sentence."""
    parts = chunk_sentences(chunk)
    return parts if len(parts) > 1 else []


def embedding_texts(chunk: Chunk, *, sentences: bool) -> list[str]:
    """The chunk's own text first, then (optionally) each of its sentence units."""
    texts = [chunk_embedding_text(chunk)]
    if sentences:
        texts.extend(sentence_embedding_text(chunk, s) for s in sentence_units(chunk))
    return texts


def embedding_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def lexical_text(chunk: Chunk) -> str:
    """The text the BM25 side indexes: heading path and body."""
    head = context_line(chunk)
    return f"{head}\n{chunk.text}" if head else chunk.text


def sentence_lexical_texts(chunk: Chunk) -> list[str]:
    """Each sentence unit with the heading path, for sentence-level BM25."""
    head = context_line(chunk)
    return [f"{head}\n{s}" if head else s for s in sentence_units(chunk)]


def chunk_terms(
    chunk: Chunk, tokenize: Callable[[str], list[str]]
) -> tuple[list[str], list[list[str]]]:
    """BM25 terms of the chunk and of each of its sentence units."""
    return tokenize(lexical_text(chunk)), [tokenize(t) for t in sentence_lexical_texts(chunk)]
