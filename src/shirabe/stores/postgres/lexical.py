"""BM25 in SQL: postings tables (term, chunk, term frequency, row length) at chunk and at
sentence level, with per-level statistics kept exact in the writers' transactions, and the
scoring query over them."""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from shirabe.records import Filters, ScoredId
from shirabe.stores.bm25 import idf
from shirabe.stores.postgres import readers
from shirabe.stores.postgres.filters import filter_sql
from shirabe.stores.protocol import Level

LEVEL_TABLES: tuple[tuple[Level, str], ...] = (
    ("chunk", "postings"),
    ("sentence", "sentence_postings"),
)

PostedChunk = tuple[int, Sequence[str], Sequence[Sequence[str]]]
"""A chunk's id, its terms, and the terms of each of its sentence rows."""


def drop_postings(conn: Any, ids: Sequence[int]) -> None:
    """Delete the postings of chunks ``ids`` and take them out of the term statistics."""
    if not ids:
        return
    for level, table in LEVEL_TABLES:
        conn.execute(
            f"""
            UPDATE term_stats t SET df = t.df - d.n
            FROM (SELECT term, count(*) AS n FROM {table} WHERE chunk_id = ANY(%s)
                  GROUP BY term) d
            WHERE t.level = %s AND t.term = d.term
            """,
            (list(ids), level),
        )
        conn.execute(f"DELETE FROM {table} WHERE chunk_id = ANY(%s)", (list(ids),))


def adjust_stats(conn: Any, *, chunk: tuple[int, int], sentence: tuple[int, int]) -> None:
    """Add (rows, total length) to the statistics of each level."""
    for level, (rows, total) in (("chunk", chunk), ("sentence", sentence)):
        if rows or total:
            conn.execute(
                "UPDATE level_stats SET rows = rows + %s, total_length = total_length + %s "
                "WHERE level = %s",
                (rows, total, level),
            )


_COPY_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def copy_postings(
    conn: Any, source_id: int, docs: Sequence[PostedChunk], *, count: bool = True
) -> dict[Level, Counter[str]]:
    """Write the postings of ``docs`` (chunks of the file ``source_id``) and, with ``count``,
    count their terms into the term statistics (a bulk load recounts them at its end); the
    counts of each level (none without ``count``)."""
    # COPY's text format built here in one piece: far cheaper than a call per row
    lines: list[str] = []
    for cid, tokens, _rows in docs:
        tail = f"\t{cid}\t{source_id}\t"
        for term, tf in Counter(tokens).items():
            lines.append(f"{term.translate(_COPY_ESCAPES)}{tail}{tf}\t{len(tokens)}\n")
    with conn.cursor().copy(
        "COPY postings (term, chunk_id, source_id, tf, length) FROM STDIN"
    ) as copy:
        copy.write("".join(lines))
    lines = []
    for cid, _tokens, rows in docs:
        for ord_, sentence in enumerate(rows):
            tail = f"\t{cid}\t{source_id}\t{ord_}\t"
            for term, tf in Counter(sentence).items():
                lines.append(f"{term.translate(_COPY_ESCAPES)}{tail}{tf}\t{len(sentence)}\n")
    with conn.cursor().copy(
        "COPY sentence_postings (term, chunk_id, source_id, ord, tf, length) FROM STDIN"
    ) as copy:
        copy.write("".join(lines))
    if not count:
        return {}
    # each term's document frequency per level, counted here (no read of what was written)
    chunk_df: Counter[str] = Counter()
    sentence_df: Counter[str] = Counter()
    for _cid, tokens, rows in docs:
        chunk_df.update(set(tokens))
        for sentence in rows:
            sentence_df.update(set(sentence))
    for level, df in (("chunk", chunk_df), ("sentence", sentence_df)):
        if df:
            conn.execute(
                """
                INSERT INTO term_stats (level, term, df)
                SELECT %s, term, n FROM unnest(%s::text[], %s::bigint[]) AS d (term, n)
                ON CONFLICT (level, term) DO UPDATE SET df = term_stats.df + excluded.df
                """,
                (level, list(df), list(df.values())),
            )
    return {"chunk": chunk_df, "sentence": sentence_df}


def recount_stats(conn: Any) -> None:
    """Every term's document frequency and each level's rows and length, counted afresh from
    the postings and rows (after a bulk load, which does not keep them as it goes), for the
    whole index and for each group set."""
    conn.execute(readers.RECOUNT)
    conn.execute("DELETE FROM term_stats")
    for level, table in LEVEL_TABLES:
        conn.execute(
            f"INSERT INTO term_stats (level, term, df) "
            f"SELECT %s, term, count(*) FROM {table} GROUP BY term",
            (level,),
        )
    for level, table in (("chunk", "chunks"), ("sentence", "sentences")):
        conn.execute(
            f"UPDATE level_stats SET rows = t.n, total_length = t.total FROM "
            f"(SELECT count(*) AS n, coalesce(sum(length), 0) AS total FROM {table}) t "
            f"WHERE level = %s",
            (level,),
        )


def retokenize_chunk(
    conn: Any, cid: int, tokens: Sequence[str], sentences: Sequence[Sequence[str]]
) -> None:
    """Replace chunk ``cid``'s terms (and its sentences' terms) and their postings."""
    old = conn.execute(
        "SELECT length, source_id FROM chunks WHERE id = %s FOR UPDATE", (cid,)
    ).fetchone()
    if old is None:
        return
    stored = conn.execute(
        "SELECT ord, length FROM sentences WHERE chunk_id = %s ORDER BY ord", (cid,)
    ).fetchall()
    # sentence rows carry vectors: keep them when the sentences still line up, else the
    # chunk becomes its own single sentence (as at ingest)
    rows = list(sentences) if sentences and len(sentences) == len(stored) else [tokens]
    if len(rows) == len(stored):
        for ord_, sentence in enumerate(rows):
            conn.execute(
                "UPDATE sentences SET length = %s WHERE chunk_id = %s AND ord = %s",
                (len(sentence), cid, ord_),
            )
    else:
        conn.execute("DELETE FROM sentences WHERE chunk_id = %s", (cid,))
        conn.execute(
            "INSERT INTO sentences (chunk_id, source_id, ord, length, embedding) "
            "SELECT chunk_id, source_id, 0, %s, embedding FROM chunk_vectors "
            "WHERE chunk_id = %s",
            (len(tokens), cid),
        )
    drop_postings(conn, [cid])
    conn.execute(
        "UPDATE chunks SET tokens = %s, sentence_tokens = %s, length = %s WHERE id = %s",
        (
            " ".join(tokens),
            json.dumps([" ".join(x) for x in sentences], ensure_ascii=False),
            len(tokens),
            cid,
        ),
    )
    copy_postings(conn, int(old["source_id"]), [(cid, tokens, rows)])
    adjust_stats(
        conn,
        chunk=(0, len(tokens) - int(old["length"])),
        sentence=(
            len(rows) - len(stored),
            sum(len(x) for x in rows) - sum(int(r["length"]) for r in stored),
        ),
    )


PER_TERM = 1000
"""Postings read per term, best impact first, when a search reads only each term's best."""
RESCORED = 300
"""Candidates (at least; three times the k asked for) scored with exact BM25 after that."""
EXACT_POSTINGS = 20_000
"""Up to this many postings for the query's terms together, every posting is read (exact)."""


def impact_sql(alias: str) -> str:
    """The BM25 term-frequency part of a posting with k1 1.2, b 0.75 and a fixed average length
    of 200: the order of the ``postings_by_impact`` index (migration 5), which must see this
    expression exactly. Candidates found by it are scored with the true statistics."""
    tf, length = f"{alias}.tf", f"{alias}.length"
    return f"(({tf}::real / ({tf} + 1.2 * (0.25 + 0.75 * {length} / 200.0))::real))"


def search(
    conn: Any,
    weights: Mapping[str, float],
    k: int,
    filters: Filters | None,
    *,
    level: Level,
    within: Sequence[int] | None,
    k1: float,
    b: float,
) -> list[ScoredId]:
    """The top ``k`` chunks by BM25 for weighted query terms; zero scores are dropped.

    At chunk level, when the query's terms have more than ``EXACT_POSTINGS`` postings together,
    the chunks scoring best over each term's ``PER_TERM`` best postings are the candidates
    (``_candidates``), and the top ``k`` of them by exact BM25 are returned: rarely a chunk
    that scores well only by many common terms is missed (measured in bench/postgres.py)."""
    table = "postings" if level == "chunk" else "sentence_postings"
    row_key = "p.chunk_id" if level == "chunk" else "p.chunk_id, p.ord"
    if filters is not None and filters.groups is not None:  # a reader's, not the index's
        n, total, frequencies = readers.statistics(conn, level, list(weights), filters.groups)
    else:
        n, total, frequencies = index_statistics(conn, level, list(weights))
    if n == 0 or not frequencies:
        return []
    terms = list(frequencies)
    # the query side of BM25, once per term: weight × Lucene's idf
    term_idf = idf(np.asarray([frequencies[t] for t in terms]), n) * np.asarray(
        [weights[t] for t in terms]
    )
    avg_len = max(total / n, 1e-9)
    where, params, allowed = filter_sql(conn, filters, "p")
    if level == "chunk" and within is None and sum(frequencies.values()) > EXACT_POSTINGS:
        # long posting lists: each term's best postings give the candidates (under a filter,
        # the best it allows), and the candidates get their exact score below
        bm25 = (k1 + 1, k1 * (1 - b), k1 * b / avg_len)
        share = 1.0 if allowed is None else max(allowed, 1) / n
        m = max(RESCORED, 3 * k)
        within = _candidates(conn, terms, term_idf, bm25, (where, params, share), m)
        if not within:
            return []
        where, params = "", []  # the candidates are all allowed: no filter twice
    conditions = [where] if where else []
    if within is not None:  # a hashed set: = ANY(list) compared each posting with every id
        conditions.append("p.chunk_id IN (SELECT unnest(%s::bigint[]))")
        params.append(sorted({int(i) for i in within}))
    extra = (" AND " + " AND ".join(conditions)) if conditions else ""
    # tf·(k1+1) / (tf + k1·(1 − b) + k1·b/avgdl · dl), summed over the query's terms
    score = "sum(q.w * p.tf * %s / (p.tf + %s + %s * p.length))"
    rows_sql = (
        f"SELECT p.chunk_id, {score} AS score "
        f"FROM unnest(%s::text[], %s::float8[]) AS q(term, w) "
        f"JOIN {table} p ON p.term = q.term WHERE true{extra} GROUP BY {row_key}"
    )
    if level == "chunk":
        sql = f"{rows_sql} ORDER BY score DESC, p.chunk_id LIMIT %s"
    else:  # a chunk scores by its best sentence
        sql = (
            f"SELECT chunk_id, max(score) AS score FROM ({rows_sql}) r "
            "GROUP BY chunk_id ORDER BY score DESC, chunk_id LIMIT %s"
        )
    args = [
        k1 + 1,
        k1 * (1 - b),
        k1 * b / avg_len,
        terms,
        [float(x) for x in term_idf],
        *params,
        k,
    ]
    found = conn.execute(sql, args).fetchall()
    return [ScoredId(int(r["chunk_id"]), float(r["score"])) for r in found if r["score"] > 0]


def index_statistics(
    conn: Any, level: Level, terms: Sequence[str]
) -> tuple[int, int, dict[str, int]]:
    """The level's rows and total length and the terms' document frequencies over the whole
    index, kept by the writers (one round trip)."""
    stats = conn.execute(
        "SELECT l.rows, l.total_length, t.term, t.df FROM level_stats l "
        "LEFT JOIN term_stats t ON t.level = l.level AND t.term = ANY(%s) AND t.df > 0 "
        "WHERE l.level = %s",
        (list(terms), level),
    ).fetchall()
    if not stats:
        return 0, 0, {}
    frequencies = {r["term"]: int(r["df"]) for r in stats if r["term"] is not None}
    return int(stats[0]["rows"]), int(stats[0]["total_length"]), frequencies


def _candidates(
    conn: Any,
    terms: Sequence[str],
    term_idf: np.ndarray,
    bm25: tuple[float, float, float],
    allowed: tuple[str, Sequence[Any], float],
    m: int,
) -> list[int]:
    """The ``m`` chunks scoring best over each term's ``PER_TERM`` best postings (those the
    filter allows): a chunk found for a rare term, or near the top of a common one, is there;
    its exact score comes after.

    ``allowed`` is the filter's condition on ``p``, its parameters and the share of chunks it
    keeps. Each term's best postings are read in impact order, as many more as the filter
    leaves fewer (PER_TERM / share), and filtered after: the index is walked, never sorted.
    (With the filter inside the walk, PostgreSQL joined it to every posting of the term and
    sorted them all: 10 times slower at 100k chunks.)"""
    where, params, share = allowed
    extra = f" WHERE {where}" if where else ""
    sql = (
        "SELECT p.chunk_id, sum(q.w * p.tf * %s / (p.tf + %s + %s * p.length)) AS score "
        "FROM unnest(%s::text[], %s::float8[]) AS q(term, w) CROSS JOIN LATERAL ("
        "SELECT b.chunk_id, b.tf, b.length, b.source_id FROM postings b WHERE b.term = q.term "
        f"ORDER BY {impact_sql('b')} DESC LIMIT %s) p{extra} "
        "GROUP BY p.chunk_id ORDER BY score DESC, p.chunk_id LIMIT %s"
    )
    per_term = math.ceil(PER_TERM / min(max(share, 1e-9), 1.0))
    args = [*bm25, list(terms), [float(x) for x in term_idf], per_term, *params, m]
    return [int(r["chunk_id"]) for r in conn.execute(sql, args).fetchall()]


def document_frequencies(conn: Any, terms: Sequence[str]) -> dict[str, int]:
    """How many chunks contain each term (0 for terms no chunk holds)."""
    unique = list(dict.fromkeys(terms))
    out = dict.fromkeys(unique, 0)
    if not unique:
        return out
    for row in conn.execute(
        "SELECT term, df FROM term_stats WHERE level = 'chunk' AND term = ANY(%s)", (unique,)
    ):
        out[row["term"]] = int(row["df"])
    return out
