"""Signing in to the page and out of it.

The page keeps no token: an API token typed into it is exchanged for a session cookie
(``POST /api/session``), and the company's accounts sign in through the OpenID Connect provider
(``/auth/login``, then ``/auth/callback``) into the same kind of session. ``GET /auth/session``
tells the page who it is signed in as and the CSRF token its changes carry;
``DELETE /api/session`` signs out, ending the session on the server. Bearer tokens sign in
scripts, ``/v1`` and ``/mcp`` as before.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from shirabe.errors import AccountError, SignInError
from shirabe.records import Session
from shirabe.server.cookies import (
    FLOW_COOKIE,
    clear_flow,
    clear_session,
    secure,
    session_secret,
    set_flow,
    set_session,
)
from shirabe.server.deps import Principal, Server, ServerDep, Who, audit_sign_in, principal_of
from shirabe.server.errors import ApiError
from shirabe.server.guard import FailedSignIns, client_key
from shirabe.server.oidc import FLOW_SECONDS, Flow, OidcError, Provider, flow_cookie, read_flow
from shirabe.settings import parse_lifetime

logger = logging.getLogger(__name__)

router = APIRouter(tags=["sign-in"])

CALLBACK = "/auth/callback"
FAILED = "/?signin=failed"
"""Where a sign-in with the provider that failed sends the browser (the page says so)."""
NO_STORE = {"Cache-Control": "no-store"}
FLOW_MAC = "sign-in flow"


def session_json(who: Principal | None, server: Server) -> dict[str, Any]:
    """Who the page is signed in as (None: no one), how, until when, the CSRF token its
    changes carry, and whether the company's accounts sign in here."""
    return {
        "user": who.name if who else None,
        "admin": who.admin if who else False,
        "via": who.via if who else None,
        "csrf": who.csrf if who else None,
        "expires_at": who.session.expires_at if who and who.session else None,
        "oidc": server.shirabe.settings.sign_in.oidc,
    }


def _until(expires_at: str) -> int:
    """Seconds from now until ``expires_at``."""
    return int((datetime.fromisoformat(expires_at) - datetime.now(UTC)).total_seconds())


@router.get("/auth/session", include_in_schema=False)
def current(request: Request, server: ServerDep) -> JSONResponse:
    """Who the page is signed in as (``user`` None: no one, or anonymous), its CSRF token,
    and whether the company's accounts sign in here. Never a 401: the page asks before
    anyone has signed in."""
    headers = dict(NO_STORE)
    who: Principal | None
    try:
        who = principal_of(server.shirabe, request, browser=True)
    except ApiError as exc:  # no one, or a session that is over (its cookie is removed)
        headers |= dict(exc.headers or {})
        headers.pop("WWW-Authenticate", None)
        who = None
    return JSONResponse(session_json(who, server), headers=headers)


@router.post("/api/session")
def sign_in(who: Who, server: ServerDep, request: Request) -> JSONResponse:
    """Sign the page in with the API token the request carries (``Authorization: Bearer``):
    a session cookie instead of the token, lasting ``SHIRABE_SIGN_IN__SESSION_LIFETIME`` (at
    most as long as the token), and the CSRF token its changes must carry."""
    if who.via != "token" or who.name is None:
        raise ApiError(
            400, "token_required", "send the API token to sign in with: Authorization: Bearer"
        )
    shirabe = server.shirabe
    token = request.headers.get("authorization", "").partition(" ")[2].strip()
    lifetime = parse_lifetime(shirabe.settings.sign_in.session_lifetime)
    try:
        session, secret = shirabe.sessions.start(who.name, lifetime, "token", token=token)
    except SignInError as exc:
        raise ApiError(401, "unauthorized", str(exc)) from None
    shirabe.accounts.audit(
        who.name, "sign_in", request.url.path, f"API token; session until {session.expires_at}"
    )
    signed = Principal(who.name, who.reader, "session", shirabe.sessions.csrf(secret), session)
    response = JSONResponse(session_json(signed, server), headers=NO_STORE)
    https = secure(request, shirabe.settings.sign_in)
    set_session(response, secret, _until(session.expires_at), https=https)
    return response


@router.delete("/api/session")
def sign_out(who: Who, server: ServerDep, request: Request) -> JSONResponse:
    """Sign out: the browser's session ends on the server (its cookie no longer signs anyone
    in, wherever it was copied) and the cookie is removed."""
    shirabe = server.shirabe
    secret = session_secret(request)
    ended = shirabe.sessions.end(secret) if secret else None
    if ended is not None:
        shirabe.accounts.audit(
            ended.user.name, "sign_out", request.url.path, f"session ended ({ended.via})"
        )
    response = JSONResponse({"signed_out": ended is not None}, headers=NO_STORE)
    clear_session(response, https=secure(request, shirabe.settings.sign_in))
    return response


def _provider(request: Request) -> Provider:
    provider: Provider | None = request.app.state.provider
    if provider is None:
        raise ApiError(
            404, "not_found", "sign-in with the company's accounts is not configured here"
        )
    return provider


def _callback_url(request: Request, server: Server) -> str:
    base = server.shirabe.settings.sign_in.redirect_base_url
    return (base or str(request.base_url).rstrip("/")) + CALLBACK


@router.get("/auth/login", include_in_schema=False)
def login(request: Request, server: ServerDep) -> Response:
    """Send the browser to the company's provider to sign in, keeping the sign-in's state,
    nonce and PKCE verifier in a cookie the server signs."""
    provider = _provider(request)
    shirabe = server.shirabe
    https = secure(request, shirabe.settings.sign_in)
    flow = Flow.new()
    try:
        url = provider.begin(_callback_url(request, server), flow)
    except OidcError as exc:
        logger.warning("the sign-in provider cannot be used: %s", exc)
        return RedirectResponse(FAILED, status_code=303, headers=NO_STORE)
    response = RedirectResponse(url, status_code=303, headers=NO_STORE)
    value = flow_cookie(flow, lambda payload: shirabe.sessions.mac(FLOW_MAC, payload))
    set_flow(response, value, FLOW_SECONDS, https=https)
    return response


@router.get(CALLBACK, include_in_schema=False)
async def callback(request: Request, server: ServerDep) -> Response:
    """Where the provider sends the browser back: the sign-in is checked (state, code, ID
    token, nonce), the user made or their groups set anew, and a session begins. A sign-in
    that fails signs no one in: it is counted against the address and audited as a failed
    token is, and the page says it failed."""
    provider = _provider(request)
    shirabe = server.shirabe
    https = secure(request, shirabe.settings.sign_in)
    try:
        signed = await run_in_threadpool(_signed_in, request, server, provider)
    except (OidcError, AccountError) as exc:
        reason = exc.reason if isinstance(exc, OidcError) else "account"
        logger.warning("a sign-in with the provider failed (%s): %s", reason, exc)
        failed: FailedSignIns = request.app.state.sign_ins
        address = client_key(request.client.host if request.client else "")
        await failed.failed(address, request.url.path, f"OpenID Connect ({reason}): {exc}")
        response: Response = RedirectResponse(FAILED, status_code=303, headers=NO_STORE)
        clear_flow(response, https=https)
        return response
    session, secret = signed
    response = RedirectResponse("/", status_code=303, headers=NO_STORE)
    set_session(response, secret, _until(session.expires_at), https=https)
    clear_flow(response, https=https)
    return response


def _signed_in(request: Request, server: Server, provider: Provider) -> tuple[Session, str]:
    """The provider's answer checked, the user signed in, and their new session."""
    shirabe = server.shirabe
    flow = read_flow(
        request.cookies.get(FLOW_COOKIE),
        lambda payload: shirabe.sessions.mac(FLOW_MAC, payload),
    )
    identity = provider.finish(flow, dict(request.query_params), _callback_url(request, server))
    signed = shirabe.directory.sign_in(identity)
    lifetime = parse_lifetime(shirabe.settings.sign_in.session_lifetime)
    session, secret = shirabe.sessions.start(signed.user.name, lifetime, "oidc")
    audit_sign_in(shirabe, signed, request.url.path, f"OpenID Connect {provider.issuer}")
    return session, secret
