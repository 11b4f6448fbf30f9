"""HTML pages: charset, main content without the page chrome, and the Markdown converter."""

from shirabe.loaders.html.loader import HtmlLoader

__all__ = ["HtmlLoader"]
