"""What a PostgreSQL index holds, told apart from how it came to hold it.

Two ingests of the same folder give *identical* indexes when every table a search, a listing
or an access check reads holds the same rows, with the ids the database gave (files' and
chunks' ids, which follow the order files were written in) replaced by what they stand for:

- ``sources``: each file's key, hash, size, time, status, error, tags (readers, category,
  tags version), warnings, chunk count, the readers its statistics are counted under and
  those of its reader set (the partitions its rows are in);
- ``chunks``: each chunk of each file, by its file and position, with its text, headings,
  offsets, locator, metadata, terms, sentence terms (and whether its one sentence row is the
  chunk itself) and vector keys;
- ``chunk_vectors`` and ``sentences``: each chunk's vector and each sentence's length and
  vector, exactly (the same text embedded by the same model gives the same floats);
- ``postings``: each chunk's terms with their counts and lengths, and that each names its
  chunk's file and is in its file's partition, as the term blocks hold them (fresh or merged
  alike; postings of chunks deleted since their block was merged are not part of any result,
  and are left out);
- ``chunk_terms``: each chunk's terms by row (chunk and sentence rows), byte for byte;
- the BM25 statistics of the whole index and of each group set (rows with counts of 0 are
  what removed terms leave behind, not part of any score, and are left out);
- the embedding cache: the same keys with the same vectors.

Not compared: when each file was ingested, and the ingest and queue bookkeeping.
"""

from __future__ import annotations

from typing import Any

import psycopg

from shirabe.stores.postgres import blocks

_CHUNK = "s.path, c.position, c.is_summary, c.start_offset, c.end_offset"
"""A chunk by what it is: its file and its place in it."""

QUERIES: dict[str, str] = {
    "sources": "SELECT path, sha256, size, mtime, status, error, metadata::text, "
    "warnings::text, chunk_count, counted_as, "
    "(SELECT r.readers FROM reader_sets r WHERE r.id = sources.reader_set) FROM sources",
    "chunks": f"SELECT {_CHUNK}, c.text, c.heading_path::text, c.locator::text, "
    "c.metadata::text, c.tokens, c.sentence_tokens::text, c.own_sentence, c.vector_keys::text, "
    "c.length "
    "FROM chunks c JOIN sources s ON s.id = c.source_id",
    "chunk_vectors": f"SELECT {_CHUNK}, v.embedding::text, v.source_id = c.source_id, "
    "v.reader_set = s.reader_set "
    "FROM chunk_vectors v JOIN chunks c ON c.id = v.chunk_id JOIN sources s ON s.id = c.source_id",
    "sentences": f"SELECT {_CHUNK}, e.ord, e.length, e.embedding::text, e.source_id = c.source_id "
    "FROM sentences e JOIN chunks c ON c.id = e.chunk_id JOIN sources s ON s.id = c.source_id",
    "chunk_terms": f"SELECT {_CHUNK}, md5(f.chunk_entries), md5(f.sentence_entries), "
    "md5(f.lengths), f.source_id = c.source_id "
    "FROM chunk_terms f JOIN chunks c ON c.id = f.chunk_id JOIN sources s ON s.id = c.source_id",
    "term_stats": "SELECT level, term, df FROM term_stats WHERE df > 0",
    "level_stats": "SELECT level, rows, total_length FROM level_stats",
    "reader_term_stats": "SELECT level, term, readers, df FROM reader_term_stats WHERE df > 0",
    "reader_level_stats": "SELECT level, readers, rows, total_length FROM reader_level_stats "
    "WHERE rows > 0",
    "embeddings": "SELECT m.name, e.key, md5(e.vector) FROM embeddings e "
    "JOIN embedding_models m ON m.id = e.model",
}


def snapshot(url: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every table of :data:`QUERIES` in the database at ``url``, and the postings, their rows
    sorted."""
    with psycopg.connect(url) as conn:
        tables = {
            name: sorted(conn.execute(query).fetchall(), key=repr)
            for name, query in QUERIES.items()
        }
        tables["postings"] = sorted(postings(conn), key=repr)
    return tables


def postings(conn: Any) -> list[tuple[Any, ...]]:
    """Each posting of the term blocks whose chunk exists: the chunk by what it is, the term,
    its count and the chunk's length, and whether it names the chunk's file."""
    chunks = {
        row[0]: row[1:]
        for row in conn.execute(
            f"SELECT c.id, c.source_id, s.reader_set, {_CHUNK} FROM chunks c "
            "JOIN sources s ON s.id = c.source_id"
        )
    }
    out = []
    for term, data, part in conn.execute("SELECT term, data, reader_set FROM term_blocks"):
        found = blocks.decode(data)
        for chunk_id, source_id, tf, length in zip(
            found.chunks, found.sources, found.tfs, found.lengths, strict=True
        ):
            if int(chunk_id) in chunks:
                owner, owners_set, *place = chunks[int(chunk_id)]
                named = int(source_id) == owner and part == owners_set
                out.append((*place, term, int(tf), int(length), named))
    return out


def differences(
    one: dict[str, list[tuple[Any, ...]]], other: dict[str, list[tuple[Any, ...]]]
) -> dict[str, str]:
    """Per table that differs: how many rows each has, and a first row only one has."""
    out: dict[str, str] = {}
    for name in [*QUERIES, "postings"]:
        mine, theirs = set(one[name]), set(other[name])
        if mine != theirs:
            only = sorted(mine ^ theirs, key=repr)[0]
            out[name] = f"{len(one[name])} vs {len(other[name])} rows, e.g. {repr(only)[:300]}"
    return out
