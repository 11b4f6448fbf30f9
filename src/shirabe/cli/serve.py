"""The ``serve`` command: the HTTP API and the web page."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from shirabe.cli.options import (
    IndexOption,
    ModelOptions,
    errors,
    make_settings,
    opened,
    with_options,
)
from shirabe.cli.progress import ingest_with_progress
from shirabe.cli.render import err, print_report
from shirabe.engine import Shirabe


@with_options
def serve(
    folders: Annotated[
        list[Path] | None,
        typer.Argument(help="Folders to ingest first and serve (reindex ingests them again)."),
    ] = None,
    index: IndexOption = None,
    host: Annotated[
        str | None, typer.Option("--host", help="Address (SHIRABE_SERVER__HOST).")
    ] = None,
    port: Annotated[int | None, typer.Option("--port", help="Port (SHIRABE_SERVER__PORT).")] = None,
    anonymous: Annotated[
        str | None,
        typer.Option("--anonymous", help="off, localhost or on (SHIRABE_SERVER__ANONYMOUS)."),
    ] = None,
    watch: Annotated[
        bool,
        typer.Option("--watch", help="Keep the index in step with the folders as files change."),
    ] = False,
    *,
    model: ModelOptions,
) -> None:
    """Serve the HTTP API (OpenAPI at /docs)."""
    with errors():
        settings = make_settings(model, index=index, host=host, port=port, anonymous=anonymous)
        import uvicorn

        from shirabe.server.app import create_app
        from shirabe.server.proxy import behind_proxies

        shirabe = Shirabe(settings)
        shirabe.store  # noqa: B018  (an unreachable database or a bad store is reported here)
        if watch and not folders:
            raise typer.BadParameter("--watch needs the folders to watch", param_hint="--watch")
        if folders:
            report = ingest_with_progress(shirabe, folders)
            print_report(report)
        api = create_app(shirabe, roots=folders or [], watch=watch)
        listen = settings.server
        err.print(f"shirabe: http://{listen.host}:{listen.port}/  (API docs: /docs)")
        if listen.host in ("0.0.0.0", "::", "") and not listen.allowed_hosts:
            err.print(
                "shirabe: requests are answered only for localhost names: list the names "
                "or addresses other machines use in SHIRABE_SERVER__ALLOWED_HOSTS"
            )
        served = behind_proxies(api, settings)  # X-Forwarded-* read here, after the peer is kept
        uvicorn.run(
            served, host=listen.host, port=listen.port, log_level="warning", proxy_headers=False
        )


@with_options
def mcp(
    index: IndexOption = None,
    user: Annotated[
        str | None,
        typer.Option(
            "--user", help="Read as this user, with their groups (SHIRABE_SERVER__MCP_USER)."
        ),
    ] = None,
    *,
    model: ModelOptions,
) -> None:
    """Serve the Model Context Protocol over stdio, for AI assistants and editors (their
    configuration runs this command); over HTTP, `serve` offers the same at /mcp."""
    with errors(), opened(make_settings(model, index=index, mcp_user=user)) as shirabe:
        from shirabe.records import Reader
        from shirabe.server.deps import Principal, Server
        from shirabe.server.mcp import create_mcp, fixed_caller

        name = shirabe.settings.server.mcp_user
        if name:
            who = Principal(name, shirabe.accounts.get_user(name).reader)
        elif shirabe.settings.server.anonymous != "off":  # stdio is this machine
            who = Principal(None, Reader())
        else:
            raise typer.BadParameter(
                "name the user to read as (--user or SHIRABE_SERVER__MCP_USER), or allow "
                "anonymous access to public documents (SHIRABE_SERVER__ANONYMOUS=localhost)",
                param_hint="--user",
            )
        create_mcp(Server(shirabe, [], shirabe.uploads), fixed_caller(who)).run("stdio")
