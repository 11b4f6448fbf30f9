"""Errors users see; each says what went wrong and what to do."""

from __future__ import annotations


class ShirabeError(Exception):
    """Base class for errors shown to users without a traceback."""


class MissingDependencyError(ShirabeError):
    def __init__(self, feature: str, install: str) -> None:
        super().__init__(f"{feature} needs an optional dependency: run `{install}`")


class ModelMismatchError(ShirabeError):
    """The index was built with another embedding model."""


class ConfigurationError(ShirabeError, ValueError):
    """Settings that cannot work together, such as a model generator without a server."""


class GeneratorError(Exception):
    """The answer could not be written (model server down, timeout, HTTP error).

    The message is meant for users: it names the server, never a credential.
    """
