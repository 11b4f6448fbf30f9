"""The web chat page: an HTML file, its script, style sheet and icon, with no external
assets, served by ``shirabe serve``."""

from __future__ import annotations

from functools import cache
from pathlib import Path

PAGE_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data: blob:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
"""The Content-Security-Policy the page is served with: nothing but its own files and the
API (no inline script or style)."""

ASSETS = {
    "app.js": "text/javascript; charset=utf-8",
    "admin.js": "text/javascript; charset=utf-8",
    "app.css": "text/css; charset=utf-8",
    "favicon.svg": "image/svg+xml",
}
"""The files of the page, by name, with their media types."""


@cache
def page() -> str:
    """The page's HTML."""
    return (Path(__file__).parent / "index.html").read_text(encoding="utf-8")


@cache
def asset(name: str) -> bytes:
    """One of :data:`ASSETS`; KeyError for any other name."""
    ASSETS[name]
    return (Path(__file__).parent / "static" / name).read_bytes()
