"""Questions and keywords a chat model writes for each passage at ingest (doc2query).

They are indexed on the lexical side only (BM25 over the passage, its headings and these), so a
question worded as people ask it can find a passage worded as documents write it; they are
never shown, quoted or embedded. Off by default (``SHIRABE_INGEST__ENRICH_QUESTIONS``): writing them
costs a model call per passage, so each is kept in a cache keyed by the passage's text, its
headings, the prompt and the model, and an ingest that stops resumes where it was.
"""

from __future__ import annotations

import hashlib
import logging
import re
import sqlite3
import threading
import time
from collections.abc import Iterable
from pathlib import Path

from shirabe.errors import GeneratorError
from shirabe.llm.protocol import ChatModel, Message
from shirabe.records import Chunk

log = logging.getLogger(__name__)

VERSION = "1"
"""Changes with the prompt or the cleaning: passages are written for again."""
SYSTEM = "あなたは社内文書の検索索引を作る担当者です。"
PROMPT = "\n".join(
    [
        "次の文章を読み、この文章だけで答えられる質問を3つと、"
        "検索に使われそうな言い換えのキーワードを5つ、日本語で書いてください。",
        "文章に書かれていないことは書かないでください。次の形式だけで答えてください。",
        "",
        "質問: …",
        "質問: …",
        "質問: …",
        "キーワード: …、…、…、…、…",
        "",
        "見出し: {heading}",
        "文章:",
        "{text}",
    ]
)
MAX_PASSAGE_CHARS = 1500
"""The most of a passage given to the model (its beginning)."""
MAX_CHARS = 400
"""The most characters of questions and keywords kept for a passage."""
_LINE = re.compile(r"^\s*(?:[-*・\d.)）]\s*)*(質問|キーワード)\s*[:：]\s*(.+)$")
_MARKUP = re.compile(r"<[^>]*>|https?://\S+|```")


def clean(reply: str) -> str:
    """The questions and keywords of a reply, one per line, without anything else it said."""
    kept: list[str] = []
    for line in reply.splitlines():
        match = _LINE.match(line)
        if match is None:
            continue
        text = _MARKUP.sub("", match.group(2)).strip(" 　…、,・")
        if any(ch.isalnum() for ch in text) and text not in kept:
            kept.append(text[:120])
    joined = "\n".join(kept)
    return joined[:MAX_CHARS]


def _wanted(chunk: Chunk) -> bool:
    """A passage that gets questions and keywords: not a generated summary, not empty."""
    return not chunk.is_summary and bool(chunk.text.strip())


def writer_signature(kind: str, recipe: str, model: str, origin: str) -> str:
    """What a text a model writes at ingest depends on: its ``kind``, the ``recipe`` (prompt,
    version, checks: hashed), the model's name and where it runs (hashed: two servers may give
    their models the same name)."""
    recipe_hash = hashlib.sha256(recipe.encode()).hexdigest()[:12]
    origin_hash = hashlib.sha256(origin.encode()).hexdigest()[:8]
    return f"{kind}:{recipe_hash}:{model}@{origin_hash}"


def written_key(signature: str, *parts: str) -> str:
    """The cache key of a text written under ``signature`` for ``parts`` (what it is written
    from)."""
    return hashlib.sha256("\n".join([signature, *parts]).encode("utf-8")).hexdigest()


class EnrichmentCache:
    """Written texts by key, in a SQLite file of the index home (it outlives re-ingests)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS enrichment (key TEXT PRIMARY KEY, model TEXT NOT NULL, "
            "text TEXT NOT NULL, seconds REAL NOT NULL, created REAL NOT NULL)"
        )
        self._lock = threading.Lock()

    def get(self, keys: Iterable[str]) -> dict[str, str]:
        wanted = list(dict.fromkeys(keys))
        found: dict[str, str] = {}
        with self._lock:
            for start in range(0, len(wanted), 500):
                part = wanted[start : start + 500]
                marks = ",".join("?" * len(part))
                rows = self._db.execute(
                    f"SELECT key, text FROM enrichment WHERE key IN ({marks})", part
                )
                found.update(rows.fetchall())
        return found

    def put(self, key: str, model: str, text: str, seconds: float) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO enrichment VALUES (?, ?, ?, ?, ?)",
                (key, model, text, seconds, time.time()),
            )

    def mean_seconds(self, model: str) -> float | None:
        """How long writing one passage took with ``model``, on average, so far."""
        with self._lock:
            row = self._db.execute(
                "SELECT AVG(seconds), COUNT(*) FROM enrichment WHERE model = ?", (model,)
            ).fetchone()
        return float(row[0]) if row and row[1] else None

    def close(self) -> None:
        with self._lock:
            self._db.close()


class Enricher:
    """Writes (or finds in the cache) the questions and keywords of passages."""

    def __init__(self, model: ChatModel, cache: EnrichmentCache, origin: str = "") -> None:
        """``origin`` says where the model is (a server's URL, a file's path): two servers may
        give their models the same name."""
        self._model, self._cache, self._origin = model, cache, origin
        self.failed = 0
        """Passages left without questions because the model failed (not cached)."""

    @property
    def signature(self) -> str:
        """What an index built with these texts depends on (re-ingest when it changes): the
        prompt, the cleaning's version and the model."""
        return writer_signature(
            "doc2query", f"{VERSION}\n{SYSTEM}\n{PROMPT}", self._model.name, self._origin
        )

    @property
    def model(self) -> str:
        return self._model.name

    def key(self, chunk: Chunk) -> str:
        head = "\n".join(chunk.heading_path)
        return written_key(self.signature, head, chunk.text[:MAX_PASSAGE_CHARS])

    def wanted(self, chunks: Iterable[Chunk]) -> list[Chunk]:
        """The passages that get questions and keywords."""
        return [c for c in chunks if _wanted(c)]

    def missing(self, chunks: Iterable[Chunk]) -> list[Chunk]:
        """The passages among ``chunks`` whose texts are not written yet."""
        wanted = self.wanted(chunks)
        found = self._cache.get(self.key(c) for c in wanted)
        return [c for c in wanted if self.key(c) not in found]

    def texts(self, chunks: Iterable[Chunk]) -> list[str]:
        """Each passage's questions and keywords ("" for a summary), written where missing."""
        chunks = list(chunks)
        found = self._cache.get(self.key(c) for c in self.wanted(chunks))
        out = []
        for chunk in chunks:
            if not _wanted(chunk):
                out.append("")
                continue
            key = self.key(chunk)
            if key not in found:
                try:
                    found[key] = self.write(chunk)
                except GeneratorError as exc:  # indexed without; the next ingest asks again
                    log.warning("no questions for a passage of %s: %s", chunk.source, exc)
                    self.failed += 1
                    out.append("")
                    continue
            out.append(found[key])
        return out

    def write(self, chunk: Chunk) -> str:
        """Ask the model for one passage and keep the answer in the cache."""
        started = time.perf_counter()
        messages: list[Message] = [
            {"role": "system", "content": SYSTEM},
            {
                "role": "user",
                "content": PROMPT.format(
                    heading=" > ".join(chunk.heading_path) or "（なし）",
                    text=chunk.text[:MAX_PASSAGE_CHARS],
                ),
            },
        ]
        text = clean(self._model.complete(messages, max_tokens=200))
        self._cache.put(self.key(chunk), self._model.name, text, time.perf_counter() - started)
        return text

    def mean_seconds(self) -> float | None:
        return self._cache.mean_seconds(self._model.name)

    def close(self) -> None:
        """Close the cache (the model is its owner's to close)."""
        self._cache.close()


__all__ = ["Enricher", "EnrichmentCache", "clean", "writer_signature", "written_key"]
