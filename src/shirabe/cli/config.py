"""``shirabe config``: the settings in effect, section by section, and where each value came
from: its default, the .env file, the environment or a command-line option. Secrets (PDF
passwords, a password in a URL) are masked; the API key is never a setting, only the name of
the variable holding it."""

from __future__ import annotations

import json
import warnings
from typing import Any, NamedTuple
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel

from shirabe.cli.options import (
    IndexOption,
    JsonOption,
    ModelOptions,
    RetrievalOptions,
    TopKOption,
    errors,
    flag_settings,
    with_options,
)
from shirabe.cli.render import out
from shirabe.settings import (
    ARGUMENT,
    DEFAULT,
    DOTENV,
    ENVIRONMENT,
    SECTIONS,
    Settings,
    SettingsDeprecationWarning,
    StoreSettings,
    env_name,
    origins,
)

MASK = "***"

ORIGINS = {
    DEFAULT: "default",
    DOTENV: ".env file",
    ENVIRONMENT: "environment",
    ARGUMENT: "command line",
}
"""How ``shirabe config`` names where a value came from."""


class Row(NamedTuple):
    """One setting as shown."""

    path: tuple[str, ...]
    value: Any
    """As JSON would have it, masked."""
    origin: str
    variable: str | None
    """The environment variable that set it (its old name, if it was)."""
    instead: str | None
    """The variable's new name, when it was set by its old one."""


@with_options
def config(
    index: IndexOption = None,
    top_k: TopKOption = None,
    json_out: JsonOption = False,
    *,
    retrieval: RetrievalOptions,
    model: ModelOptions,
) -> None:
    """Print the settings in effect, section by section, and where each value comes from:
    default, .env file, environment or a command-line option. Secrets are not shown."""
    with errors():
        given = flag_settings(retrieval, model, index=index, top_k=top_k)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SettingsDeprecationWarning)  # said below instead
            settings = Settings(**given)
        rows = settings_rows(settings, origins(given))
    if json_out:
        out.print_json(json.dumps(rows_json(rows), ensure_ascii=False))
        return
    print_rows(rows)


def settings_rows(
    settings: Settings, found: dict[tuple[str, ...], tuple[str, str | None]]
) -> list[Row]:
    """Every setting, top-level ones first, then each section's in order."""
    rows: list[Row] = []
    for name, value in settings:
        if isinstance(value, BaseModel):
            rows.extend(
                row((name, field), _in_effect(value, field), found)
                for field in type(value).model_fields
            )
        else:
            rows.append(row((name,), value, found))
    return rows


def _in_effect(section: BaseModel, field: str) -> Any:
    """The value of ``field`` in effect: a store backend left unset is the one chosen."""
    if isinstance(section, StoreSettings) and field == "backend":
        return section.chosen_backend
    return getattr(section, field)


def row(
    path: tuple[str, ...], value: Any, found: dict[tuple[str, ...], tuple[str, str | None]]
) -> Row:
    origin, old = found.get(path, (DEFAULT, None))
    variable = instead = None
    if origin in (ENVIRONMENT, DOTENV):
        variable = env_name(old) if old is not None else env_name(*path)
    if old is not None:
        instead = env_name(*path)
    return Row(path, shown(path, value), ORIGINS[origin], variable, instead)


def shown(path: tuple[str, ...], value: Any) -> Any:
    """``value`` as JSON has it, with secrets masked."""
    plain = _jsonable(value)
    field = SECTIONS[path[0]].model_fields[path[1]] if len(path) == 2 else None
    extra = field.json_schema_extra if field is not None else None
    if isinstance(extra, dict) and extra.get("secret"):
        return {key: MASK for key in plain} if isinstance(plain, dict) else MASK
    if isinstance(plain, str):
        return without_password(plain)
    return plain


def _jsonable(value: Any) -> Any:
    if isinstance(value, bool | int | float | str) or value is None:
        return value
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return str(value)


def without_password(text: str) -> str:
    """A URL's password masked (``postgresql://user:***@host/db``); other text as it is."""
    if "://" not in text or "@" not in text:
        return text
    try:
        parts = urlsplit(text)
        password = parts.password
    except ValueError:
        return MASK  # not a URL we can read: it may hold anything
    if not password:
        return text
    user = parts.username or ""
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{user}:{MASK}@{host}"))


def text(value: Any) -> str:
    """A value as a .env file would have it."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def where(r: Row) -> str:
    named = r.origin if r.variable is None else f"{r.origin}: {r.variable}"
    return named if r.instead is None else f"{named} (deprecated name: use {r.instead})"


def print_rows(rows: list[Row]) -> None:
    """The top-level settings, then a block per section: name, value, where it came from."""
    width = max(len(r.path[-1]) for r in rows)
    values = max(min(len(text(r.value)), 40) for r in rows)
    section: str | None = None
    for r in rows:
        current = r.path[0] if len(r.path) == 2 else None
        if current != section:
            section = current
            out.print(f"\n[{section}]", markup=False, highlight=False)
        line = f"{r.path[-1]:<{width}}  {text(r.value):<{values}}  {where(r)}"
        out.print(line, markup=False, highlight=False)


def rows_json(rows: list[Row]) -> dict[str, Any]:
    """``{"home": {...}, "retrieval": {"top_k": {"value": 5, "origin": "default"}}}``."""
    document: dict[str, Any] = {}
    for r in rows:
        entry: dict[str, Any] = {"value": r.value, "origin": r.origin}
        if r.variable is not None:
            entry["variable"] = r.variable
        if r.instead is not None:
            entry["deprecated"] = True
            entry["instead"] = r.instead
        if len(r.path) == 2:
            document.setdefault(r.path[0], {})[r.path[1]] = entry
        else:
            document[r.path[0]] = entry
    return document
