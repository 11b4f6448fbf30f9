"""The main content of a page: chrome (navigation, site header and footer, forms, side bars)
and hidden elements removed, ``<main>``, ``role="main"`` or a single ``<article>`` preferred."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

_DROP_TAGS = frozenset(
    {
        "script",
        "style",
        "noscript",
        "template",
        "nav",
        "aside",
        "form",
        "button",
        "input",
        "select",
        "textarea",
        "label",
        "iframe",
        "frame",
        "frameset",
        "object",
        "embed",
        "svg",
        "math",
        "canvas",
        "video",
        "audio",
        "map",
        "dialog",
        "title",
        "link",
        "meta",
    }
)
_DROP_ROLES = frozenset(
    {"navigation", "banner", "contentinfo", "complementary", "search", "menu", "menubar"}
)
_CHROME_NAMES = frozenset(
    {
        "header",
        "footer",
        "nav",
        "navi",
        "navbar",
        "navigation",
        "gnav",
        "globalnav",
        "global-nav",
        "localnav",
        "menu",
        "sidebar",
        "side-bar",
        "sidemenu",
        "breadcrumb",
        "breadcrumbs",
        "topicpath",
        "pankuzu",
        "skip",
        "skiplink",
        "pagetop",
        "page-top",
    }
)
"""Whole ``id``/``class`` tokens that mark page chrome on pages without semantic elements."""
_SECTIONING = frozenset({"article", "aside", "main", "nav", "section"})
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)


def _is_hidden(tag: Any) -> bool:
    if tag.has_attr("hidden"):
        return True
    if str(tag.get("aria-hidden", "")).lower() == "true":
        return True
    return bool(_HIDDEN_STYLE.search(str(tag.get("style", ""))))


def _is_chrome(tag: Any) -> bool:
    """Elements that are page furniture rather than content."""
    name = tag.name
    if name in _DROP_TAGS:
        return True
    role = str(tag.get("role", "")).lower()
    if role in _DROP_ROLES:
        return True
    if name in ("header", "footer"):
        # Only a page-level header or footer is chrome; inside an article it is content.
        return tag.find_parent(list(_SECTIONING)) is None
    return False


def _has_chrome_name(tag: Any) -> bool:
    tokens = [str(tag.get("id", ""))]
    classes = tag.get("class") or []
    tokens.extend(classes if isinstance(classes, list) else str(classes).split())
    return any(token.lower() in _CHROME_NAMES for token in tokens)


def main_content(soup: Any) -> Any:
    """The element holding the page's main text, with chrome and hidden elements removed."""
    _drop(soup, lambda tag: _is_chrome(tag) or _is_hidden(tag))
    root = soup.find("main") or soup.find(attrs={"role": "main"})
    if root is None:
        articles = soup.find_all("article")
        if len(articles) == 1:
            root = articles[0]
    if root is None:
        root = soup.find("body") or soup
        # No semantic markup: fall back to conventional ids and classes such as id="header".
        _drop(root, lambda tag: _has_chrome_name(tag) and not _holds_heading_1(tag))
    return root


def _drop(root: Any, unwanted: Callable[[Any], bool]) -> None:
    """Remove the outermost descendants of ``root`` that are ``unwanted``.

    Tags are visited in document order, so a parent is seen before its children and the
    children of a dropped tag need no test (``Tag.decomposed`` would be a slow search).
    """
    inside: set[int] = set()
    doomed: list[Any] = []
    for tag in root.find_all(True):
        if id(tag.parent) in inside:
            inside.add(id(tag))
        elif unwanted(tag):
            inside.add(id(tag))
            doomed.append(tag)
    for tag in doomed:
        tag.decompose()


def _holds_heading_1(tag: Any) -> bool:
    """Whether a would-be chrome block carries the page's h1 (then it is the page title)."""
    return tag.find("h1") is not None and tag.find(["p", "table", "ul", "ol", "dl"]) is None
