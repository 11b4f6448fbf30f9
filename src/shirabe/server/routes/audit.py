"""The audit log: who uploaded, replaced, deleted or changed the readers of a document, who
signed in to the page and out of it, and which addresses failed to sign in."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated, Any

from fastapi import APIRouter, Query

from shirabe.server.deps import Admin, Server, ServerDep

router = APIRouter(tags=["audit"])


@router.get("/api/audit")
def audit(
    who: Admin,
    server: ServerDep,
    offset: Annotated[int, Query(ge=0, le=2**31)] = 0,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> dict[str, Any]:
    """Admins only: the newest entries first; ``path`` as stored, ``shown`` as the page and
    the document list name it (``uploads/<category>/<name>``, or relative to the root)."""
    entries = server.shirabe.accounts.audit_log(limit=limit, offset=offset)
    return {
        "offset": offset,
        "items": [asdict(e) | {"shown": _shown(server, e.action, e.path)} for e in entries],
    }


def _shown(server: Server, action: str, path: str) -> str:
    """A document's place as the document list names it; a root as the folder it is (its
    place below itself would be "."), a sign-in's or sign-out's request path as it is."""
    return (
        path if action in ("root", "sign_in", "sign_out", "sign_in_failed") else server.show(path)
    )
