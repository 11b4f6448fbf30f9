"""Where settings come from, in order: arguments (``Settings(...)`` in Python, a command's
flags), the environment, the ``.env`` file, the defaults. Environment variables name a
section and a setting (``SHIRABE_RETRIEVAL__TOP_K``); the old flat names
(``SHIRABE_TOP_K``) are read too, with a warning, a new name winning over an old one."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic.fields import FieldInfo
from pydantic_settings import (
    DotEnvSettingsSource,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
)

from shirabe.settings.renamed import RENAMED, SELECTORS, regroup, warn_env, warn_name

if TYPE_CHECKING:
    from pydantic_settings import BaseSettings

ARGUMENT, ENVIRONMENT, DOTENV, DEFAULT = "argument", "environment", ".env file", "default"
"""Where a setting's value came from, highest first (``shirabe config`` says it)."""


class Arguments(PydanticBaseSettingsSource):
    """``Settings(...)``'s arguments: sections (as models or mappings) and top-level values;
    an old flat name (``top_k=8``) sets its setting, with a warning."""

    def __init__(self, settings_cls: type[BaseSettings], given: PydanticBaseSettingsSource):
        super().__init__(settings_cls)
        self._given = given
        self.old_names: dict[tuple[str, str], str] = {}
        """Each setting given by its old name: the old name."""

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # __call__ reads them all at once

    def __call__(self) -> dict[str, Any]:
        grouped, old = regroup(self._given())
        for name in old:
            warn_name(name, stacklevel=5)
            self.old_names[RENAMED[name]] = name
        return grouped


def _without_selector(field_name: str, value: object) -> object:
    """``SHIRABE_STORE=postgres`` is the old name of ``SHIRABE_STORE__BACKEND``, read with
    the other old names, not the ``store`` section written as JSON."""
    if field_name in SELECTORS and isinstance(value, str) and not value.lstrip().startswith("{"):
        return None
    return value


def _with_old_names(
    source: EnvSettingsSource, found: dict[str, Any], origin: str
) -> dict[str, Any]:
    """``found`` (the settings under their new names) with those given by their old names
    only; records the old names in ``source.old_names``."""
    fields = source.settings_cls.model_fields
    known = {key: value for key, value in found.items() if key in fields}
    prefix = source.env_prefix if source.case_sensitive else source.env_prefix.lower()
    old: dict[str, dict[str, Any]] = {}
    names: dict[tuple[str, str], str] = {}
    for key, raw in source.env_vars.items():
        name = key[len(prefix) :] if key.startswith(prefix) else ""
        if raw is None or name not in RENAMED:
            continue
        if name in SELECTORS and _without_selector(name, raw) is not None:
            continue  # the section written as JSON: read under its new name
        section, setting = RENAMED[name]
        value: Any = raw
        info = _field(fields[section], setting)
        if info is not None and source.field_is_complex(info):
            value = source.decode_complex_value(setting, info, raw)
        warn_env(name, origin)
        old.setdefault(section, {})[setting] = value
        names[(section, setting)] = name
    source.__dict__["old_names"] = names
    for section, values in old.items():  # a new name wins over an old one
        given = known.get(section)
        known[section] = {**values, **given} if isinstance(given, dict) else given or values
    return known


def _field(section: FieldInfo, name: str) -> FieldInfo | None:
    """The field ``name`` of the section model ``section`` is."""
    model = section.annotation
    fields: dict[str, FieldInfo] = getattr(model, "model_fields", {})
    return fields.get(name)


class Environment(EnvSettingsSource):
    """``SHIRABE_<SECTION>__<NAME>`` and the old ``SHIRABE_<NAME>`` in the environment."""

    where = "the environment"
    """Where the values come from, as a deprecation warning names it."""

    def prepare_field_value(
        self, field_name: str, field: FieldInfo, value: Any, value_is_complex: bool
    ) -> Any:
        value = _without_selector(field_name, value)
        return super().prepare_field_value(field_name, field, value, value_is_complex)

    def __call__(self) -> dict[str, Any]:
        return _with_old_names(self, super().__call__(), self.where)


class DotEnvFile(Environment, DotEnvSettingsSource):
    """The same names in the ``.env`` file."""

    where = "the .env file"


def leaves(values: Mapping[str, Any], sections: frozenset[str]) -> list[tuple[str, ...]]:
    """The settings ``values`` sets: ``("home",)``, ``("retrieval", "top_k")``…"""
    found: list[tuple[str, ...]] = []
    for key, value in values.items():
        if key in sections and isinstance(value, Mapping):
            found.extend((key, name) for name in value)
        else:
            found.append((key,))
    return found
