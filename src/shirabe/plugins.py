"""Families of interchangeable parts, found through entry points.

Every file format, store, embedding model, answer writer, chat model and tokenizer is
registered under an entry point group (``shirabe.loaders``, ``shirabe.stores``,
``shirabe.embedders``, ``shirabe.generators``, ``shirabe.chat_models``, ``shirabe.tokenizers``).
shirabe registers its own parts there in its ``pyproject.toml``, exactly as another installed
package registers its own, so adding a format or a store never means editing shirabe (see
``docs/plugins.md``).

Names are read from the package metadata, which is cheap; a part's module is imported only
when the part is first used.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from typing import Generic, TypeVar, cast

from shirabe.errors import ConfigurationError

logger = logging.getLogger(__name__)

T = TypeVar("T")


@cache
def _entry_points(group: str) -> dict[str, EntryPoint]:
    """The entry points of ``group`` by name. shirabe's own parts come first; when two
    packages register the same name, the first found wins and the other is logged."""
    found: dict[str, EntryPoint] = {}
    points = sorted(
        entry_points(group=group),
        key=lambda ep: (ep.dist is None or ep.dist.name != "shirabe", ep.name),
    )
    for point in points:
        if point.name in found:
            logger.warning(
                "%s %r of %s ignored: %s already registers it",
                group,
                point.name,
                _owner(point),
                _owner(found[point.name]),
            )
            continue
        found[point.name] = point
    return found


def _owner(point: EntryPoint) -> str:
    return point.dist.name if point.dist is not None else point.value


@dataclass(frozen=True)
class Registry(Generic[T]):
    """The named parts of one family; ``T`` is what loading an entry point gives."""

    family: str
    """``loaders``, ``stores``, ``embedders``, ``generators``, ``chat_models`` or
    ``tokenizers``."""

    @property
    def group(self) -> str:
        """The entry point group: ``shirabe.`` and the family."""
        return f"shirabe.{self.family}"

    def names(self) -> list[str]:
        """Every registered name, shirabe's own first."""
        return list(self._points())

    def require(self, name: str) -> EntryPoint:
        """The entry point registered as ``name`` (nothing is imported); an error naming the
        choices when there is none."""
        point = self._points().get(name)
        if point is None:
            raise ConfigurationError(
                f"unknown {self.family[:-1]} {name!r}: choose from {', '.join(self.names())}"
                " (or install the package that provides it)"
            )
        return point

    def load(self, name: str) -> T:
        """The part registered as ``name``."""
        return cast(T, _load(self.require(name)))

    def load_all(self) -> dict[str, T]:
        """Every part by name, skipping (and logging) those that cannot be loaded: a broken
        package must not stop the parts that work."""
        loaded: dict[str, T] = {}
        for name, point in self._points().items():
            try:
                loaded[name] = cast(T, _load(point))
            except Exception:
                logger.warning(
                    "%s %r of %s skipped", self.family, name, _owner(point), exc_info=True
                )
        return loaded

    def _points(self) -> dict[str, EntryPoint]:
        points = _entry_points(self.group)
        if not points:
            raise ConfigurationError(
                f"no {self.family} registered under the entry point group {self.group!r}: "
                "is shirabe installed (pip install -e .)?"
            )
        return points


@cache
def _load(point: EntryPoint) -> object:
    return point.load()


def refresh() -> None:
    """Forget what was found, so that packages installed since are seen."""
    _entry_points.cache_clear()
    _load.cache_clear()
