"""Every admin route, found by walking the app's routes (so that a route added later is
walked too), refused by the server to a user who is not an admin (403) and to an anonymous
caller (401 where anonymous access is off, 403 where it is on), with nothing changed."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute

from shirabe.server.deps import require_admin

from tests.server.admin_served import Served, served

pytestmark = pytest.mark.slow

NEW = {
    ("POST", "/api/admin/users"),
    ("PATCH", "/api/admin/users/{name}"),
    ("DELETE", "/api/admin/users/{name}"),
    ("GET", "/api/admin/tokens"),
    ("POST", "/api/admin/tokens"),
    ("DELETE", "/api/admin/tokens/{token_id}"),
    ("DELETE", "/api/admin/failed"),
    ("DELETE", "/api/admin/failed/{document_id}"),
    ("POST", "/api/admin/reread"),
    ("GET", "/api/admin/access"),
    ("POST", "/api/admin/access/preview"),
    ("PUT", "/api/admin/access"),
}
"""The routes of the admin page's actions: the walk must find each of them."""


def needs_admin(dependant: Dependant) -> bool:
    return any(d.call is require_admin or needs_admin(d) for d in dependant.dependencies)


def api_routes(routes: Any) -> Iterator[APIRoute]:
    """The API routes among ``routes``, those of included routers too (FastAPI keeps an
    included router as a route of its own, ``original_router``)."""
    for route in routes:
        included = getattr(route, "original_router", None)
        if included is not None:
            yield from api_routes(included.routes)
        elif isinstance(route, APIRoute):
            yield route


def every_route(api: Served) -> set[tuple[str, str]]:
    """(method, path) of every API route of the app, checked against its OpenAPI schema:
    a route the walk would miss fails here."""
    app: Any = api.client.app
    found = {(m, r.path) for r in api_routes(app.routes) for m in r.methods or ()}
    schema = api.client.get("/openapi.json").json()["paths"]
    listed = {(m.upper(), path) for path, ops in schema.items() for m in ops}
    assert listed <= found
    return found


def admin_routes(api: Served) -> set[tuple[str, str]]:
    """(method, path) of every route of the app that depends on the admin check."""
    app: Any = api.client.app
    return {
        (method, route.path)
        for route in api_routes(app.routes)
        if needs_admin(route.dependant)
        for method in route.methods or ()
    }


def state(api: Served) -> tuple[Any, ...]:
    """What an admin route could change: users, tokens, documents, the map, the audit log."""
    shirabe = api.shirabe
    return (
        shirabe.people.users(),
        [(t.id, t.user, t.revoked, t.expires_at) for t in shirabe.people.tokens()],
        [(s.path, s.status, s.groups) for s in shirabe.store.list_sources()],
        api.access.read_text(encoding="utf-8"),
        len(shirabe.audit_log(limit=1000)),
    )


def walk(api: Served, headers: dict[str, str]) -> dict[tuple[str, str], int]:
    """Each admin route called with ``headers``: its status."""
    found = {}
    for method, path in sorted(admin_routes(api)):
        url = re.sub(r"\{[^}]+\}", "1", path)
        body: dict[str, Any] | None = {} if method != "GET" else None
        response = api.client.request(method, url, headers=headers, json=body)
        found[(method, path)] = response.status_code
    return found


def test_the_walk_finds_every_admin_route(tmp_path: Path) -> None:
    with served(tmp_path) as api:
        found = admin_routes(api)
        assert found >= NEW
        under_admin = {
            (method, path)
            for method, path in every_route(api)
            if path.startswith(("/api/admin/", "/api/audit"))
        }
        assert under_admin <= found  # an admin path without the admin check fails here


def test_a_user_who_is_not_an_admin_and_anonymous_callers_are_refused(tmp_path: Path) -> None:
    with served(tmp_path / "off", anonymous="off") as api:
        before = state(api)
        for user in ("taro", "hana"):
            refused = walk(api, api.bearer(user))
            assert set(refused.values()) == {403}, refused
        anonymous = walk(api, {})
        assert set(anonymous.values()) == {401}, anonymous
        assert state(api) == before
    with served(tmp_path / "on", anonymous="on") as api:
        before = state(api)
        anonymous = walk(api, {})
        assert set(anonymous.values()) == {403}, anonymous
        assert state(api) == before
