"""Reading the small YAML files users write (synonyms, access maps), with clear errors."""

from __future__ import annotations

from pathlib import Path

import yaml

from shirabe.errors import ConfigurationError


def read_yaml(path: Path, what: str) -> object:
    """The data in ``path``; errors name ``what`` (e.g. "access map"), the file and why."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise ConfigurationError(f"{what} {path}: {exc.strerror or exc}") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigurationError(f"{what} {path}: not valid YAML ({exc})") from None
