"""What every request passes before the app sees it, and what every response carries.

In order: the ``Host`` it names must be one this server answers to (DNS rebinding); a request
that changes something (POST, PUT, PATCH, DELETE) must not come from another site's page
(``Origin``, ``Sec-Fetch-Site``); its body may not be larger than the limit (413, before it is
read when ``Content-Length`` says so, else as it arrives); a request to the API, ``/v1`` or
``/mcp`` must be signed in (or anonymous where allowed) before its body is read, from an address
that has not failed to sign in too often in the last minute (429); and a change a browser's
session cookie or a trusted proxy signs in must carry its CSRF token (403). Every response gets
``X-Content-Type-Options``, ``Referrer-Policy`` and a ``Content-Security-Policy``.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers, MutableHeaders
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from shirabe import web
from shirabe.server.cookies import CSRF_HEADER
from shirabe.server.deps import CALLER, Principal, Server, principal_of
from shirabe.server.errors import ApiError, error_response
from shirabe.settings import ServerSettings

logger = logging.getLogger(__name__)

LOCAL_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
ANY_ADDRESS = frozenset({"", "0.0.0.0", "::"})
CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
SIGNED_IN = ("/api/", "/v1/", "/mcp")
"""Paths whose caller is known before their body is read."""
BROWSER = "/api/"
"""Paths a session cookie or a trusted proxy signs in to (the page's API); ``/v1`` and
``/mcp`` take bearer tokens only."""
ANY_HOST = frozenset({"/healthz"})
"""Paths answered whatever ``Host`` a request names: they tell nothing (load balancers' probes)."""
UPLOAD = ("POST", "/api/documents")
WINDOW = 60.0
"""Seconds over which failed sign-ins are counted."""
AUDITS_PER_WINDOW = 100
"""Failed sign-ins recorded in the audit log per window, from all addresses together."""
FRAME_POLICY = "frame-ancestors 'none'"
SECURITY_HEADERS = {"X-Content-Type-Options": "nosniff", "Referrer-Policy": "same-origin"}


def host_name(authority: str) -> str | None:
    """The host of a ``Host`` header or of an origin's ``host[:port]``, in lower case, without
    port, brackets or trailing dot; None when it is not one."""
    authority = authority.strip().lower()
    if authority.startswith("["):
        name, bracket, port = authority[1:].partition("]")
        if not bracket:
            return None
    else:
        name, colon, port = authority.partition(":")
        port = colon + port
    if port and not (port.startswith(":") and port[1:].isascii() and port[1:].isdigit()):
        return None
    name = name.removesuffix(".")
    if not name or any(c in name for c in "/@\\ \t"):
        return None
    return name


@dataclass(frozen=True)
class Hosts:
    """The names this server answers to."""

    local: frozenset[str]
    """Localhost names and the listen address."""
    listed: frozenset[str]
    """``allowed_hosts`` (the names a proxy or a domain brings requests by)."""
    anything: bool
    """``allowed_hosts`` holds ``*``."""

    @classmethod
    def of(cls, settings: ServerSettings) -> Hosts:
        own = {settings.host.strip().strip("[]").lower()} - ANY_ADDRESS
        listed = frozenset(settings.allowed_hosts)
        return cls(LOCAL_NAMES | own, listed - {"*"}, "*" in listed)

    def allows(self, host: str) -> bool:
        name = host_name(host)
        return name is not None and (self.anything or name in self.local or name in self.listed)

    def same_origin(self, origin: str, host: str) -> bool:
        """Whether a page at ``origin`` is this server's own: it names the host and port the
        request does (the scheme is not compared: a proxy may take HTTPS and pass on HTTP),
        or a host of ``allowed_hosts`` (a proxy may rewrite ``Host``)."""
        parts = urlsplit(origin.strip())
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.path:
            return False
        if parts.query or parts.fragment or "?" in origin or "#" in origin:  # never an origin
            return False
        if parts.netloc.lower() == host.strip().lower():
            return True
        return host_name(parts.netloc) in self.listed


class SignInLimiter:
    """Failed sign-ins per client address, in windows of ``window`` seconds from an
    address's first failure: after ``limit`` of them, the address waits for the window's end.
    At most ``addresses`` are remembered (the longest quiet forgotten first)."""

    def __init__(
        self,
        limit: int,
        window: float = WINDOW,
        clock: Callable[[], float] = time.monotonic,
        addresses: int = 10_000,
    ) -> None:
        self.limit, self.window, self.clock, self.addresses = limit, window, clock, addresses
        self._windows: dict[str, tuple[float, int]] = {}

    def wait(self, address: str) -> float:
        """Seconds until ``address`` may try again; 0 when it may now."""
        found = self._windows.get(address)
        if found is None:
            return 0.0
        start, count = found
        left = start + self.window - self.clock()
        if left <= 0:
            del self._windows[address]
            return 0.0
        return left if count >= self.limit else 0.0

    def failed(self, address: str) -> int:
        """Count a failure of ``address``; how many it has made in its window."""
        now = self.clock()
        start, count = self._windows.pop(address, (now, 0))
        if now - start >= self.window:
            start, count = now, 0
        self._windows[address] = (start, count + 1)  # last: the most recent failure
        if len(self._windows) > self.addresses:
            self._forget(now)
        return count + 1

    def _forget(self, now: float) -> None:
        for key, (start, _) in list(self._windows.items()):
            if now - start >= self.window:
                del self._windows[key]
        while len(self._windows) > self.addresses:
            del self._windows[next(iter(self._windows))]


def client_key(address: str) -> str:
    """Whose failures count together: an IPv4 address, an IPv6 address's /64 (one machine
    holds a whole /64), or the name as given."""
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.ip_network(f"{parsed}/64", strict=False))
    return str(parsed)


class FailedSignIns:
    """Failed sign-ins counted per client address (a wrong token, a sign-in with the
    company's provider that failed), and the audit entries they make."""

    def __init__(self, server: Server, clock: Callable[[], float] = time.monotonic) -> None:
        self.server = server
        self.limiter = SignInLimiter(server.shirabe.settings.server.sign_in_attempts, clock=clock)
        self.audits = SignInLimiter(AUDITS_PER_WINDOW, clock=clock)

    def wait(self, address: str) -> float:
        return self.limiter.wait(address)

    async def failed(self, address: str, path: str, reason: str) -> None:
        """Count a failed sign-in; the audit log records an address's first in a window and
        the one that reaches the limit (and no more than AUDITS_PER_WINDOW in all)."""
        count = self.limiter.failed(address)
        limit = self.limiter.limit
        if count not in (1, limit) or self.audits.wait("all") > 0:
            return
        self.audits.failed("all")
        detail = (
            f"{reason}; {limit} failed sign-ins within {WINDOW:.0f} s: refused (429) until "
            "the window ends"
            if count == limit
            else f"{reason} (the first failed sign-in of this address in {WINDOW:.0f} s)"
        )
        try:
            await run_in_threadpool(
                self.server.shirabe.accounts.audit, address, "sign_in_failed", path, detail
            )
        except Exception:
            logger.exception("a failed sign-in could not be written to the audit log")


class Guard:
    """The checks above, in front of the whole app (errors in the API's shape)."""

    def __init__(self, app: ASGIApp, server: Server, sign_ins: FailedSignIns) -> None:
        settings = server.shirabe.settings
        self.app, self.server, self.settings = app, server, settings
        self.hosts = Hosts.of(settings.server)
        self.sign_ins = sign_ins

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        send = with_headers(send)
        limit = self.body_limit(scope)
        refused = self.refused(scope, limit)
        if refused is None and str(scope["path"]).startswith(SIGNED_IN):
            refused = await self.sign_in(scope)
        if refused is not None:
            await refused(scope, receive, send)
            return
        await Counted(self.app, limit)(scope, receive, send)

    def body_limit(self, scope: Scope) -> int:
        limit = self.settings.limits.max_request_bytes
        if (scope["method"], scope["path"]) == UPLOAD:
            limit += self.settings.limits.max_file_bytes  # the form around the files: the rest
        return limit

    def refused(self, scope: Scope, limit: int) -> Response | None:
        """The answer to a request refused by its headers alone, if it is."""
        headers = Headers(scope=scope)
        host = headers.get("host", "")
        if scope["path"] not in ANY_HOST and not self.hosts.allows(host):
            shown = host[:100] or "(none)"
            return error_response(
                421,
                "unknown_host",
                f"Host {shown!r} is not a name this server answers to; a server reached by "
                "that name must list it in SHIRABE_SERVER__ALLOWED_HOSTS",
            )
        if scope["method"] in CHANGING:
            origin = headers.get("origin")
            fetched_from = {v.strip().lower() for v in headers.getlist("sec-fetch-site")}
            if "cross-site" in fetched_from or (
                origin is not None and not self.hosts.same_origin(origin, host)
            ):
                shown = (origin or "another site")[:100]
                return error_response(
                    403,
                    "cross_origin",
                    f"a page of {shown} may not change anything here: open the page from "
                    "this server's own address",
                )
        length = headers.get("content-length", "")
        if length.isascii() and length.isdigit() and int(length) > limit:
            return too_large(limit)
        return None

    async def sign_in(self, scope: Scope) -> Response | None:
        """None when the caller is known (kept in the scope); else the answer: 401, or 429
        while the address has failed too often."""
        request = Request(scope)
        presented = "authorization" in request.headers
        address = client_key(request.client.host if request.client else "")
        wait = self.sign_ins.wait(address) if presented else 0.0
        if wait > 0:
            return error_response(
                429,
                "too_many_sign_ins",
                f"too many failed sign-ins from this address; try again in {math.ceil(wait)} s",
                headers={"Retry-After": str(math.ceil(wait))},
            )
        browser = request.url.path.startswith(BROWSER)
        try:  # the token's lookup writes when it was last used: not on the event loop
            caller = await run_in_threadpool(
                principal_of, self.server.shirabe, request, browser=browser
            )
        except ApiError as exc:
            if presented and exc.status_code == 401:
                await self.sign_ins.failed(address, request.url.path, str(exc.detail))
            return error_response(exc.status_code, exc.code, str(exc.detail), headers=exc.headers)
        except Exception:
            logger.exception("signing in failed")
            return error_response(500, "internal", "internal error; see the server log")
        scope[CALLER] = caller
        if scope["method"] in CHANGING and not csrf_carried(caller, request):
            return error_response(
                403,
                "csrf",
                f"a change made in a signed-in browser must carry its {CSRF_HEADER} header "
                "(the page sends it; reload the page)",
            )
        return None


def csrf_carried(caller: Principal, request: Request) -> bool:
    """Whether a change by ``caller`` carries the CSRF token it needs: none for a bearer
    token or anonymous caller, their session's (or proxy user's) for one a browser signs in;
    compared in constant time."""
    if caller.csrf is None:
        return True
    sent = request.headers.get(CSRF_HEADER, "")
    return hmac.compare_digest(sent.encode("utf-8"), caller.csrf.encode("utf-8"))


def too_large(limit: int) -> Response:
    return error_response(
        413,
        "too_large",
        f"the request body is larger than {limit:,} bytes (SHIRABE_LIMITS__MAX_REQUEST_BYTES; "
        "an upload may carry SHIRABE_LIMITS__MAX_FILE_BYTES more)",
    )


class Counted:
    """``app`` reading a body of at most ``limit`` bytes: past it, the request is answered
    413 and the app is told the client went away (what it sends after is dropped)."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app, self.limit = app, limit
        self.read, self.cut, self.started = 0, False, False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def counted() -> Message:
            if self.cut:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                self.read += len(message.get("body", b""))
                if self.read > self.limit:
                    self.cut = True
                    if not self.started:
                        await too_large(self.limit)(scope, receive, send)
                    return {"type": "http.disconnect"}
            return message

        async def sending(message: Message) -> None:
            if self.cut:
                return
            if message["type"] == "http.response.start":
                self.started = True
            await send(message)

        try:
            await self.app(scope, counted, sending)
        except Exception:
            if not self.cut:
                raise


def with_headers(send: Send) -> Send:
    """``send`` with the headers every response carries: no content sniffing, no referrer
    to other sites, never in a frame (a page's own policy where it sets one; the page's for
    any other HTML)."""

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = MutableHeaders(scope=message)
            for name, value in SECURITY_HEADERS.items():
                headers.setdefault(name, value)
            if "content-security-policy" not in headers:
                html = headers.get("content-type", "").startswith("text/html")
                headers["Content-Security-Policy"] = web.PAGE_POLICY if html else FRAME_POLICY
        await send(message)

    return sending


__all__ = ["FailedSignIns", "Guard", "Hosts", "SignInLimiter", "client_key", "host_name"]
