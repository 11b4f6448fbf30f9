"""Options several commands share, each declared once, and what they turn into: settings,
filters, and the errors a command reports."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import typing
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from pydantic import ValidationError
from rich.markup import escape

from shirabe.cli.render import err
from shirabe.engine import Shirabe
from shirabe.errors import GeneratorError, ShirabeError
from shirabe.records import Filters
from shirabe.settings import Settings

R = TypeVar("R")

IndexOption = Annotated[
    Path | None,
    typer.Option("--index", "-i", help="Index directory (SHIRABE_HOME).", show_default=False),
]


JsonOption = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]


TopKOption = Annotated[
    int | None,
    typer.Option("--top-k", "-k", help="Passages to retrieve (SHIRABE_RETRIEVAL__TOP_K)."),
]


PathGlobOption = Annotated[
    str | None,
    typer.Option(
        "--path",
        help="Only files whose path matches this glob ('人事/*': directly in a 人事 folder; "
        "'人事/**': anywhere below one).",
    ),
]


CategoryOption = Annotated[
    list[str] | None,
    typer.Option(
        "--category", help="Only documents of this category, a top-level folder (repeatable)."
    ),
]


MetaOption = Annotated[
    list[str] | None,
    typer.Option("--meta", help="Only documents whose metadata has KEY=VALUE (repeatable)."),
]


RetrieverOption = Annotated[
    str | None,
    typer.Option("--retriever", help="hybrid, bm25 or dense (SHIRABE_RETRIEVAL__RETRIEVER)."),
]


GeneratorOption = Annotated[
    str | None,
    typer.Option(
        "--generator",
        help="extractive (default); openai: an OpenAI-compatible model server; azure: Azure "
        "OpenAI (SHIRABE_CHAT_MODEL__AZURE_*); llama: a GGUF file in-process.",
    ),
]


PresetOption = Annotated[
    str | None,
    typer.Option(
        "--llm-preset",
        help="lmstudio, ollama, llamacpp, vllm or openai (SHIRABE_CHAT_MODEL__PRESET).",
    ),
]


BaseUrlOption = Annotated[
    str | None,
    typer.Option("--llm-base-url", help="Model server URL (SHIRABE_CHAT_MODEL__BASE_URL)."),
]


ModelOption = Annotated[
    str | None,
    typer.Option(
        "--llm-model",
        help="Model name on the server (SHIRABE_CHAT_MODEL__MODEL), or a .gguf file to run "
        "in-process (SHIRABE_CHAT_MODEL__MODEL_PATH).",
    ),
]


AsUserOption = Annotated[
    str | None,
    typer.Option(
        "--as-user", help="Answer as this user would be answered: only what their groups may read."
    ),
]


UnderstandOption = Annotated[
    list[str] | None,
    typer.Option(
        "--understand",
        help="Query understanding, repeatable: multi-query (search other wordings too), "
        "keywords (strengthen the lexical query), decompose (questions asked together, one "
        "by one; with a model, look up what the question hinges on first).",
    ),
]


UNDERSTAND_SETTINGS = {
    "multi-query": "multi_query",
    "keywords": "keyword_extraction",
    "decompose": "decompose",
}


StreamOption = Annotated[bool, typer.Option("--stream", help="Print the answer as it is written.")]


class OptionGroup:
    """Options that belong together and that several commands take (a dataclass of options).

    A command parameter annotated with a group stands for all of the group's options, in
    place, in ``--help`` and on the command line (see :func:`with_options`)."""

    def settings(self) -> dict[str, Any]:
        """The settings these options override (None: keep the configured value)."""
        return {}


@dataclasses.dataclass
class ScopeOptions(OptionGroup):
    """Which documents an answer may come from: path, metadata, category, and whose eyes."""

    path: PathGlobOption = None
    meta: MetaOption = None
    category: CategoryOption = None
    as_user: AsUserOption = None

    def filters(self, shirabe: Shirabe) -> Filters | None:
        """The filters, narrowed to what ``--as-user`` may read."""
        filters = _filters(self.path, self.meta, self.category)
        reader = (
            shirabe.accounts.get_user(self.as_user).reader if self.as_user is not None else None
        )
        return shirabe.catalog.scope(reader, filters)


@dataclasses.dataclass
class RetrievalOptions(OptionGroup):
    """How passages are found: the retriever and query understanding."""

    retriever: RetrieverOption = None
    understand: UnderstandOption = None

    def settings(self) -> dict[str, Any]:
        return {"retriever": self.retriever, **_understand(self.understand)}


@dataclasses.dataclass
class ModelOptions(OptionGroup):
    """Who writes the answer: the extractive default or a chat model."""

    generator: GeneratorOption = None
    llm_preset: PresetOption = None
    llm_base_url: BaseUrlOption = None
    llm_model: ModelOption = None

    def settings(self) -> dict[str, Any]:
        return _llm(self.generator, self.llm_preset, self.llm_base_url, self.llm_model)


def with_options(command: Callable[..., R]) -> Callable[..., R]:
    """``command`` with each parameter annotated with an :class:`OptionGroup` expanded, in
    place, into the group's options (what Typer reads), and the group built from them when
    the command runs."""
    hints = typing.get_type_hints(command, include_extras=True)
    groups: dict[str, Any] = {}
    params: list[inspect.Parameter] = []
    for param in inspect.signature(command).parameters.values():
        kind = hints.get(param.name, param.annotation)
        if isinstance(kind, type) and issubclass(kind, OptionGroup):
            group: Any = kind
            groups[param.name] = group
            field_hints = typing.get_type_hints(group, include_extras=True)
            params.extend(
                inspect.Parameter(
                    field.name,
                    inspect.Parameter.KEYWORD_ONLY,
                    default=field.default,
                    annotation=field_hints[field.name],
                )
                for field in dataclasses.fields(group)
            )
        else:
            params.append(param.replace(annotation=kind, kind=inspect.Parameter.KEYWORD_ONLY))

    @functools.wraps(command)
    def run(**values: Any) -> R:
        for name, group in groups.items():
            names = [field.name for field in dataclasses.fields(group)]
            values[name] = group(**{n: values.pop(n) for n in names})
        return command(**values)

    typing.cast(Any, run).__signature__ = inspect.Signature(params)
    run.__annotations__ = {p.name: p.annotation for p in params}
    return run


def _understand(steps: list[str] | None) -> dict[str, bool]:
    """Settings switched on by ``--understand``; unknown names are an error naming them."""
    values: dict[str, bool] = {}
    for step in steps or []:
        for name in step.split(","):
            key = UNDERSTAND_SETTINGS.get(name.strip())
            if key is None:
                raise ShirabeError(
                    f"--understand: unknown step {name.strip()!r} "
                    f"(choose from {', '.join(UNDERSTAND_SETTINGS)})"
                )
            values[key] = True
    return values


def _llm(
    generator: str | None, preset: str | None, base_url: str | None, model: str | None
) -> dict[str, Any]:
    """Settings overrides for the answer writer: a ``.gguf`` model implies ``llama``, any other
    model option ``openai``."""
    if model is not None and model.lower().endswith(".gguf"):
        return {"generator": generator or "llama", "llm_model_path": Path(model)}
    values: dict[str, Any] = {
        "generator": generator,
        "llm_preset": preset,
        "llm_base_url": base_url,
        "llm_model": model,
    }
    if generator is None and (preset or base_url or model):
        values["generator"] = "openai"
    return values


FLAGS: dict[str, str] = {
    "index": "home",
    "top_k": "retrieval.top_k",
    "retriever": "retrieval.retriever",
    "multi_query": "retrieval.multi_query",
    "keyword_extraction": "retrieval.keyword_extraction",
    "decompose": "retrieval.decompose",
    "generator": "answering.generator",
    "llm_preset": "chat_model.preset",
    "llm_base_url": "chat_model.base_url",
    "llm_model": "chat_model.model",
    "llm_model_path": "chat_model.model_path",
    "chunk_size": "ingest.chunk_size",
    "chunk_overlap": "ingest.chunk_overlap",
    "database_url": "store.database_url",
    "host": "server.host",
    "port": "server.port",
    "anonymous": "server.anonymous",
    "mcp_user": "server.mcp_user",
}
"""The setting each command-line option overrides, by the option's name."""


def flag_settings(*groups: OptionGroup, **overrides: Any) -> dict[str, Any]:
    """The settings the command line gives, by section: ``overrides`` (options by name,
    :data:`FLAGS`) and each option group's; an option not given is left out."""
    given = dict(overrides)
    for group in groups:
        given.update(group.settings())
    values: dict[str, Any] = {}
    for option, value in given.items():
        if value is None:
            continue
        section, _, name = FLAGS[option].rpartition(".")
        if section:
            values.setdefault(section, {})[name] = value
        else:
            values[name] = value
    return values


def make_settings(*groups: OptionGroup, **overrides: Any) -> Settings:
    """The settings with what the command line gave: ``overrides`` (``index`` is the home) and
    each option group's; an option not given keeps the configured value."""
    return Settings(**flag_settings(*groups, **overrides))


@contextmanager
def opened(settings: Settings, *, indexed: bool = True) -> Iterator[Shirabe]:
    """The engine for a command, closed afterwards; with ``indexed``, an empty index is an
    error saying how to fill it."""
    with Shirabe(settings) as shirabe:
        if indexed:
            require_index(shirabe)
        yield shirabe


@contextmanager
def errors() -> Iterator[None]:
    try:
        yield
    except (ShirabeError, GeneratorError) as exc:
        err.print(f"[bold red]error:[/] {escape(str(exc))}")
        raise typer.Exit(1) from exc
    except ValidationError as exc:
        for problem in exc.errors():
            field = ".".join(str(p) for p in problem["loc"])
            err.print(f"[bold red]invalid setting[/] {field}: {escape(problem['msg'])}")
        raise typer.Exit(2) from exc


def _filters(
    path_glob: str | None, meta: list[str] | None = None, categories: list[str] | None = None
) -> Filters | None:
    metadata: dict[str, str] = {}
    for item in meta or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ShirabeError(f"--meta expects KEY=VALUE, got {item!r}")
        metadata[key.strip()] = value.strip()
    filters = Filters(
        path_glob=path_glob,
        metadata=metadata,
        categories=frozenset(categories or ()),
    )
    return filters if filters else None


def require_index(shirabe: Shirabe) -> None:
    if shirabe.status().files == 0:
        raise ShirabeError(
            f"the index in {shirabe.settings.home} is empty; run `shirabe ingest <folder>` first"
        )
