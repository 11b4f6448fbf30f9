"""Find the loader for a file by its suffix.

Loaders are the classes registered under the ``shirabe.loaders`` entry points (shirabe's own in
its ``pyproject.toml``, others by any installed package). Each has an ``extensions`` tuple and a
``load`` method and is instantiated without arguments. Loader modules are imported on the first
lookup, not when shirabe is imported, and keep their own heavy imports inside ``load``.
"""

from __future__ import annotations

import logging
from functools import cache
from pathlib import Path

from shirabe.loaders.protocol import Loader
from shirabe.plugins import Registry

logger = logging.getLogger(__name__)

LOADERS: Registry[type[Loader]] = Registry("loaders")


def loader_for(path: Path) -> Loader | None:
    """The loader for ``path``'s suffix (case-insensitive), or ``None`` if none handles it."""
    return _by_suffix().get(path.suffix.lower())


def supported_extensions() -> frozenset[str]:
    """Every lower-case suffix, with its dot, that some loader handles."""
    return frozenset(_by_suffix())


@cache
def _by_suffix() -> dict[str, Loader]:
    """Suffix to loader over all registered loaders; the first registered wins a tie."""
    registry: dict[str, Loader] = {}
    for name, cls in LOADERS.load_all().items():
        try:
            loader = cls()
            extensions = tuple(loader.extensions)
        except Exception:
            logger.warning("loader %r skipped: it cannot be made", name, exc_info=True)
            continue
        for extension in extensions:
            suffix = extension.lower()
            if suffix in registry:
                logger.warning(
                    "loader %r ignored for %s: already handled by %s",
                    name,
                    suffix,
                    type(registry[suffix]).__name__,
                )
                continue
            registry[suffix] = loader
    logger.debug("loaders for %s", sorted(registry))
    return registry


def refresh() -> None:
    """Forget the loaders found so far (after installing a package that adds one)."""
    _by_suffix.cache_clear()
