"""The pages people open: the chat page and the API reference, both with no external assets."""

from __future__ import annotations

import base64
import hashlib
import re

from fastapi import APIRouter, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from shirabe import web

router = APIRouter(include_in_schema=False)

DOCS_POLICY = (
    "default-src 'none'; script-src 'self' {scripts}; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; "
    "frame-ancestors 'none'"
)
"""The API reference's Content-Security-Policy: its bundled files, the inline script that
starts it (by hash) and the style attributes it sets; nothing from elsewhere."""
_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.DOTALL)


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
    page = get_swagger_ui_html(
        openapi_url=request.app.openapi_url or "/openapi.json",
        title="shirabe API",
        swagger_js_url="/docs-assets/swagger-ui-bundle.js",
        swagger_css_url="/docs-assets/swagger-ui.css",
        swagger_favicon_url="/docs-assets/favicon-32x32.png",
    )
    page.headers["Content-Security-Policy"] = docs_policy(bytes(page.body).decode("utf-8"))
    return page


def docs_policy(html: str) -> str:
    """:data:`DOCS_POLICY` allowing exactly the inline scripts of ``html``."""
    hashes = (
        base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
        for script in _INLINE_SCRIPT.findall(html)
    )
    return DOCS_POLICY.format(scripts=" ".join(f"'sha256-{h}'" for h in hashes))
