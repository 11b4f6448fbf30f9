"""One settings object for every face, in sections: ``SHIRABE_<SECTION>__<NAME>`` environment
variables, a ``.env`` file, CLI options; and the small YAML files settings point at
(synonyms, access maps), read with clear errors.

Each section is a model of its own (:mod:`shirabe.settings.sections`,
:mod:`shirabe.settings.serving`, :mod:`shirabe.settings.signin`), and each plugin family's
factories receive their section.
The old flat names (``SHIRABE_TOP_K``, ``Settings(top_k=8)``, ``settings.top_k``) still work,
with a warning, until shirabe 0.3.0 (:mod:`shirabe.settings.renamed`)."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Self

from pydantic import Field, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    InitSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from shirabe.settings.files import (
    MAX_LIFETIME,
    host_entry,
    load_synonyms,
    parse_lifetime,
    parse_yaml,
    read_yaml,
)
from shirabe.settings.renamed import (
    REMOVED_IN,
    RENAMED,
    SELECTORS,
    SettingsDeprecationWarning,
    env_name,
    is_old,
    regroup,
    warn_name,
)
from shirabe.settings.sections import (
    EmbedderSettings,
    IngestSettings,
    LimitSettings,
    Section,
    StoreSettings,
    TokenizerSettings,
)
from shirabe.settings.serving import (
    AnswerSettings,
    ChatModelSettings,
    RetrievalSettings,
    ServerSettings,
)
from shirabe.settings.signin import SignInSettings
from shirabe.settings.sources import (
    ARGUMENT,
    DEFAULT,
    DOTENV,
    ENVIRONMENT,
    Arguments,
    DotEnvFile,
    Environment,
    leaves,
)

__all__ = [
    "ARGUMENT",
    "DEFAULT",
    "DOTENV",
    "ENVIRONMENT",
    "MAX_LIFETIME",
    "REMOVED_IN",
    "SECTIONS",
    "AnswerSettings",
    "ChatModelSettings",
    "EmbedderSettings",
    "IngestSettings",
    "LimitSettings",
    "RetrievalSettings",
    "Section",
    "ServerSettings",
    "Settings",
    "SettingsDeprecationWarning",
    "SignInSettings",
    "StoreSettings",
    "TokenizerSettings",
    "env_name",
    "host_entry",
    "load_synonyms",
    "origins",
    "parse_lifetime",
    "parse_yaml",
    "read_yaml",
]

LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]


class Settings(BaseSettings):
    """All configuration, in sections. Every setting can be set as
    ``SHIRABE_<SECTION>__<NAME>`` (``SHIRABE_RETRIEVAL__TOP_K=8``), in ``.env``, as
    ``Settings(retrieval=RetrievalSettings(top_k=8))``, and some by a CLI option."""

    model_config = SettingsConfigDict(
        env_prefix="SHIRABE_",
        env_nested_delimiter="__",
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
    )

    home: Path = Field(
        default=Path(".shirabe"), description="Index directory; all state lives here."
    )
    log_level: LogLevel = Field(
        default="WARNING", description="The least severe log messages the commands print."
    )
    store: StoreSettings = Field(default_factory=StoreSettings)
    ingest: IngestSettings = Field(default_factory=IngestSettings)
    limits: LimitSettings = Field(default_factory=LimitSettings)
    tokenizer: TokenizerSettings = Field(default_factory=TokenizerSettings)
    embedder: EmbedderSettings = Field(default_factory=EmbedderSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    answering: AnswerSettings = Field(default_factory=AnswerSettings)
    chat_model: ChatModelSettings = Field(default_factory=ChatModelSettings)
    server: ServerSettings = Field(default_factory=ServerSettings)
    sign_in: SignInSettings = Field(default_factory=SignInSettings)

    @model_validator(mode="before")
    @classmethod
    def _old_names(cls, data: Any) -> Any:
        """Old flat names in data validated directly (``Settings.model_validate``), which the
        sources have not seen: moved into their sections, with a warning."""
        if isinstance(data, Mapping) and any(is_old(k, v) for k, v in data.items()):
            grouped, old = regroup(data)
            for name in old:
                warn_name(name, stacklevel=5)
            return grouped
        return data

    @field_validator("log_level", mode="before")
    @classmethod
    def _level(cls, value: object) -> object:
        return value.strip().upper() if isinstance(value, str) else value

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Arguments, the environment, the .env file, then secrets files; each reading the
        old flat names too."""
        env: Any = env_settings
        dotenv: Any = dotenv_settings
        return (
            Arguments(settings_cls, init_settings),
            Environment(
                settings_cls,
                case_sensitive=env.case_sensitive,
                env_prefix=env.env_prefix,
                env_nested_delimiter=env.env_nested_delimiter,
                env_ignore_empty=env.env_ignore_empty,
                env_parse_none_str=env.env_parse_none_str,
            ),
            DotEnvFile(
                settings_cls,
                env_file=dotenv.env_file,
                env_file_encoding=dotenv.env_file_encoding,
                case_sensitive=dotenv.case_sensitive,
                env_prefix=dotenv.env_prefix,
                env_nested_delimiter=dotenv.env_nested_delimiter,
                env_ignore_empty=dotenv.env_ignore_empty,
                env_parse_none_str=dotenv.env_parse_none_str,
            ),
            file_secret_settings,
        )

    def updated(self, **changes: Any) -> Self:
        """A copy with ``changes``: a section's as a mapping of its settings
        (``retrieval={"top_k": 3}``), others as values (``home=path``). Like
        :meth:`model_copy`, the values are not validated."""
        update: dict[str, Any] = {}
        for key, value in changes.items():
            section = key in SECTIONS and isinstance(value, Mapping)
            update[key] = getattr(self, key).model_copy(update=value) if section else value
        return super().model_copy(update=update)

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy; an old flat name in ``update`` (``{"top_k": 3}``) updates its section,
        with a warning."""
        if update and any(is_old(key, value) for key, value in update.items()):
            changes: dict[str, Any] = {}
            for key, value in update.items():
                if not is_old(key, value):
                    changes[key] = value
                    continue
                warn_name(key)
                section, name = RENAMED[key]
                current = changes.get(section, getattr(self, section))
                changes[section] = current.model_copy(update={name: value})
            update = changes
        return super().model_copy(update=update, deep=deep)

    if not TYPE_CHECKING:

        def __getattr__(self, name: str) -> Any:
            """An old flat name (``settings.top_k``) reads its setting, with a warning."""
            found = RENAMED.get(name)
            if found is not None and name not in SELECTORS:
                warn_name(name)
                return getattr(getattr(self, found[0]), found[1])
            return super().__getattr__(name)


SECTIONS: dict[str, type[Section]] = {
    name: field.annotation
    for name, field in Settings.model_fields.items()
    if isinstance(field.annotation, type) and issubclass(field.annotation, Section)
}
"""Each section's name and model, in order."""

Origin = tuple[str, str | None]
"""Where a value came from (:data:`ARGUMENT`, :data:`ENVIRONMENT`, :data:`DOTENV` or
:data:`DEFAULT`), and the old flat name it was given by, if it was."""


def origins(given: Mapping[str, Any] | None = None) -> dict[tuple[str, ...], Origin]:
    """Where each setting of ``Settings(**given)`` comes from: ``("retrieval", "top_k")`` →
    ``("environment", "top_k")`` for ``SHIRABE_TOP_K``; settings left at their default are
    not listed."""
    sections = frozenset(SECTIONS)
    init = InitSettingsSource(Settings, dict(given or {}))
    sources: list[tuple[str, Any]] = [
        (DOTENV, DotEnvFile(Settings)),
        (ENVIRONMENT, Environment(Settings)),
        (ARGUMENT, Arguments(Settings, init)),
    ]
    found: dict[tuple[str, ...], Origin] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SettingsDeprecationWarning)
        for origin, source in sources:
            values = source()
            old: dict[tuple[str, str], str] = source.old_names
            for path in leaves(values, sections):
                found[path] = (origin, old.get((path[0], path[-1])) if len(path) == 2 else None)
    return found
