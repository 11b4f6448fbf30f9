"""Managing who may sign in: users, their groups and the admin role, and their API tokens.

The command line and the admin page both change accounts here, so that both keep the same
rules and leave the same trace: every change is written to the audit log with who made it
(never a token's secret), a token's lifetime is held to the site's longest
(``server.token_lifetime``), and the last admin can be neither removed nor demoted (the
company's directory, where it decides admin roles, changes its users as it says at sign-in).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

from shirabe.access.accounts import Accounts, TokenInfo
from shirabe.access.audit import AuditWriter
from shirabe.errors import AccountError
from shirabe.records import PUBLIC, User
from shirabe.settings import parse_lifetime

USER_ADD = "user_add"
USER_CHANGE = "user_change"
USER_REMOVE = "user_remove"
TOKEN_CREATE = "token_create"
TOKEN_REVOKE = "token_revoke"
ACTIONS = (USER_ADD, USER_CHANGE, USER_REMOVE, TOKEN_CREATE, TOKEN_REVOKE)
"""The audit log's actions for accounts; their ``path`` is the user's name."""


@dataclass(frozen=True, slots=True)
class Group:
    """A group named by a user, with its members (``public`` is everyone's)."""

    name: str
    members: tuple[str, ...]


def _role(user: User) -> str:
    groups = ",".join(user.groups) or "-"
    return f"groups {groups}" + (", admin" if user.admin else "")


class People:
    """Users, groups and tokens, each change audited as ``actor`` (default: the local user)."""

    def __init__(self, accounts: Accounts, *, token_lifetime: str | None = None) -> None:
        """``token_lifetime`` is the site's longest token (``90d``), also the default."""
        self._accounts = accounts
        self._longest = parse_lifetime(token_lifetime) if token_lifetime else None
        self._most = token_lifetime

    def users(self) -> list[User]:
        return self._accounts.list_users()

    def groups(self) -> list[Group]:
        """Every group some user is in, by name, with ``public`` (everyone)."""
        members: dict[str, list[str]] = {PUBLIC: []}
        for user in self._accounts.list_users():
            for group in user.groups:
                members.setdefault(group, []).append(user.name)
        return [Group(name, tuple(sorted(names))) for name, names in sorted(members.items())]

    def add_user(
        self,
        name: str,
        groups: Sequence[str] = (),
        *,
        admin: bool = False,
        actor: str | None = None,
    ) -> User:
        user = self._accounts.add_user(name, groups, admin=admin)
        AuditWriter(self._accounts, actor)(USER_ADD, user.name, _role(user))
        return user

    def update_user(
        self,
        name: str,
        *,
        groups: Sequence[str] | None = None,
        admin: bool | None = None,
        actor: str | None = None,
    ) -> User:
        """Replace ``name``'s groups, or grant or take the admin role (not from the last
        admin: :class:`AccountError`)."""
        before = self._accounts.get_user(name)
        user = self._accounts.update_user(name, groups=groups, admin=admin, keep_an_admin=True)
        if user != before:
            detail = f"{_role(before)} -> {_role(user)}"
            AuditWriter(self._accounts, actor)(USER_CHANGE, name, detail)
        return user

    def remove_user(self, name: str, *, actor: str | None = None) -> None:
        """Remove ``name``: their tokens stop working at once (not the last admin)."""
        tokens = len(self._accounts.list_tokens(name))
        self._accounts.remove_user(name, keep_an_admin=True)
        AuditWriter(self._accounts, actor)(USER_REMOVE, name, f"{tokens} token(s) ended")

    def tokens(self, user: str | None = None) -> list[TokenInfo]:
        """Tokens (of ``user``), oldest first: never their secrets, which are not kept."""
        return self._accounts.list_tokens(user)

    def lifetime(self, expires: str | None) -> timedelta | None:
        """How long a token asked to last ``expires`` (``90d``) lasts: at most the site's
        longest, which is also the default; None: it never expires."""
        if expires is None or not expires.strip():
            return self._longest
        try:
            lifetime = parse_lifetime(expires)
        except ValueError as exc:
            raise AccountError(str(exc)) from None
        if self._longest is not None and lifetime > self._longest:
            raise AccountError(
                f"{expires} is longer than SHIRABE_SERVER__TOKEN_LIFETIME ({self._most})"
            )
        return lifetime

    def create_token(
        self,
        user: str,
        label: str = "",
        *,
        expires: str | None = None,
        actor: str | None = None,
    ) -> tuple[TokenInfo, str]:
        """A new token for ``user`` lasting ``expires`` (:meth:`lifetime`): its record and its
        secret, which is shown this once and never kept."""
        info, secret = self._accounts.create_token(user, label, lifetime=self.lifetime(expires))
        until = f", expires {info.expires_at}" if info.expires_at else ", never expires"
        detail = f"token {info.id}" + (f" ({label})" if label else "") + until
        AuditWriter(self._accounts, actor)(TOKEN_CREATE, user, detail)
        return info, secret

    def revoke_token(self, token_id: int, *, actor: str | None = None) -> TokenInfo:
        """End token ``token_id`` at once."""
        self._accounts.revoke_token(token_id)
        info = self._accounts.get_token(token_id)
        AuditWriter(self._accounts, actor)(TOKEN_REVOKE, info.user, f"token {info.id}")
        return info
