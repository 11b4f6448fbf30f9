"""Liveness and the index status as the caller may see it."""

from __future__ import annotations

from datetime import UTC, datetime
from functools import lru_cache
from itertools import islice
from pathlib import Path, PurePath
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query
from pydantic import BaseModel

from shirabe.evaluation.cases import Case, CaseFileError, load_cases
from shirabe.evaluation.examples import Headings, from_cases, from_headings, in_turns, title_of
from shirabe.records import CATEGORY, COMMENT_CHARS, SEARCH_CHARS, SourceInfo
from shirabe.server.deps import Principal, Server, ServerDep, Who
from shirabe.server.routes.answers import QUESTION_CHARS

router = APIRouter(tags=["status"])


class HealthResponse(BaseModel):
    status: Literal["ok"]


@router.get("/healthz", response_model=HealthResponse)
def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get("/api/status")
def status(who: Who, server: ServerDep) -> dict[str, Any]:
    """Index status, counted over the documents the caller may read."""
    shirabe = server.shirabe
    sources = server.readable(who)
    ok = [s for s in sources if s.status == "ok"]
    categories = server.categories(who, sources)
    index = shirabe.status()
    return {
        "files": len(ok),
        "chunks": sum(s.chunks for s in ok),
        "failed": len(sources) - len(ok),
        "categories": [{"name": k, "files": v} for k, v in categories.items()],
        "embedding_model": index.embedding_model,
        # the last run (its counts and when it ran) tells of every folder: admins only
        "last_ingest": index.last_ingest if who.admin else None,
        "llm": {
            "configured": shirabe.settings.answering.generator != "extractive",
            "model": shirabe.generator.name,
        },
        "user": who.name,
        "admin": who.admin,
        "limits": {
            "question_chars": QUESTION_CHARS,
            "comment_chars": COMMENT_CHARS,
            "search_chars": SEARCH_CHARS,
        },
        "file_types": shirabe.file_types(),
        "watch": _watch(server, who, sources),
    }


def _watch(server: Server, who: Principal, readable: list[SourceInfo]) -> dict[str, Any] | None:
    """How the folders' watcher is doing; the failures of files the caller may read only; the
    folders, what is pending, and when anything last changed, was synced or scanned (activity
    in folders the caller may not read moves these) for admins only."""
    watcher = server.watcher
    if watcher is None:
        return None
    state = watcher.state
    failed = {s.path for s in readable if s.status != "ok"}
    return {
        "running": state.running,
        "folders": [server.show(f) for f in state.folders] if who.admin else None,
        "last_change_at": _iso(state.last_change_at) if who.admin else None,
        "last_sync_at": _iso(state.last_sync_at) if who.admin else None,
        "last_scan_at": _iso(state.last_scan_at) if who.admin else None,
        "pending": state.pending if who.admin else None,
        "changed": state.changed if who.admin else None,
        "error": state.error if who.admin else None,
        "failures": [
            {"path": server.show(path), "reason": reason}
            for path, reason in watcher.failures().items()
            if path in failed
        ],
    }


def _iso(seconds: float | None) -> str | None:
    if seconds is None:
        return None
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="seconds")


@router.get("/api/examples")
def examples(
    who: Who, server: ServerDep, n: Annotated[int, Query(ge=1, le=12)] = 4
) -> dict[str, Any]:
    """Questions to offer on an empty chat, about documents the caller may read only: from
    the configured eval file (``example_questions``), else from the documents' headings."""
    readable = [s for s in server.readable(who) if s.status == "ok"]
    configured = server.shirabe.settings.server.example_questions
    if configured is not None:
        shown = {server.show(s.path) for s in readable}
        try:
            found = from_cases(
                _cases(configured, configured.stat().st_mtime_ns), shown.__contains__, n
            )
        except (CaseFileError, OSError, UnicodeDecodeError):
            found = []  # a broken file is reported by `shirabe eval`; headings still serve
        if found:
            return {"items": found, "from": "cases"}
    chosen = islice(in_turns(readable, lambda s: s.metadata.get(CATEGORY, "")), 3 * n)
    documents = (_headings(server, s) for s in chosen)  # passages read only as needed
    return {"items": from_headings(documents, n), "from": "headings"}


@lru_cache(maxsize=4)
def _cases(path: Path, _mtime_ns: int) -> list[Case]:
    """The case file, read again only when it changes."""
    return load_cases(path)


def _headings(server: Server, source: SourceInfo) -> Headings:
    paths: list[tuple[str, ...]] = []
    for chunk in server.shirabe.catalog.passages(source):
        if chunk.heading_path and tuple(chunk.heading_path) not in paths:
            paths.append(tuple(chunk.heading_path))
    title = title_of(paths, PurePath(source.path).stem)
    return Headings(title, source.category or "", paths)
