"""The web chat page: one HTML file with no external assets, served by ``shirabe serve``."""

from __future__ import annotations

from functools import cache
from pathlib import Path

PAGE_POLICY = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "connect-src 'self'; img-src 'self' data:; form-action 'self'; base-uri 'none'"
)
"""The Content-Security-Policy the page is served with: nothing but itself and the API."""


@cache
def page() -> str:
    """The page's HTML."""
    return (Path(__file__).parent / "index.html").read_text(encoding="utf-8")
