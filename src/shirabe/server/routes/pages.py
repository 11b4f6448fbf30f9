"""The pages people open: the chat page and the API reference, both with no external assets."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from shirabe import web

router = APIRouter(include_in_schema=False)


@router.get("/")
def index() -> HTMLResponse:
    """The chat page: one file, no external assets."""
    return HTMLResponse(web.page(), headers={"Content-Security-Policy": web.PAGE_POLICY})


@router.get("/assets/{name}")
def asset(name: str) -> Response:
    """The page's script, style sheet and icon."""
    if name not in web.ASSETS:
        return Response(status_code=404)
    return Response(
        web.asset(name),
        media_type=web.ASSETS[name],
        headers={"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"},
    )


@router.get("/favicon.ico")
def favicon() -> RedirectResponse:
    return RedirectResponse("/assets/favicon.svg", status_code=308)


@router.get("/docs")
def api_docs(request: Request) -> HTMLResponse:
    """The interactive API reference, served from bundled files so it works offline."""
    return get_swagger_ui_html(
        openapi_url=request.app.openapi_url or "/openapi.json",
        title="shirabe API",
        swagger_js_url="/docs-assets/swagger-ui-bundle.js",
        swagger_css_url="/docs-assets/swagger-ui.css",
        swagger_favicon_url="/docs-assets/favicon-32x32.png",
    )
