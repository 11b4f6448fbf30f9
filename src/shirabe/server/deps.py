"""What every route needs to know, as FastAPI dependencies: the server and who is calling.

Every request is made on behalf of a reader: the user of the bearer token, or an anonymous
reader (public documents only) when anonymous access is enabled. The caller of an API request
is known before its body is read (``server/guard.py``), and kept in its scope.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

from fastapi import Depends, Request

from shirabe.engine import Shirabe
from shirabe.errors import SignInError
from shirabe.records import Filters, Reader, SourceInfo
from shirabe.server.errors import ApiError
from shirabe.watch import Watcher

LOCAL_HOSTS = frozenset({"127.0.0.1", "::1", "localhost", "testclient"})
CALLER = "shirabe.caller"
"""The key of a request's scope under which the guard keeps who sends it."""


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: a user, or anonymous."""

    name: str | None
    reader: Reader

    @property
    def admin(self) -> bool:
        return self.reader.admin


@dataclass(frozen=True)
class Server:
    """The engine and the folders a server was started with."""

    shirabe: Shirabe
    folders: list[Path]
    """Folders served (``/api/reindex`` ingests them again), resolved."""
    uploads: Path
    """Where uploaded files are kept."""
    upload_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    """Uploads are checked and written one at a time."""
    watcher: Watcher | None = None
    """What keeps the index in step with ``folders`` (``serve --watch``)."""

    def show(self, path: str) -> str:
        """A stored path as callers see it: relative to the document root or a served folder;
        uploads as ``uploads/<category>/<name>``, so that an upload never looks like a
        document of the folders; else its name."""
        try:
            return "uploads/" + Path(path).relative_to(self.uploads).as_posix()
        except ValueError:
            pass
        document_root = self.shirabe.root.path
        roots = [document_root] if document_root else []
        for root in (*roots, *self.folders):
            try:
                return Path(path).relative_to(root).as_posix()
            except ValueError:
                continue
        return Path(path).name

    def readable(self, who: Principal) -> list[SourceInfo]:
        """The documents ``who`` may read."""
        return self.shirabe.catalog.readable(who.reader)

    def categories(
        self, who: Principal, readable: list[SourceInfo] | None = None
    ) -> dict[str, int]:
        """The categories of the documents ``who`` may read (``readable``, when known), with
        their files."""
        return self.shirabe.catalog.categories(self.readable(who) if readable is None else readable)

    def scope(self, who: Principal, categories: list[str] | None) -> Filters | None:
        """Filters for a search by ``who``: the categories asked for (in their canonical form:
        ``⼈事`` is ``人事``), within what they may read."""
        filters = Filters(categories=frozenset(categories)) if categories else None
        return self.shirabe.catalog.scope(who.reader, filters)


def server(request: Request) -> Server:
    found: Server = request.app.state.server
    return found


def principal(request: Request) -> Principal:
    """The caller, from the bearer token; anonymous only where the settings allow it."""
    return principal_of(server(request).shirabe, request)


def principal_of(shirabe: Shirabe, request: Request) -> Principal:
    """Who sends ``request`` (an API or ``/mcp`` request): the user of its bearer token, or
    anonymous where the settings allow it (:class:`ApiError` 401 otherwise); as the guard
    found when it has already asked."""
    known = request.scope.get(CALLER)
    if isinstance(known, Principal):
        return known
    authorization = request.headers.get("authorization", "")
    host = request.client.host if request.client else ""
    scheme, _, token = authorization.partition(" ")
    if authorization:
        if scheme.lower() != "bearer" or not token.strip():
            raise ApiError(401, "unauthorized", "use 'Authorization: Bearer <token>'")
        try:
            user = shirabe.accounts.sign_in(token.strip())
        except SignInError as exc:
            raise ApiError(401, "unauthorized", str(exc)) from None
        return Principal(user.name, user.reader)
    anonymous = shirabe.settings.server.anonymous
    if anonymous == "on" or (anonymous == "localhost" and host in LOCAL_HOSTS):
        return Principal(None, Reader())
    raise ApiError(401, "unauthorized", "sign in with an API token")


def require_admin(who: Annotated[Principal, Depends(principal)]) -> Principal:
    if not who.admin:
        raise ApiError(403, "forbidden", "admins only")
    return who


Who = Annotated[Principal, Depends(principal)]
Admin = Annotated[Principal, Depends(require_admin)]
ServerDep = Annotated[Server, Depends(server)]
