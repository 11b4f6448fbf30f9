"""The small files settings point at (synonyms, access maps), read with clear errors, and the
values settings check: token lifetimes and the names a server answers to."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import yaml

from shirabe.errors import ConfigurationError
from shirabe.text.synonyms import Synonyms, SynonymsError, parse_synonyms


def read_yaml(path: Path, what: str) -> object:
    """The data in ``path``; errors name ``what`` (e.g. "access map"), the file and why."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise ConfigurationError(f"{what} {path}: {exc.strerror or exc}") from None
    return parse_yaml(text, f"{what} {path}")


def parse_yaml(text: str, origin: str) -> object:
    """The data in the YAML ``text``; errors name ``origin`` (e.g. "access map a.yaml")."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigurationError(f"{origin}: not valid YAML ({exc})") from None


def load_synonyms(path: Path) -> Synonyms:
    """The synonyms file at ``path``; errors name the file and the entry."""
    try:
        return parse_synonyms(read_yaml(path, "synonyms file"), f"synonyms file {path}")
    except SynonymsError as exc:
        raise ConfigurationError(str(exc)) from None


_LIFETIME = re.compile(r"([1-9][0-9]{0,5})([hdw])")
_UNITS = {"h": timedelta(hours=1), "d": timedelta(days=1), "w": timedelta(weeks=1)}
MAX_LIFETIME = timedelta(days=3650)


def parse_lifetime(text: str) -> timedelta:
    """How long ``90d``, ``12h`` or ``8w`` is (at most ten years); ValueError saying what is
    accepted otherwise."""
    found = _LIFETIME.fullmatch(text.strip().lower())
    if found is None:
        raise ValueError(
            f"lifetime {text!r}: a whole number of hours, days or weeks, such as 12h, 90d or 8w"
        )
    lifetime = int(found.group(1)) * _UNITS[found.group(2)]
    if lifetime > MAX_LIFETIME:
        raise ValueError(f"lifetime {text!r}: at most {MAX_LIFETIME.days}d")
    return lifetime


_HOST = re.compile(r"[a-z0-9]([a-z0-9_.-]*[a-z0-9])?|[0-9a-f:.]*:[0-9a-f:.]*")


def host_entry(text: str) -> str:
    """An entry of ``allowed_hosts`` as requests are compared with it: ``*``, or a host name
    or address in lower case, without brackets or a trailing dot; ValueError for a URL, a
    port or anything else."""
    name = text.strip().lower()
    if name == "*":
        return name
    if name.startswith("[") and name.endswith("]"):
        name = name[1:-1]
    name = name.removesuffix(".")
    if _HOST.fullmatch(name) is None or (":" in name and name.count(":") < 2):
        raise ValueError(
            f"allowed host {text!r}: a host name or address without scheme, port or path "
            "(docs.example.com, 10.0.0.5, [fd00::5]), or '*'"
        )
    return name
