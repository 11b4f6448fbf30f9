"""The HTTP API and the web page: a thin face over ``Shirabe``.

What a caller may not read never reaches them: searches and answers are filtered inside
retrieval, and document lists and counts are filtered the same way (``server/deps.py``).
Errors always have one shape, ``{"error": {"status", "code", "message", "fields"?}}``. Every
request passes the guard first (``server/guard.py``: host, origin, size, sign-in, CSRF). The
page signs in to a session cookie, by an API token or the company's accounts
(``server/routes/signin.py``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles
from mcp.server.transport_security import TransportSecuritySettings
from starlette.concurrency import run_in_threadpool
from starlette.routing import Route
from starlette.types import ASGIApp
from swagger_ui_bundle import swagger_ui_path

from shirabe.engine import Shirabe
from shirabe.errors import IndexBusyError
from shirabe.server.deps import Server
from shirabe.server.errors import install_error_handlers
from shirabe.server.guard import FailedSignIns, Guard
from shirabe.server.mcp import Authenticated, create_mcp, http_caller
from shirabe.server.oidc import Provider
from shirabe.server.routes import (
    access,
    admin,
    answers,
    audit,
    conversations,
    documents,
    openai,
    pages,
    people,
    signin,
    status,
)
from shirabe.watch import Watcher

logger = logging.getLogger(__name__)

MCP_PATH = "/mcp"


def create_app(
    shirabe: Shirabe,
    *,
    roots: list[Path] | None = None,
    watch: bool = False,
    clock: Callable[[], float] = time.monotonic,
) -> FastAPI:
    """The API over ``shirabe``; ``roots`` are the folders it serves (paths are shown
    relative to them, and ``/api/reindex`` ingests them again); with ``watch``, their changes
    are ingested as they happen. ``clock`` times the windows of failed sign-ins."""
    uploads = shirabe.uploads
    sign_in = shirabe.settings.sign_in
    if sign_in.oidc or sign_in.proxy_addresses:
        shirabe.directory  # noqa: B018  (a group map that cannot be read is reported here)

    folders = [r.resolve() for r in roots or []]
    watcher = Watcher(shirabe, folders) if watch and folders else None
    served = Server(shirabe, folders, uploads, watcher=watcher)
    mcp = create_mcp(served, http_caller(served))
    mcp_app = mcp.streamable_http_app(
        stateless_http=True,
        json_response=True,
        max_request_body_size=shirabe.settings.limits.max_request_bytes,
        # Host and Origin are checked by the guard, for every path alike
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        await run_in_threadpool(_warm_up, shirabe, uploads)
        if watcher is not None:
            watcher.start()
        try:
            async with mcp.session_manager.run():
                yield
        finally:
            if watcher is not None:
                await run_in_threadpool(watcher.stop)
            shirabe.close()

    app = Guarded(
        title="shirabe",
        summary="日本語ドキュメント検索・質問応答",
        version="0.1",
        lifespan=lifespan,
        docs_url=None,  # served by the pages router from local files: it works offline
        redoc_url=None,
    )
    app.state.server = served
    app.state.sign_ins = FailedSignIns(served, clock)
    app.state.provider = Provider(sign_in) if sign_in.oidc else None
    app.mount("/docs-assets", StaticFiles(directory=swagger_ui_path), name="docs-assets")
    install_error_handlers(app)
    routers = (
        pages,
        status,
        signin,
        answers,
        conversations,
        documents,
        audit,
        admin,
        people,
        access,
        openai,
    )
    for module in routers:
        app.include_router(module.router)
    # the Model Context Protocol (streamable HTTP), for the bearer tokens of the API
    mcp_route = next(r for r in mcp_app.routes if isinstance(r, Route) and r.path == MCP_PATH)
    app.router.routes.append(
        Route(
            MCP_PATH, Authenticated(mcp_route.endpoint, served), methods=["GET", "POST", "DELETE"]
        )
    )
    return app


class Guarded(FastAPI):
    """The app with the guard in front of everything, its error responses included."""

    def build_middleware_stack(self) -> ASGIApp:
        return Guard(super().build_middleware_stack(), self.state.server, self.state.sign_ins)


def _warm_up(shirabe: Shirabe, uploads: Path) -> None:
    """Load the model and open the index before the first request; bring uploads in line
    with the access map (a changed map re-tags them, as an ingest re-tags folders)."""
    shirabe.warm_up()
    if uploads.is_dir():
        try:
            shirabe.ingest([uploads], area=uploads, actor="server start")
        except IndexBusyError as exc:  # a long ingest elsewhere: uploads are re-tagged later
            logger.warning("uploads not re-read at start: %s", exc)
