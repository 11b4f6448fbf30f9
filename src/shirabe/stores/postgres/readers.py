"""BM25's collection statistics kept per group set, so a reader's are summed, not counted.

A score made with the statistics of the whole index tells a reader whether a word appears in
files they may not read (a word that does looks rarer than its twin that does not, and scores
lower). So every file's rows and term counts are also kept under the groups that may read it
(``sources.counted_as``: its ``groups`` tag when they were counted), and a filtered search sums
the entries of the group sets its reader may read: a few rows per query term, however large
the index. Writers keep them exact in their transactions: a file's counts leave with its old
chunks or groups and come back with its new ones.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from shirabe.stores.postgres import parts, terms
from shirabe.stores.protocol import Level

MIGRATION = """
ALTER TABLE sources ADD COLUMN counted_as text;
CREATE TABLE reader_term_stats (
    level text NOT NULL,
    term text NOT NULL,
    readers text NOT NULL,
    df bigint NOT NULL,
    PRIMARY KEY (level, term, readers)
);
CREATE TABLE reader_level_stats (
    level text NOT NULL,
    readers text NOT NULL,
    rows bigint NOT NULL,
    total_length bigint NOT NULL,
    PRIMARY KEY (level, readers)
);
"""
"""Schema of the statistics; a migration runs it and then :func:`recount` (existing files)."""

_GROUPS = parts.GROUPS


_LEVELS: tuple[tuple[Level, str], ...] = (("chunk", "chunks"), ("sentence", "sentences"))


def _recount(postings: dict[Level, str]) -> str:
    """Every file's counts under its groups, afresh, with each level's (term, file) rows read
    from ``postings`` (a table or a subquery)."""
    return f"""
UPDATE sources s SET counted_as = {_GROUPS};
DELETE FROM reader_term_stats;
DELETE FROM reader_level_stats;
""" + "".join(
        f"""
INSERT INTO reader_term_stats (level, term, readers, df)
SELECT '{level}', p.term, s.counted_as, count(*) FROM {postings[level]} p
JOIN sources s ON s.id = p.source_id GROUP BY p.term, s.counted_as;
INSERT INTO reader_level_stats (level, readers, rows, total_length)
SELECT '{level}', s.counted_as, count(*), coalesce(sum(r.length), 0) FROM {rows} r
JOIN sources s ON s.id = r.source_id GROUP BY s.counted_as;
"""
        for level, rows in _LEVELS
    )


MIGRATION_RECOUNT = _recount({"chunk": "postings", "sentence": "sentence_postings"})
"""Migration 7's count, from the postings tables of that time (migration 11 replaced them)."""

RECOUNT = _recount({level: terms.level_terms(level, "true") for level, _rows in _LEVELS})
"""Every file's counts under its groups, afresh: at the end of a bulk load and after
retokenizing."""


def count(conn: Any, source_id: int, sign: int) -> None:
    """Add (``sign`` 1) or take away (-1) file ``source_id``'s rows and terms to the entries
    of the groups it is counted under. Taking away comes before its chunks are dropped or its
    groups change; adding after its chunks are written and ``counted_as`` set."""
    row = conn.execute("SELECT counted_as FROM sources WHERE id = %s", (source_id,)).fetchone()
    if row is None or row["counted_as"] is None:
        return
    readers = row["counted_as"]
    for level, rows in _LEVELS:
        conn.execute(
            "INSERT INTO reader_term_stats (level, term, readers, df) "
            f"SELECT %s, p.term, %s, %s * count(*) FROM "
            f"{terms.level_terms(level, 'c.source_id = %s')} p GROUP BY p.term "
            "ON CONFLICT (level, term, readers) DO UPDATE SET df = reader_term_stats.df + "
            "excluded.df",
            (level, readers, sign, source_id),
        )
        conn.execute(
            "INSERT INTO reader_level_stats (level, readers, rows, total_length) "
            f"SELECT %s, %s, %s * count(*), %s * coalesce(sum(length), 0) FROM {rows} "
            "WHERE source_id = %s "
            "ON CONFLICT (level, readers) DO UPDATE SET rows = reader_level_stats.rows + "
            "excluded.rows, total_length = reader_level_stats.total_length + "
            "excluded.total_length",
            (level, readers, sign, sign, source_id),
        )


def counted_as_now(conn: Any, source_id: int) -> str:
    """File ``source_id`` is counted under its current groups from now on; those groups."""
    row = conn.execute(
        f"UPDATE sources s SET counted_as = {_GROUPS} WHERE s.id = %s RETURNING counted_as",
        (source_id,),
    ).fetchone()
    return str(row["counted_as"])


def add(
    conn: Any,
    source_id: int,
    frequencies: Mapping[Level, Mapping[str, int]],
    rows: Mapping[Level, tuple[int, int]],
) -> None:
    """Count a file just written under its groups: its terms' document frequencies and its
    (rows, total length) at each level, as the writer counted them for the whole index (no
    read of what was written)."""
    readers = counted_as_now(conn, source_id)
    for level, df in frequencies.items():
        if df:
            conn.execute(
                "INSERT INTO reader_term_stats (level, term, readers, df) "
                "SELECT %s, term, %s, n FROM unnest(%s::text[], %s::bigint[]) AS d (term, n) "
                "ON CONFLICT (level, term, readers) DO UPDATE SET df = reader_term_stats.df + "
                "excluded.df",
                (level, readers, list(df), list(df.values())),
            )
    for level, (n, total) in rows.items():
        conn.execute(
            "INSERT INTO reader_level_stats (level, readers, rows, total_length) "
            "VALUES (%s, %s, %s, %s) ON CONFLICT (level, readers) DO UPDATE SET "
            "rows = reader_level_stats.rows + excluded.rows, "
            "total_length = reader_level_stats.total_length + excluded.total_length",
            (level, readers, n, total),
        )


def statistics(
    conn: Any, level: Level, terms: Sequence[str], groups: frozenset[str]
) -> tuple[int, int, dict[str, int]]:
    """The rows, total length and the terms' document frequencies at ``level`` over the files
    that ``groups`` may read (files without groups are nobody's)."""
    found = conn.execute(
        "WITH readable AS (SELECT readers, rows, total_length FROM reader_level_stats "
        "WHERE level = %s AND readers::jsonb ?| %s) "
        "SELECT (SELECT coalesce(sum(rows), 0) FROM readable) AS n, "
        "(SELECT coalesce(sum(total_length), 0) FROM readable) AS total, t.term, t.df FROM "
        "(SELECT term, sum(df) AS df FROM reader_term_stats WHERE level = %s "
        "AND term = ANY(%s) AND readers IN (SELECT readers FROM readable) GROUP BY term) t "
        "RIGHT JOIN (SELECT 1) one ON true",
        (level, sorted(groups), level, list(terms)),
    ).fetchall()
    n, total = int(found[0]["n"]), int(found[0]["total"])
    frequencies = {r["term"]: int(r["df"]) for r in found if r["term"] is not None and r["df"]}
    return n, total, frequencies
