"""The cookies of a browser signed in to the page, and the header its changes carry.

The session cookie holds the session's secret (the server keeps only its SHA-256): HttpOnly,
so no script reads it; ``SameSite=Lax``, so no other site's request carries it but a
top-level navigation; ``path=/``; ``Secure`` when the page is served over https. It lasts as
long as the session. A sign-in with the company's provider keeps its state, nonce and PKCE
verifier in a second cookie, signed by the server, for the ten minutes the sign-in may take.
Every change a cookie signs in must carry the session's CSRF token in :data:`CSRF_HEADER`.
"""

from __future__ import annotations

from http.cookies import SimpleCookie

from starlette.requests import Request
from starlette.responses import Response

from shirabe.settings import SignInSettings

SESSION_COOKIE = "shirabe_session"
FLOW_COOKIE = "shirabe_sign_in"
FLOW_PATH = "/auth/"
CSRF_HEADER = "X-CSRF-Token"


def secure(request: Request, settings: SignInSettings) -> bool:
    """Whether cookies are sent over https only: the request came over https (a proxy that
    takes https says so in ``X-Forwarded-Proto`` when trusted), or the page's address is
    https."""
    base = settings.redirect_base_url or ""
    return request.url.scheme == "https" or base.startswith("https://")


def session_secret(request: Request) -> str | None:
    """The secret of the session cookie the request carries, if it carries one."""
    return request.cookies.get(SESSION_COOKIE) or None


def set_session(response: Response, secret: str, seconds: int, *, https: bool) -> None:
    response.set_cookie(
        SESSION_COOKIE,
        secret,
        max_age=max(seconds, 0),
        path="/",
        secure=https,
        httponly=True,
        samesite="lax",
    )


def clear_session(response: Response, *, https: bool) -> None:
    response.delete_cookie(SESSION_COOKIE, path="/", secure=https, httponly=True, samesite="lax")


def cleared_session(*, https: bool) -> dict[str, str]:
    """The header that removes the session cookie, for an error response."""
    cookie: SimpleCookie = SimpleCookie()
    cookie[SESSION_COOKIE] = ""
    morsel = cookie[SESSION_COOKIE]
    morsel["max-age"] = 0
    morsel["expires"] = "Thu, 01 Jan 1970 00:00:00 GMT"
    morsel["path"] = "/"
    morsel["httponly"] = True
    morsel["samesite"] = "lax"
    if https:
        morsel["secure"] = True
    return {"Set-Cookie": morsel.OutputString()}


def set_flow(response: Response, value: str, seconds: int, *, https: bool) -> None:
    response.set_cookie(
        FLOW_COOKIE,
        value,
        max_age=seconds,
        path=FLOW_PATH,
        secure=https,
        httponly=True,
        samesite="lax",
    )


def clear_flow(response: Response, *, https: bool) -> None:
    response.delete_cookie(FLOW_COOKIE, path=FLOW_PATH, secure=https, httponly=True, samesite="lax")
