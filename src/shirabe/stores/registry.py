"""The one place a store backend is chosen.

Backends are the callables registered under the ``shirabe.stores`` entry points (shirabe's own
``embedded`` and ``postgres``, or another package's); each takes the ``store`` section of the
settings and the home directory, and returns a :class:`~shirabe.stores.protocol.Backend`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from shirabe.plugins import Registry
from shirabe.settings import StoreSettings
from shirabe.stores.protocol import Backend

STORES: Registry[Callable[[StoreSettings, Path], Backend]] = Registry("stores")


def store_name(options: StoreSettings) -> str:
    """``options.backend`` when given, else ``postgres`` with a database URL, else
    ``embedded``."""
    return options.chosen_backend


def make_backend(options: StoreSettings, home: Path) -> Backend:
    """The backend ``options`` names, for the index in ``home``."""
    return STORES.load(store_name(options))(options, home)
