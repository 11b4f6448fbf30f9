"""A reverse proxy that signs people in and names them in headers, trusted only from the
addresses the settings list.

The address a request comes from is the connection's own (:class:`Peer` records it before
``X-Forwarded-For`` is read): a header that names a user is taken from a listed proxy only,
and from anywhere else it is ignored, as if it were not there. The proxy names the user in
``sign_in.proxy_user_header`` and their directory groups, comma-separated, in
``sign_in.proxy_groups_header`` (UTF-8); they are applied as those of the company's OpenID
Connect provider are.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, cast

from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from shirabe.records import Identity
from shirabe.settings import Settings, SignInSettings

PEER = "shirabe.peer"
"""The key of a request's scope under which :class:`Peer` keeps the connection's address."""
PROXY_ISSUER = "proxy"
"""Who vouches for the users a trusted proxy names."""
FORWARDED_DEFAULT = "127.0.0.1,::1"
"""Whose ``X-Forwarded-For`` and ``X-Forwarded-Proto`` are read without FORWARDED_ALLOW_IPS
(as uvicorn reads them)."""

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class Peer:
    """Keeps the address a connection comes from in the scope, before anything rewrites the
    client from a proxy's ``X-Forwarded-For``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            client = scope.get("client")
            scope[PEER] = client[0] if client else ""
        await self.app(scope, receive, send)


def behind_proxies(app: ASGIApp, settings: Settings) -> ASGIApp:
    """``app`` as ``shirabe serve`` runs it: the connection's address kept, then the client
    address and scheme taken from ``X-Forwarded-For`` and ``X-Forwarded-Proto`` when they come
    from a proxy uvicorn trusts (FORWARDED_ALLOW_IPS, default this machine) or one listed in
    ``sign_in.proxy_addresses``."""
    from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

    allowed = os.environ.get("FORWARDED_ALLOW_IPS", FORWARDED_DEFAULT).split(",")
    trusted = [a.strip() for a in allowed if a.strip()] + settings.sign_in.proxy_addresses
    inner: Any = ProxyHeadersMiddleware(cast(Any, app), trusted_hosts=trusted)
    return Peer(inner)


def peer(scope: Scope) -> str:
    """The address the connection of a request comes from."""
    found = scope.get(PEER)
    if isinstance(found, str):
        return found
    client = scope.get("client")
    return str(client[0]) if client else ""


@lru_cache(maxsize=8)
def _networks(entries: tuple[str, ...]) -> tuple[Network, ...]:
    return tuple(ipaddress.ip_network(e, strict=False) for e in entries)


def trusted(address: str, entries: Sequence[str]) -> bool:
    """Whether ``address`` is in one of the networks ``entries`` (addresses or CIDRs)."""
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return False
    if isinstance(parsed, ipaddress.IPv6Address) and parsed.ipv4_mapped is not None:
        parsed = parsed.ipv4_mapped
    return any(parsed in network for network in _networks(tuple(entries)))


def _header(request: Request, name: str) -> str:
    """A header's value as the proxy wrote it (UTF-8, else as it came)."""
    value = request.headers.get(name, "")
    try:
        return value.encode("latin-1").decode("utf-8").strip()
    except (UnicodeEncodeError, UnicodeDecodeError):
        return value.strip()


def proxy_identity(request: Request, settings: SignInSettings) -> Identity | None:
    """Who a trusted proxy says sends ``request``; None when the request does not come from
    one, or names no one."""
    if not settings.proxy_addresses or not trusted(peer(request.scope), settings.proxy_addresses):
        return None
    name = _header(request, settings.proxy_user_header)
    if not name:
        return None
    groups = tuple(g.strip() for g in _header(request, settings.proxy_groups_header).split(","))
    return Identity(PROXY_ISSUER, name, name, tuple(g for g in groups if g))
