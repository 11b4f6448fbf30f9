"""What every route needs to know, as FastAPI dependencies: the server and who is calling.

Every request is made on behalf of a reader: the user of the bearer token; for the page's API
(``/api/``), the user a trusted proxy names or the user of the browser's session cookie; or
an anonymous reader (public documents only) when anonymous access is enabled. The caller of an
API request is known before its body is read (``server/guard.py``), and kept in its scope.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Literal

from fastapi import Depends, Request

from shirabe.engine import Shirabe
from shirabe.errors import AccountError, SignInError
from shirabe.records import Filters, Reader, Session, SignedIn, SourceInfo
from shirabe.server.cookies import cleared_session, secure, session_secret
from shirabe.server.errors import ApiError
from shirabe.server.proxy import proxy_identity
from shirabe.watch import Watcher

logger = logging.getLogger(__name__)

LOCAL_HOSTS = frozenset({"127.0.0.1", "::1", "localhost", "testclient"})
CALLER = "shirabe.caller"
"""The key of a request's scope under which the guard keeps who sends it."""


Via = Literal["token", "session", "proxy", "anonymous"]
SIGN_IN_AGAIN = "sign in again"


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: a user, or anonymous; how they were recognised; and, for a browser a
    cookie or a proxy signs in, the CSRF token its changes must carry."""

    name: str | None
    reader: Reader
    via: Via = "token"
    csrf: str | None = None
    session: Session | None = None

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


def principal_of(shirabe: Shirabe, request: Request, *, browser: bool = False) -> Principal:
    """Who sends ``request``: the user of its bearer token; with ``browser`` (the page's API),
    the user a trusted proxy names or the user of its session cookie; or anonymous where the
    settings allow it (:class:`ApiError` 401 otherwise). As the guard found when it has
    already asked."""
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
    if browser:
        found = browser_caller(shirabe, request)
        if found is not None:
            return found
    anonymous = shirabe.settings.server.anonymous
    if anonymous == "on" or (anonymous == "localhost" and host in LOCAL_HOSTS):
        return Principal(None, Reader(), "anonymous")
    raise ApiError(401, "unauthorized", "sign in with an API token")


def browser_caller(shirabe: Shirabe, request: Request) -> Principal | None:
    """The user a trusted proxy names, or else the user of the session cookie; None when the
    request carries neither (a session that has ended or expired is a 401 that removes the
    cookie)."""
    identity = proxy_identity(request, shirabe.settings.sign_in)
    if identity is not None:
        try:
            signed = shirabe.directory.sign_in(identity)
        except AccountError as exc:
            raise ApiError(401, "unauthorized", f"the proxy's user: {exc}") from None
        if signed.changed:
            audit_sign_in(shirabe, signed, request.url.path, "proxy")
        user = signed.user
        csrf = shirabe.sessions.mac("csrf proxy", user.name)
        return Principal(user.name, user.reader, "proxy", csrf)
    secret = session_secret(request)
    if secret is None:
        return None
    try:
        session = shirabe.sessions.find(secret)
    except SignInError as exc:
        cleared = cleared_session(https=secure(request, shirabe.settings.sign_in))
        raise ApiError(401, "unauthorized", f"{exc}: {SIGN_IN_AGAIN}", headers=cleared) from None
    user = session.user
    return Principal(user.name, user.reader, "session", shirabe.sessions.csrf(secret), session)


def audit_sign_in(shirabe: Shirabe, signed: SignedIn, path: str, how: str) -> None:
    """Record in the audit log that a directory user signed in, with the groups they got."""
    user, before = signed.user, signed.before
    detail = f"{how}; groups: {', '.join(user.groups) or '-'}" + (" (admin)" if user.admin else "")
    if before is None:
        detail += "; new user"
    elif signed.changed:
        detail += f"; before: {', '.join(before.groups) or '-'}" + (
            " (admin)" if before.admin else ""
        )
    try:
        shirabe.accounts.audit(user.name, "sign_in", path, detail)
    except Exception:
        logger.exception("a sign-in could not be written to the audit log")


def require_admin(who: Annotated[Principal, Depends(principal)]) -> Principal:
    if not who.admin:
        raise ApiError(403, "forbidden", "admins only")
    return who


Who = Annotated[Principal, Depends(principal)]
Admin = Annotated[Principal, Depends(require_admin)]
ServerDep = Annotated[Server, Depends(server)]
