"""The web chat page: an HTML file, its script (JavaScript modules that import one another,
served as they are), style sheet and icon, with no external assets, served by ``shirabe serve``."""

from __future__ import annotations

from functools import cache
from pathlib import Path

PAGE_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data: blob:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
"""The Content-Security-Policy the page is served with: nothing but its own files and the
API (no inline script or style)."""

STATIC = Path(__file__).parent / "static"

MEDIA_TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}
"""The media type of each kind of file the page is made of."""

ASSETS = {
    path.name: MEDIA_TYPES[path.suffix]
    for path in sorted(STATIC.iterdir())
    if path.suffix in MEDIA_TYPES
}
"""The files of the page, by name, with their media types: every script module (``app.js``
starts the page and imports the others), the style sheet and the icon in ``static/``."""


@cache
def page() -> str:
    """The page's HTML."""
    return (Path(__file__).parent / "index.html").read_text(encoding="utf-8")


@cache
def asset(name: str) -> bytes:
    """One of :data:`ASSETS`; KeyError for any other name."""
    ASSETS[name]
    return (STATIC / name).read_bytes()
