"""The audit log: who uploaded, replaced, deleted or changed the readers of a document, who
changed users, tokens or the access map, who signed in to the page and out of it, and which
addresses failed to sign in; filtered on the server."""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field

from shirabe.records import AuditQuery
from shirabe.server.deps import Admin, Server, ServerDep

router = APIRouter(tags=["audit"])

DOCUMENT_ACTIONS = frozenset({"upload", "replace", "delete", "readers"})
"""Actions whose ``path`` is a document's key (shown as the document list names it)."""


class AuditFilters(BaseModel):
    """Which entries to list, the newest first: each filter given narrows the list."""

    offset: Annotated[int, Field(ge=0, le=2**31)] = 0
    limit: Annotated[int, Field(ge=1, le=1000)] = 100
    actor: Annotated[str | None, Field(max_length=200, description="part of the actor")] = None
    action: Annotated[str | None, Field(max_length=64, description="one action")] = None
    path: Annotated[
        str | None, Field(max_length=1000, description="part of the document or user")
    ] = None
    since: Annotated[datetime | None, Field(description="at or after (no zone: UTC)")] = None
    until: Annotated[datetime | None, Field(description="before (no zone: UTC)")] = None


@router.get("/api/audit")
def audit(
    who: Admin, server: ServerDep, filters: Annotated[AuditFilters, Query()]
) -> dict[str, Any]:
    """Admins only: the newest entries first, those the filters ask for; ``path`` as stored,
    ``shown`` as the page and the document list name it (``uploads/<category>/<name>``, or
    relative to the root)."""
    f = filters
    query = AuditQuery(actor=f.actor, action=f.action, path=f.path, since=f.since, until=f.until)
    entries = server.shirabe.audit_log(limit=f.limit, offset=f.offset, query=query)
    return {
        "offset": f.offset,
        "items": [asdict(e) | {"shown": _shown(server, e.action, e.path)} for e in entries],
    }


def _shown(server: Server, action: str, path: str) -> str:
    """A document's place as the document list names it; anything else (a root, a user, the
    access map's file, a sign-in's, sign-out's or failed sign-in's request path) as it is."""
    return server.show(path) if action in DOCUMENT_ACTIONS else path
