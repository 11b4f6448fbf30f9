"""The admin view's data: users with their groups and tokens, groups with their members and
documents, and the ingest runs. Admins only: these are index-wide."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from shirabe.records import PUBLIC
from shirabe.server.deps import Admin, ServerDep

router = APIRouter(tags=["admin"])


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
    """The newest ingest runs first: when each finished, how long it took, its counts."""
    return {"items": server.shirabe.ingest_runs(limit)}
