"""The ``users`` and ``tokens`` command groups: who may sign in and read what."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from shirabe.cli.options import IndexOption, JsonOption, errors, make_settings, opened
from shirabe.cli.render import err, out
from shirabe.errors import AccountError
from shirabe.records import User

GroupOption = Annotated[
    list[str] | None, typer.Option("--group", "-g", help="A group of the user (repeatable).")
]


def _user_json(user: User) -> dict[str, Any]:
    return {"name": user.name, "groups": list(user.groups), "admin": user.admin}


def users_add(
    name: Annotated[str, typer.Argument(help="User name.")],
    group: GroupOption = None,
    admin: Annotated[bool, typer.Option("--admin", help="May read and manage everything.")] = False,
    index: IndexOption = None,
) -> None:
    """Add a user."""
    with errors(), opened(make_settings(index=index), indexed=False) as shirabe:
        user = shirabe.people.add_user(name, group or [], admin=admin)
    out.print(
        f"added {escape(user.name)}: groups {', '.join(user.groups) or '-'}"
        + (" (admin)" if user.admin else "")
    )


def users_set(
    name: Annotated[str, typer.Argument(help="User name.")],
    group: GroupOption = None,
    admin: Annotated[
        bool | None, typer.Option("--admin/--no-admin", help="Grant or take the admin role.")
    ] = None,
    index: IndexOption = None,
) -> None:
    """Replace a user's groups (with --group) or change the admin role."""
    with errors(), opened(make_settings(index=index), indexed=False) as shirabe:
        user = shirabe.people.update_user(name, groups=group, admin=admin)
    out.print_json(json.dumps(_user_json(user), ensure_ascii=False))


def users_list(index: IndexOption = None, json_out: JsonOption = False) -> None:
    """List users and their groups."""
    with errors(), opened(make_settings(index=index), indexed=False) as shirabe:
        users = shirabe.people.users()
    if json_out:
        out.print_json(json.dumps([_user_json(u) for u in users], ensure_ascii=False))
        return
    table = Table(header_style="bold")
    for column in ("user", "groups", "admin"):
        table.add_column(column)
    for u in users:
        table.add_row(escape(u.name), escape(", ".join(u.groups)), "yes" if u.admin else "")
    out.print(table)


def users_remove(
    name: Annotated[str, typer.Argument(help="User name.")], index: IndexOption = None
) -> None:
    """Remove a user and revoke their tokens (not the last admin)."""
    with errors(), opened(make_settings(index=index), indexed=False) as shirabe:
        shirabe.people.remove_user(name)
    out.print(f"removed {escape(name)}")


def tokens_create(
    user: Annotated[str, typer.Argument(help="The user the token signs in as.")],
    label: Annotated[str, typer.Option("--label", help="What the token is for.")] = "",
    expires: Annotated[
        str | None,
        typer.Option(
            "--expires",
            help="The token stops working this long from now: 12h, 90d, 8w "
            "(default SHIRABE_SERVER__TOKEN_LIFETIME, else never).",
        ),
    ] = None,
    index: IndexOption = None,
) -> None:
    """Create an API token; it is printed once and cannot be shown again."""
    with errors(), opened(make_settings(index=index), indexed=False) as shirabe:
        try:
            shirabe.people.lifetime(expires)
        except AccountError as exc:
            raise typer.BadParameter(str(exc), param_hint="--expires") from None
        info, secret = shirabe.people.create_token(user, label, expires=expires)
    until = f", expires {info.expires_at}" if info.expires_at else ""
    err.print(f"token {info.id} for {escape(user)}{until} (store it now; it is not shown again):")
    print(secret)


def tokens_list(
    user: Annotated[str | None, typer.Argument(help="Only this user's tokens.")] = None,
    index: IndexOption = None,
    json_out: JsonOption = False,
) -> None:
    """List tokens (never their secrets)."""
    with errors(), opened(make_settings(index=index), indexed=False) as shirabe:
        tokens = shirabe.people.tokens(user)
    if json_out:
        out.print_json(json.dumps([asdict(t) for t in tokens], ensure_ascii=False))
        return
    table = Table(header_style="bold")
    for column in ("id", "user", "label", "created", "last used", "expires", "revoked"):
        table.add_column(column)
    for t in tokens:
        table.add_row(
            str(t.id),
            escape(t.user),
            escape(t.label),
            t.created_at,
            t.last_used_at or "",
            (t.expires_at or "never") + (" (expired)" if t.expired() else ""),
            "yes" if t.revoked else "",
        )
    out.print(table)


def tokens_revoke(
    token_id: Annotated[int, typer.Argument(help="Token id (see tokens list).")],
    index: IndexOption = None,
) -> None:
    """Revoke a token: it stops working at once."""
    with errors(), opened(make_settings(index=index), indexed=False) as shirabe:
        shirabe.people.revoke_token(token_id)
    out.print(f"revoked token {token_id}")
