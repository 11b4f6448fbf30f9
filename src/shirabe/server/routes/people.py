"""Users, groups and API tokens, managed from the admin page: the same operations as the
``users`` and ``tokens`` commands, each audited as the admin who made it. Admins only.

A token's secret is in the answer that creates it and nowhere else: the server keeps only its
hash, and lists tokens without it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query
from pydantic import BaseModel, Field

from shirabe.errors import (
    AccountConflictError,
    AccountError,
    ConfigurationError,
    LastAdminError,
    NoAccountError,
)
from shirabe.records import User
from shirabe.server.deps import Admin, ServerDep
from shirabe.server.errors import ApiError

router = APIRouter(tags=["admin"])

MAX_GROUP_CHARS = 64
Name = Annotated[str, Field(min_length=1, max_length=64)]
Groups = list[Annotated[str, Field(max_length=MAX_GROUP_CHARS)]]
MAX_ID = 2**63 - 1


class NewUser(BaseModel):
    name: Name
    groups: Annotated[Groups, Field(max_length=64)] = []
    admin: bool = False


class UserChange(BaseModel):
    """What to change; a field left out stays as it is."""

    groups: Annotated[Groups | None, Field(max_length=64)] = None
    admin: bool | None = None


class NewToken(BaseModel):
    user: Name
    label: Annotated[str, Field(max_length=100)] = ""
    expires: Annotated[str | None, Field(max_length=16, description="12h, 90d, 8w")] = None
    """How long it lasts; None: the site's longest (``server.token_lifetime``), else never."""


@contextmanager
def refusals() -> Iterator[None]:
    """An account change refused by the engine, as the API's error."""
    try:
        yield
    except NoAccountError as exc:
        raise ApiError(404, "not_found", str(exc)) from None
    except LastAdminError as exc:
        raise ApiError(409, "last_admin", str(exc)) from None
    except AccountConflictError as exc:
        raise ApiError(409, "conflict", str(exc)) from None
    except (AccountError, ConfigurationError) as exc:
        raise ApiError(422, "invalid_request", str(exc)) from None


def _user(user: User) -> dict[str, Any]:
    return {"name": user.name, "groups": list(user.groups), "admin": user.admin}


@router.post("/api/admin/users", status_code=201)
def add_user(who: Admin, server: ServerDep, body: NewUser) -> dict[str, Any]:
    """Add a user with their groups (``admin``: reads and manages everything)."""
    with refusals():
        user = server.shirabe.people.add_user(
            body.name, body.groups, admin=body.admin, actor=who.name
        )
    return _user(user)


@router.patch("/api/admin/users/{name}")
def change_user(who: Admin, server: ServerDep, name: str, body: UserChange) -> dict[str, Any]:
    """Replace a user's groups, or grant or take the admin role: never from the last admin
    (409 ``last_admin``). Their next request reads with the new groups."""
    with refusals():
        user = server.shirabe.people.update_user(
            name, groups=body.groups, admin=body.admin, actor=who.name
        )
    return _user(user)


@router.delete("/api/admin/users/{name}")
def remove_user(who: Admin, server: ServerDep, name: str) -> dict[str, Any]:
    """Remove a user: their tokens stop working at once. Never the last admin (409)."""
    with refusals():
        server.shirabe.people.remove_user(name, actor=who.name)
    return {"removed": name}


@router.get("/api/admin/tokens")
def tokens(
    who: Admin,
    server: ServerDep,
    user: Annotated[str | None, Query(max_length=64)] = None,
) -> dict[str, Any]:
    """Tokens (of ``user``), oldest first: never their secrets, which are not kept."""
    found = server.shirabe.people.tokens(user)
    return {
        "items": [
            {
                "id": t.id,
                "user": t.user,
                "label": t.label,
                "created_at": t.created_at,
                "expires_at": t.expires_at,
                "last_used_at": t.last_used_at,
                "revoked": t.revoked,
                "expired": t.expired(),
            }
            for t in found
        ],
        "longest": server.shirabe.settings.server.token_lifetime,
    }


@router.post("/api/admin/tokens", status_code=201)
def create_token(who: Admin, server: ServerDep, body: NewToken) -> dict[str, Any]:
    """A new token for ``user``: its secret is in this answer only (shown once)."""
    with refusals():
        info, secret = server.shirabe.people.create_token(
            body.user, body.label, expires=body.expires, actor=who.name
        )
    return {
        "id": info.id,
        "user": info.user,
        "label": info.label,
        "created_at": info.created_at,
        "expires_at": info.expires_at,
        "token": secret,
    }


@router.delete("/api/admin/tokens/{token_id}")
def revoke_token(
    who: Admin, server: ServerDep, token_id: Annotated[int, Path(ge=1, le=MAX_ID)]
) -> dict[str, Any]:
    """End a token at once."""
    with refusals():
        info = server.shirabe.people.revoke_token(token_id, actor=who.name)
    return {"revoked": info.id, "user": info.user}
