"""A file's rows in the server store: its source row, its chunks with their vectors, sentences
and postings, and the statistics they move, written inside the caller's transaction.

``store.py`` opens the transactions (writers take turns under an advisory lock); these
functions only write in them.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from pgvector import HalfVector

from shirabe.embedders.protocol import Vector
from shirabe.stores.common import now, source_row
from shirabe.stores.postgres import forward, lexical, parts, readers
from shirabe.stores.postgres.connections import copy_rows
from shirabe.stores.postgres.lexical import PostedChunk
from shirabe.stores.postgres.rows import CHUNK_COLUMNS, chunk_row, sentence_rows
from shirabe.stores.protocol import IndexedChunk, Level, SourceRecord

log = logging.getLogger(__name__)


def upsert_source(
    conn: Any, source: SourceRecord, status: str, error: str | None
) -> tuple[int, int]:
    """The file's id, and how many chunks it had (0 for a new file)."""
    row = conn.execute(
        """
        INSERT INTO sources (path, sha256, size, mtime, status, error, metadata, ingested_at,
            warnings)
        VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)
        ON CONFLICT (path) DO UPDATE SET sha256 = excluded.sha256, size = excluded.size,
            mtime = excluded.mtime, status = excluded.status, error = excluded.error,
            metadata = excluded.metadata, ingested_at = excluded.ingested_at,
            warnings = excluded.warnings
        RETURNING id, chunk_count
        """,
        source_row(source, status, error),
    ).fetchone()
    return int(row["id"]), int(row["chunk_count"])


def drop_chunks(conn: Any, source_id: int) -> None:
    """Delete a file's chunks (their sentences and postings go with them) and their
    statistics."""
    readers.count(conn, source_id, -1)
    old = conn.execute(
        "SELECT count(*) AS n, coalesce(sum(length), 0) AS total FROM chunks WHERE source_id = %s",
        (source_id,),
    ).fetchone()
    old_sentences = conn.execute(
        "SELECT count(*) AS n, coalesce(sum(length), 0) AS total FROM sentences "
        "WHERE source_id = %s",
        (source_id,),
    ).fetchone()
    lexical.drop_postings(conn, source_id)
    conn.execute("DELETE FROM chunks WHERE source_id = %s", (source_id,))
    conn.execute("UPDATE sources SET chunk_count = 0 WHERE id = %s", (source_id,))
    lexical.adjust_stats(
        conn,
        chunk=(-int(old["n"]), -int(old["total"])),
        sentence=(-int(old_sentences["n"]), -int(old_sentences["total"])),
    )


def replace_source(
    conn: Any,
    source: SourceRecord,
    chunks: Sequence[IndexedChunk],
    vectors: Mapping[str, Vector],
    *,
    bulk: bool,
) -> None:
    """The file's row and its chunks in place of its old ones. Within a bulk load, the
    statistics of terms and readers are left for the load's end to count."""
    source_id, had = upsert_source(conn, source, "ok", None)
    if had:
        drop_chunks(conn, source_id)
    part = parts.of_source(conn, source_id)
    ids = [
        int(r["id"])
        for r in conn.execute(
            "SELECT nextval('chunks_id_seq') AS id FROM generate_series(1, %s)", (len(chunks),)
        ).fetchall()
    ]
    docs: list[PostedChunk] = []
    # vectors in half precision, rounded to nearest as the embedding cache rounds them
    sentences: list[tuple[int, int, int, int, HalfVector]] = []
    chunk_vectors: list[tuple[int, int, int, HalfVector]] = []
    with conn.cursor().copy(f"COPY chunks ({CHUNK_COLUMNS}) FROM STDIN") as copy:
        for cid, ic in zip(ids, chunks, strict=True):
            found = [vectors.get(k) for k in ic.vector_keys]
            terms, row_vectors, own_sentence = sentence_rows(ic, found)
            copy.write_row(chunk_row(cid, source_id, ic, own_sentence=own_sentence))
            own = found[0] if found else None
            if own is None:
                log.warning("%s: a chunk has no vector; only BM25 finds it", source.path)
            else:
                chunk_vectors.append((cid, source_id, part, HalfVector(own)))
            for ord_, (sentence, vec) in enumerate(zip(terms, row_vectors, strict=True)):
                if vec is not None:
                    sentences.append((cid, source_id, ord_, len(sentence), HalfVector(vec)))
            docs.append((cid, ic.tokens, terms))
    copy_rows(
        conn,
        "chunk_vectors (chunk_id, source_id, reader_set, embedding)",
        chunk_vectors,
        ("int8", "int8", "int4", "halfvec"),
    )
    copy_rows(
        conn,
        "sentences (chunk_id, source_id, ord, length, embedding)",
        sentences,
        ("int8", "int8", "int4", "int4", "halfvec"),
    )
    forward.write(conn, [(cid, source_id, tokens, terms) for cid, tokens, terms in docs])
    frequencies = lexical.write_postings(conn, (source_id, part), docs, count=not bulk)
    rows: dict[Level, tuple[int, int]] = {
        "chunk": (len(docs), sum(len(d[1]) for d in docs)),
        "sentence": (len(sentences), sum(r[3] for r in sentences)),
    }
    lexical.adjust_stats(conn, chunk=rows["chunk"], sentence=rows["sentence"])
    conn.execute("UPDATE sources SET chunk_count = %s WHERE id = %s", (len(docs), source_id))
    if not bulk:  # a bulk load counts every file at its end
        readers.add(conn, source_id, frequencies, rows)


def record_failure(conn: Any, source: SourceRecord, reason: str) -> None:
    """The file marked failed. The tags of the failure (its readers now) replace the old ones;
    the last good text stays searchable under them."""
    found = conn.execute(
        "SELECT id FROM sources WHERE path = %s FOR UPDATE", (source.path,)
    ).fetchone()
    if found is None:
        upsert_source(conn, source, "failed", reason)
        return
    readers.count(conn, int(found["id"]), -1)  # its text, counted for its new readers
    conn.execute(
        "UPDATE sources SET status = 'failed', error = %s, ingested_at = %s, "
        "metadata = metadata || %s::jsonb WHERE id = %s",
        (reason, now(), json.dumps(dict(source.metadata)), found["id"]),
    )
    readers.counted_as_now(conn, int(found["id"]))
    readers.count(conn, int(found["id"]), 1)
    if parts.move(conn, int(found["id"])):  # its merged postings move at the next compaction
        lexical.changed(conn, forward.postings_of(conn, int(found["id"])))


def remove_source(conn: Any, path: str) -> bool:
    """The file and its chunks deleted; False when there was no such file."""
    row = conn.execute("SELECT id FROM sources WHERE path = %s FOR UPDATE", (path,)).fetchone()
    if row is None:
        return False
    drop_chunks(conn, int(row["id"]))
    conn.execute("DELETE FROM sources WHERE id = %s", (row["id"],))
    return True
