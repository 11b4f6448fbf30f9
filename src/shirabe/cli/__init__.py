"""The ``shirabe`` command: a thin face over :class:`shirabe.engine.Shirabe`."""

from shirabe.cli.app import app, main

__all__ = ["app", "main"]
