"""What text each chunk contributes to the dense side, and the cache keys of those texts."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from shirabe.embedders.protocol import Vector
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


@dataclass(frozen=True, slots=True)
class VectorPlan:
    """How a chunk gets its vectors: ``texts`` are embedded (their keys are ``keys``, the
    chunk's own first); when ``pooled``, the chunk's own vector is not embedded but pooled
    from its sentences' vectors, weighted by their lengths. With ``rewrite``, the last text is
    the model's rewrite of the chunk's broken page, a unit of its own, not pooled."""

    texts: tuple[str, ...]
    keys: tuple[str, ...]
    pooled: bool
    rewrite: bool = False

    @property
    def embedded(self) -> dict[str, str]:
        """The texts the model embeds, by key (all but a pooled chunk's own)."""
        skip = 1 if self.pooled else 0
        return dict(zip(self.keys[skip:], self.texts[skip:], strict=True))

    @property
    def sentence_keys(self) -> tuple[str, ...]:
        """The keys of the chunk's sentence units (what a pooled vector is made of)."""
        return self.keys[1 : len(self.keys) - self.rewrite]

    @property
    def weights(self) -> list[int]:
        sentences = self.texts[1 : len(self.texts) - self.rewrite]
        return [len(t) for t in sentences] if self.pooled else []


def vector_plan(chunk: Chunk, *, sentences: bool, pooled: bool) -> VectorPlan:
    """The chunk's vector texts and their keys. Pooling the chunk's vector from its sentence
    vectors (the model mean-pools its tokens too) saves embedding the chunk's text a second
    time, which is about half of all embedding; a chunk of one sentence embeds its text."""
    texts = embedding_texts(chunk, sentences=sentences)
    keys = [embedding_key(t) for t in texts]
    if not (pooled and len(texts) > 1):
        return VectorPlan(tuple(texts), tuple(keys), pooled=False)
    return VectorPlan(tuple(texts), (pooled_key(keys[1:]), *keys[1:]), pooled=True)


def rewrite_text(chunk: Chunk, rewrite: str) -> str:
    """A page rewrite as indexed for a chunk: under the chunk's headings."""
    head = context_line(chunk)
    return f"{head}\n{rewrite}" if head else rewrite


def with_rewrite(plan: VectorPlan, chunk: Chunk, rewrite: str) -> VectorPlan:
    """``plan`` with one more unit, the page's rewrite; a chunk without sentence units gets
    its own vector as its first unit (it was its own single sentence)."""
    if not rewrite:
        return plan
    text = rewrite_text(chunk, rewrite)
    texts, keys = plan.texts, plan.keys
    if len(keys) == 1:
        texts, keys = texts * 2, keys * 2
    return VectorPlan((*texts, text), (*keys, embedding_key(text)), plan.pooled, rewrite=True)


def pooled_key(sentence_keys: Sequence[str]) -> str:
    """The cache key of a vector pooled from the vectors of these keys."""
    return embedding_key("\x00".join(["pooled", *sentence_keys]))


def own_vector_keys(chunk: Chunk) -> tuple[str, ...]:
    """Where the chunk's own vector may be cached, whichever way it was made: pooled from
    its sentences (when it has several) or embedded from its text. Readers take the first
    key found, so an index built either way (or partly each way) works."""
    text_key = embedding_key(chunk_embedding_text(chunk))
    units = sentence_units(chunk)
    if not units:
        return (text_key,)
    keys = [embedding_key(sentence_embedding_text(chunk, s)) for s in units]
    return (pooled_key(keys), text_key)


def own_vectors(
    chunks: Sequence[Chunk], lookup: Callable[[Sequence[str]], Mapping[str, Vector]]
) -> list[Vector | None]:
    """Each chunk's own vector from the embedding cache (``lookup``), or None if not cached."""
    candidates = [own_vector_keys(c) for c in chunks]
    found = lookup([k for keys in candidates for k in keys])
    return [next((found[k] for k in keys if k in found), None) for keys in candidates]


def pool(vectors: Sequence[Vector], weights: Sequence[int]) -> Vector:
    """The unit-length, weight-averaged vector of ``vectors``."""
    matrix = np.vstack(vectors).astype(np.float32)
    mean = np.asarray(weights, dtype=np.float32) @ matrix
    norm = float(np.linalg.norm(mean))
    out: Vector = mean / norm if norm > 0 else mean
    return out


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
