"""The terms of chunks and of their sentence rows, read in SQL from the chunks' stored terms.

A chunk keeps its terms (``tokens``, space-separated) and its sentences' terms
(``sentence_tokens``, a JSON list of space-separated terms). Its sentence rows are its
sentences, or the chunk itself as its one sentence (``own_sentence``: when a sentence had no
vector at ingest, as in the embedded store). Everything BM25 needs at sentence level, and the
statistics at both levels, is counted from these.
"""

from __future__ import annotations

SENTENCE_ROWS = (
    "CROSS JOIN LATERAL jsonb_array_elements_text(CASE WHEN c.own_sentence "
    "THEN jsonb_build_array(c.tokens) ELSE c.sentence_tokens END) WITH ORDINALITY e(text, ord)"
)
"""Joined to ``chunks c``: one row ``e`` per sentence row of each chunk (``e.text``, its terms;
``e.ord`` from 1)."""


def chunk_terms(where: str) -> str:
    """A subquery of (chunk_id, source_id, term): each term of each chunk of ``chunks c``
    that ``where`` keeps, once."""
    return (
        "(SELECT c.id AS chunk_id, c.source_id, t.term FROM chunks c CROSS JOIN LATERAL "
        "(SELECT DISTINCT unnest(string_to_array(c.tokens, ' ')) AS term) t "
        f"WHERE {where})"
    )


def sentence_terms(where: str) -> str:
    """A subquery of (chunk_id, source_id, ord, term): each term of each sentence row of the
    chunks ``where`` keeps, once per row."""
    return (
        f"(SELECT c.id AS chunk_id, c.source_id, e.ord, t.term FROM chunks c {SENTENCE_ROWS} "
        "CROSS JOIN LATERAL (SELECT DISTINCT unnest(string_to_array(e.text, ' ')) AS term) t "
        f"WHERE {where})"
    )


def level_terms(level: str, where: str) -> str:
    """:func:`chunk_terms` or :func:`sentence_terms` by level (``chunk`` or ``sentence``)."""
    return chunk_terms(where) if level == "chunk" else sentence_terms(where)
