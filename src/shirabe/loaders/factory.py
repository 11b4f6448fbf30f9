"""Find the loader for a file by its suffix, discovering loaders instead of listing them.

Convention: every module of the ``shirabe.loaders`` package (except ``protocol`` and
``factory``) is scanned, and each public class *defined in that module* with an
``extensions`` tuple and a ``load`` method is a loader, instantiated without arguments.
Supporting a new format is therefore one new module; nothing here changes. Modules are
imported on the first lookup, not when the package is imported, and loaders keep their own
heavy imports inside ``load``.
"""

from __future__ import annotations

import importlib
import inspect
import logging
import pkgutil
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import cast

from shirabe.loaders.protocol import Loader

logger = logging.getLogger(__name__)

_NOT_LOADER_MODULES = frozenset({"protocol", "factory"})


def loader_for(path: Path) -> Loader | None:
    """The loader for ``path``'s suffix (case-insensitive), or ``None`` if none handles it."""
    return _registry().get(path.suffix.lower())


def supported_extensions() -> frozenset[str]:
    """Every lower-case suffix, with its dot, that some loader handles."""
    return frozenset(_registry())


@cache
def _registry() -> dict[str, Loader]:
    """Suffix to loader over all discovered loaders; the first module, by name, wins a tie."""
    from shirabe import loaders as package

    registry: dict[str, Loader] = {}
    modules = sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name)
    for info in modules:
        if info.name in _NOT_LOADER_MODULES or info.name.startswith("_"):
            continue
        try:
            module = importlib.import_module(f"{package.__name__}.{info.name}")
        except ImportError:
            logger.warning("loader module %s skipped", info.name, exc_info=True)
            continue
        for loader in _loaders_in(module):
            for extension in loader.extensions:
                suffix = extension.lower()
                if suffix in registry:
                    logger.warning(
                        "%s ignored for %s: already handled by %s",
                        type(loader).__name__,
                        suffix,
                        type(registry[suffix]).__name__,
                    )
                    continue
                registry[suffix] = loader
    logger.debug("loaders for %s", sorted(registry))
    return registry


def _loaders_in(module: ModuleType) -> list[Loader]:
    """Instances of the loader classes defined (not merely imported) in ``module``."""
    found: list[Loader] = []
    for name, obj in vars(module).items():
        if (
            inspect.isclass(obj)
            and obj.__module__ == module.__name__
            and not name.startswith("_")
            and isinstance(getattr(obj, "extensions", None), tuple)
            and callable(getattr(obj, "load", None))
        ):
            found.append(cast(Loader, obj()))
    return found
