"""The one place a store backend is chosen.

Backends are the callables registered under the ``shirabe.stores`` entry points (shirabe's own
``embedded`` and ``postgres``, or another package's); each takes the settings and returns a
:class:`~shirabe.stores.protocol.Backend`.
"""

from __future__ import annotations

from collections.abc import Callable

from shirabe.plugins import Registry
from shirabe.settings import Settings
from shirabe.stores.protocol import Backend

STORES: Registry[Callable[[Settings], Backend]] = Registry("stores")


def store_name(settings: Settings) -> str:
    """``settings.store`` when given, else ``postgres`` with a database URL, else ``embedded``."""
    if settings.store:
        return settings.store
    return "postgres" if settings.database_url else "embedded"


def make_backend(settings: Settings) -> Backend:
    return STORES.load(store_name(settings))(settings)
