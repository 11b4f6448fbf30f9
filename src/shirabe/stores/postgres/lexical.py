"""BM25's index in the server store: each term's chunk postings in blocks (``blocks.py``),
and the statistics of both levels kept exact in the writers' transactions. A file's postings
are written as fresh blocks, with each chunk's terms by row (``forward.py``), which score the
chunks a search already has at either level; the statistics are counted from the terms."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

from shirabe.stores.postgres import blocks, forward, readers, terms
from shirabe.stores.protocol import Level

LEVELS: tuple[Level, ...] = ("chunk", "sentence")

PostedChunk = tuple[int, Sequence[str], Sequence[Sequence[str]]]
"""A chunk's id, its terms, and the terms of each of its sentence rows."""

CHANGED = "postings_changed"
"""``shirabe_meta``: postings written or dropped since the last compaction."""


def drop_postings(conn: Any, source_id: int) -> None:
    """Take the chunks of file ``source_id`` out of the term statistics and delete its fresh
    blocks (before its chunks are deleted). Its postings in merged blocks stay until the next
    compaction; searches skip them (their chunks are gone)."""
    dropped = 0
    for level in LEVELS:
        found = conn.execute(
            f"""
            WITH d AS (SELECT term, count(*) AS n FROM
                {terms.level_terms(level, "c.source_id = %s")} p GROUP BY term),
            u AS (UPDATE term_stats t SET df = t.df - d.n FROM d
                  WHERE t.level = %s AND t.term = d.term)
            SELECT coalesce(sum(n), 0) AS n FROM d
            """,
            (source_id, level),
        ).fetchone()
        if level == "chunk":
            dropped = int(found["n"])
    conn.execute("DELETE FROM term_blocks WHERE source_id = %s AND rank < 0", (source_id,))
    changed(conn, dropped)


def changed(conn: Any, postings: int) -> None:
    """Count ``postings`` written or dropped towards the next compaction."""
    if postings:
        conn.execute(
            "INSERT INTO shirabe_meta (key, value) VALUES (%s, %s) ON CONFLICT (key) DO "
            "UPDATE SET value = (shirabe_meta.value::bigint + excluded.value::bigint)::text",
            (CHANGED, str(postings)),
        )


def adjust_stats(conn: Any, *, chunk: tuple[int, int], sentence: tuple[int, int]) -> None:
    """Add (rows, total length) to the statistics of each level."""
    for level, (rows, total) in (("chunk", chunk), ("sentence", sentence)):
        if rows or total:
            conn.execute(
                "UPDATE level_stats SET rows = rows + %s, total_length = total_length + %s "
                "WHERE level = %s",
                (rows, total, level),
            )


def write_postings(
    conn: Any, source: tuple[int, int], docs: Sequence[PostedChunk], *, count: bool = True
) -> dict[Level, Counter[str]]:
    """Write the postings of ``docs`` (chunks of the file whose id and reader set are
    ``source``) as fresh blocks and count their terms into the term statistics; the counts of
    each level. With ``count`` false (a bulk load, which counts and builds every block at its
    end) nothing is written."""
    if not count:
        return {}
    source_id, part = source
    by_term: defaultdict[str, list[tuple[int, int, int]]] = defaultdict(list)
    chunk_df: Counter[str] = Counter()
    sentence_df: Counter[str] = Counter()
    for cid, tokens, rows in docs:
        tfs = Counter(tokens)
        for term, tf in tfs.items():
            by_term[term].append((cid, tf, len(tokens)))
        chunk_df.update(tfs.keys())
        for sentence in rows:
            sentence_df.update(set(sentence))
    with conn.cursor().copy(
        "COPY term_blocks (term, rank, source_id, reader_set, data) FROM STDIN (FORMAT BINARY)"
    ) as copy:
        copy.set_types(["text", "int4", "int8", "int4", "bytea"])
        for term, found in by_term.items():
            ids, tfs_, lengths = zip(*found, strict=True)
            block = blocks.postings(ids, [source_id] * len(ids), tfs_, lengths)
            copy.write_row((term, -1, source_id, part, blocks.encode(block)))
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
    changed(conn, sum(chunk_df.values()))
    return {"chunk": chunk_df, "sentence": sentence_df}


def recount_stats(conn: Any) -> None:
    """Every term's document frequency and each level's rows and length, counted afresh from
    the chunks' terms and rows (after a bulk load, which does not keep them as it goes, and
    after retokenizing), for the whole index and for each group set."""
    conn.execute(readers.RECOUNT)
    conn.execute("DELETE FROM term_stats")
    for level in LEVELS:
        conn.execute(
            f"INSERT INTO term_stats (level, term, df) "
            f"SELECT %s, term, count(*) FROM {terms.level_terms(level, 'true')} p GROUP BY term",
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
    """Replace chunk ``cid``'s terms (and its sentences' terms), and its terms by row. The
    posting blocks and the statistics are then rebuilt for the whole index
    (``compaction.rebuild``, ``recount_stats``)."""
    old = conn.execute("SELECT source_id FROM chunks WHERE id = %s FOR UPDATE", (cid,)).fetchone()
    if old is None:
        return
    stored = conn.execute(
        "SELECT ord FROM sentences WHERE chunk_id = %s ORDER BY ord", (cid,)
    ).fetchall()
    # sentence rows carry vectors: keep them when the sentences still line up, else the
    # chunk becomes its own single sentence (as at ingest)
    own = not (sentences and len(sentences) == len(stored))
    rows = [tokens] if own else list(sentences)
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
    conn.execute("DELETE FROM chunk_terms WHERE chunk_id = %s", (cid,))
    forward.write(conn, [(cid, int(old["source_id"]), tokens, rows)])
    conn.execute(
        "UPDATE chunks SET tokens = %s, sentence_tokens = %s, length = %s, own_sentence = %s "
        "WHERE id = %s",
        (
            " ".join(tokens),
            json.dumps([" ".join(x) for x in sentences], ensure_ascii=False),
            len(tokens),
            own,
            cid,
        ),
    )


def index_statistics(
    conn: Any, level: Level, terms_: Sequence[str]
) -> tuple[int, int, dict[str, int]]:
    """The level's rows and total length and the terms' document frequencies over the whole
    index, kept by the writers (one round trip)."""
    stats = conn.execute(
        "SELECT l.rows, l.total_length, t.term, t.df FROM level_stats l "
        "LEFT JOIN term_stats t ON t.level = l.level AND t.term = ANY(%s) AND t.df > 0 "
        "WHERE l.level = %s",
        (list(terms_), level),
    ).fetchall()
    if not stats:
        return 0, 0, {}
    frequencies = {r["term"]: int(r["df"]) for r in stats if r["term"] is not None}
    return int(stats[0]["rows"]), int(stats[0]["total_length"]), frequencies


def document_frequencies(conn: Any, terms_: Sequence[str]) -> dict[str, int]:
    """How many chunks contain each term (0 for terms no chunk holds)."""
    unique = list(dict.fromkeys(terms_))
    out = dict.fromkeys(unique, 0)
    if not unique:
        return out
    for row in conn.execute(
        "SELECT term, df FROM term_stats WHERE level = 'chunk' AND term = ANY(%s)", (unique,)
    ):
        out[row["term"]] = int(row["df"])
    return out
