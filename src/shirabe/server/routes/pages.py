"""The pages people open: the chat page and the API reference, both with no external assets."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse

from shirabe import web

router = APIRouter(include_in_schema=False)


@router.get("/")
def index() -> HTMLResponse:
    """The chat page: one file, no external assets."""
    return HTMLResponse(web.page(), headers={"Content-Security-Policy": web.PAGE_POLICY})


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
