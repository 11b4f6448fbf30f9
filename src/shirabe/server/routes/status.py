"""Liveness and the index status as the caller may see it."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter
from pydantic import BaseModel

from shirabe.access.conversations import COMMENT_CHARS
from shirabe.indexing.tags import CATEGORY
from shirabe.server.deps import ServerDep, Who
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
    categories: dict[str, int] = {}
    for s in ok:
        name = s.metadata.get(CATEGORY)
        if name:
            categories[name] = categories.get(name, 0) + 1
    index = shirabe.store.status()
    return {
        "files": len(ok),
        "chunks": sum(s.chunks for s in ok),
        "failed": len(sources) - len(ok),
        "categories": [{"name": k, "files": v} for k, v in sorted(categories.items())],
        "embedding_model": index.embedding_model,
        # the counts of the last run are index-wide: admins only
        "last_ingest": index.last_ingest if who.admin else _when(index.last_ingest),
        "llm": {
            "configured": shirabe.settings.generator != "extractive",
            "model": shirabe.generator.name,
        },
        "user": who.name,
        "admin": who.admin,
        "limits": {"question_chars": QUESTION_CHARS, "comment_chars": COMMENT_CHARS},
    }


def _when(last: dict[str, object] | None) -> dict[str, object] | None:
    """Of the last ingest, only when it ran."""
    if last is None:
        return None
    return {"finished_at": last.get("finished_at")}
