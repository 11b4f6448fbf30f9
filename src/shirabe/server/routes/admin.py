"""The admin view's data and the index's upkeep: users with their groups and tokens, groups
with their members and documents, the ingest runs (and those under way), failed entries
removed, documents and folders read again. Admins only: these are index-wide."""

from __future__ import annotations

import unicodedata
from dataclasses import asdict
from pathlib import PurePosixPath
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from pydantic import BaseModel, Field

from shirabe.records import PUBLIC, IngestReport, Progress
from shirabe.server.deps import Admin, Principal, Server, ServerDep
from shirabe.server.errors import ApiError
from shirabe.server.routes.streams import answered

router = APIRouter(tags=["admin"])

MAX_ID = 2**63 - 1
UPLOADS = "uploads"
"""The first folder of an upload's path as the document list shows it."""


@router.get("/api/admin/users")
def users(who: Admin, server: ServerDep) -> dict[str, Any]:
    """Every user with their groups, how many live tokens they hold (neither revoked nor
    expired; never the tokens) and when the first of those expires (None: none does)."""
    accounts = server.shirabe.accounts
    tokens = [t for t in accounts.list_tokens() if not t.revoked and not t.expired()]
    items = []
    for user in accounts.list_users():
        own = [t for t in tokens if t.user == user.name]
        used = [t.last_used_at for t in own if t.last_used_at]
        ending = [t.expires_at for t in own if t.expires_at]
        items.append(
            {
                "name": user.name,
                "groups": list(user.groups),
                "admin": user.admin,
                "created_at": user.created_at,
                "tokens": len(own),
                "tokens_expire_at": min(ending) if ending else None,
                "last_used_at": max(used) if used else None,
            }
        )
    return {"items": items}


@router.get("/api/admin/groups")
def groups(who: Admin, server: ServerDep) -> dict[str, Any]:
    """Every group named by a user or a document: its members and the documents it may read
    (``public`` is read by everyone signed in or not)."""
    members: dict[str, list[str]] = {}
    for user in server.shirabe.accounts.list_users():
        for group in user.groups:
            members.setdefault(group, []).append(user.name)
    documents: dict[str, int] = {}
    unreadable = 0
    for source in server.readable(who):
        found = source.groups
        unreadable += not found
        for group in found:
            documents[group] = documents.get(group, 0) + 1
    names = sorted(set(members) | set(documents) | {PUBLIC})
    return {
        "items": [
            {
                "name": name,
                "members": sorted(members.get(name, [])),
                "everyone": name == PUBLIC,
                "documents": documents.get(name, 0),
            }
            for name in names
        ],
        "admins_only": unreadable,
    }


@router.get("/api/admin/ingests")
def ingests(
    who: Admin, server: ServerDep, limit: Annotated[int, Query(ge=1, le=500)] = 20
) -> dict[str, Any]:
    """The newest ingest runs first: when each finished, how long it took, its counts; and
    the runs of this server under way (``running``), each as far as it has gone."""
    running = [
        asdict(run) | {"current": server.show(run.current) if run.current else None}
        for run in server.shirabe.running_ingests()
    ]
    return {"items": server.shirabe.ingest_runs(limit), "running": running}


def _report(server: Server, report: IngestReport) -> dict[str, Any]:
    return {
        "counts": report.counts,
        "seconds": report.seconds,
        "files": [
            {"path": server.show(f.path), "outcome": f.outcome, "reason": f.reason}
            for f in report.files
        ],
    }


@router.delete("/api/admin/failed")
def remove_failed(who: Admin, server: ServerDep) -> dict[str, Any]:
    """Remove every failed entry (a failed upload's file too); each is audited. A file in the
    folders that still fails comes back with the next ingest of its folder."""
    removed = server.shirabe.remove_failed(actor=who.name)
    return {"removed": [server.show(key) for key in removed]}


@router.delete("/api/admin/failed/{document_id}")
def remove_one_failed(
    who: Admin, server: ServerDep, document_id: Annotated[int, Path(ge=1, le=MAX_ID)]
) -> dict[str, Any]:
    """Remove one failed entry; 409 for a document that did not fail (delete it instead)."""
    source = server.shirabe.catalog.document(document_id, who.reader)
    if source is None:
        raise ApiError(404, "not_found", f"no document {document_id}")
    if source.status == "ok":
        raise ApiError(409, "not_failed", f"document {document_id} did not fail")
    removed = server.shirabe.remove_failed(source.path, actor=who.name)
    return {"removed": [server.show(key) for key in removed]}


class Reread(BaseModel):
    """What to read again: one document, or a folder as the document list names it
    (``人事``, ``uploads/総務``)."""

    document: Annotated[int | None, Field(ge=1, le=MAX_ID)] = None
    folder: Annotated[str | None, Field(min_length=1, max_length=1000)] = None


@router.post("/api/admin/reread")
async def reread(who: Admin, server: ServerDep, request: Request, body: Reread) -> Any:
    """Ingest one document or folder again. JSON, or with ``Accept: text/event-stream`` a
    ``progress`` event per file and a final ``done``, as an upload gives them."""
    key = _target(server, who, body)

    def work(progress: Progress | None) -> IngestReport:
        return server.shirabe.reread(key, progress, actor=who.name)

    return await answered(request, server, work, lambda report: _report(server, report))


def _target(server: Server, who: Principal, body: Reread) -> str:
    """The key ``body`` names: a document the caller may read, or a folder below the
    document root or the uploads area (404 for anything else)."""
    if (body.document is None) == (body.folder is None):
        raise ApiError(422, "invalid_request", "give either document or folder")
    if body.document is not None:
        source = server.shirabe.catalog.document(body.document, who.reader)
        if source is None:
            raise ApiError(404, "not_found", f"no document {body.document}")
        return source.path
    parts = PurePosixPath(unicodedata.normalize("NFC", body.folder or "")).parts
    if not parts or any(p in ("..", ".", "/") or "\\" in p or "\0" in p for p in parts):
        raise ApiError(404, "not_found", f"no folder {body.folder}")
    base = server.uploads if parts[0] == UPLOADS else server.shirabe.root.path
    rest = parts[1:] if parts[0] == UPLOADS else parts
    if base is None or not (folder := base.joinpath(*rest)).is_dir():
        raise ApiError(404, "not_found", f"no folder {body.folder}")
    return str(folder)
