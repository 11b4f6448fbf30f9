"""File loaders: one file in, Markdown parts out; :func:`loader_for` picks one by suffix.

Importing this package stays cheap: loader modules are imported on the first lookup.
"""

from shirabe.loaders.factory import loader_for, supported_extensions
from shirabe.loaders.protocol import (
    Loader,
    LoadError,
    LoadOptions,
    report_progress,
    set_progress_hook,
)

__all__ = [
    "LoadError",
    "LoadOptions",
    "Loader",
    "loader_for",
    "report_progress",
    "set_progress_hook",
    "supported_extensions",
]
