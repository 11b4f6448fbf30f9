"""Users who sign in with the company's accounts (an OpenID Connect provider, or a reverse
proxy that names them), and the shirabe groups their directory groups give them.

A person is known by who vouches for them (the issuer, or ``proxy``) and the subject it gives,
never by a name: a display name can be changed or chosen to look like another's. At their
first sign-in a user is made, named after the name the directory gives when that name is free
(else that name with a suffix of their own); at every sign-in their groups are set from the
directory's, so someone moved between groups there reads differently from their next sign-in.

A group map (YAML) says which shirabe groups each directory group gives; only the groups it
lists count::

    jinji-all: [hr]
    keiri: [finance, executives]

Without a map a directory group is the shirabe group of the same name (names that are no
group name, such as ``CN=HR,OU=Groups``, give none). Admin rights come from the directory only
for members of the directory groups the settings name (``admin_groups``); when none are named,
no claim or header grants them, and a user's admin role stays as a command set it.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from shirabe.access.accounts import Accounts, DuplicateError, _stamp
from shirabe.access.map import check_group
from shirabe.errors import AccountError, ConfigurationError
from shirabe.records import PUBLIC, Identity, SignedIn, User
from shirabe.settings import read_yaml

logger = logging.getLogger(__name__)

PROXY_ISSUER = "proxy"
"""The issuer of users a trusted reverse proxy names."""
NAME_CHARS = 64
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class GroupMap:
    """Directory groups to shirabe groups (None: each to the group of its own name), and the
    directory groups whose members are admins."""

    mapping: Mapping[str, tuple[str, ...]] | None = None
    admin_groups: frozenset[str] = field(default_factory=frozenset)

    def groups(self, directory: Iterable[str]) -> tuple[str, ...]:
        """The shirabe groups ``directory`` groups give (sorted, ``public`` left out: it is
        everyone's)."""
        found: set[str] = set()
        for name in directory:
            if self.mapping is not None:
                found.update(self.mapping.get(name, ()))
                continue
            try:
                found.add(check_group(name, "directory group"))
            except ConfigurationError:
                logger.info("directory group %r is no group name: it gives no group", name)
        return tuple(sorted(found - {PUBLIC}))

    def admin(self, directory: Iterable[str]) -> bool | None:
        """Whether ``directory`` groups make an admin; None when no group is named to."""
        if not self.admin_groups:
            return None
        return not self.admin_groups.isdisjoint(directory)


def parse_group_map(data: object, origin: str, admin_groups: Sequence[str] = ()) -> GroupMap:
    """A group map from a YAML file's data; errors name ``origin`` and the directory group."""
    admins = frozenset(g.strip() for g in admin_groups if g.strip())
    if data is None:
        return GroupMap({}, admins)
    if not isinstance(data, dict):
        raise ConfigurationError(f"{origin}: expected directory groups mapped to lists of groups")
    mapping: dict[str, tuple[str, ...]] = {}
    for raw, value in data.items():
        name = str(raw).strip()
        listed = [value] if isinstance(value, str) else value
        if not name or not isinstance(listed, list):
            raise ConfigurationError(f"{origin}: {name or '(empty)'}: give a list of groups")
        mapping[name] = tuple(check_group(str(g).strip(), f"{origin}: {name}") for g in listed)
    return GroupMap(mapping, admins)


def load_group_map(path: Path | None, admin_groups: Sequence[str] = ()) -> GroupMap:
    """The group map at ``path``; without one, directory groups keep their names."""
    if path is None:
        return GroupMap(None, frozenset(g.strip() for g in admin_groups if g.strip()))
    return parse_group_map(read_yaml(path, "group map"), f"group map {path}", admin_groups)


class Directory:
    """Directory users of one accounts database, with their groups from ``groups``."""

    def __init__(self, accounts: Accounts, groups: GroupMap) -> None:
        self._accounts = accounts
        self._db = accounts.database
        self.groups = groups

    def user_for(self, issuer: str, subject: str) -> str | None:
        """The name of the user ``issuer`` and ``subject`` are, if they have signed in."""
        rows = self._db.query(
            'SELECT "user" FROM identities WHERE issuer = ? AND subject = ?', (issuer, subject)
        )
        return str(rows[0]["user"]) if rows else None

    def sign_in(self, identity: Identity) -> SignedIn:
        """The user ``identity`` is, made at their first sign-in, with the groups (and, where
        the settings name admin groups, the admin role) their directory groups give now."""
        if not identity.issuer or not identity.subject:
            raise AccountError("a directory user needs an issuer and a subject")
        groups = self.groups.groups(identity.groups)
        admin = self.groups.admin(identity.groups)
        now = _stamp(datetime.now(UTC))
        name = self.user_for(identity.issuer, identity.subject)
        if name is None:
            made = self._make(identity, groups, bool(admin), now)
            if made is not None:
                return SignedIn(made, None)
            name = self.user_for(identity.issuer, identity.subject)  # made by another process
            if name is None:
                raise AccountError(f"{identity.name!r} could not be made a user")
        before = self._accounts.get_user(name)
        user = before
        if before.groups != groups or (admin is not None and before.admin != admin):
            user = self._accounts.update_user(name, groups=groups, admin=admin)
        self._db.change(
            "UPDATE identities SET signed_in_at = ? WHERE issuer = ? AND subject = ?",
            (now, identity.issuer, identity.subject),
        )
        return SignedIn(user, before)

    def _make(
        self, identity: Identity, groups: tuple[str, ...], admin: bool, now: str
    ) -> User | None:
        """A new user for ``identity``; None when another process made theirs first."""
        for name in _names(identity):
            try:
                user = self._accounts.add_user(name, groups, admin=admin)
            except AccountError:
                continue  # the name is taken
            try:
                self._db.change(
                    'INSERT INTO identities (issuer, subject, "user", created_at, signed_in_at) '
                    "VALUES (?, ?, ?, ?, ?)",
                    (identity.issuer, identity.subject, user.name, now, now),
                )
            except DuplicateError:
                self._accounts.remove_user(user.name)
                return None
            return user
        raise AccountError(f"no free user name for {identity.name!r}")


def _names(identity: Identity) -> Iterable[str]:
    """Names a user for ``identity`` may take, the one they go by first, then it with a suffix
    made from who they are (the same at every try), longer each time."""
    base = _SPACES.sub("_", identity.name.strip()).lstrip("(") or "user"
    digest = hashlib.sha256(f"{identity.issuer}\0{identity.subject}".encode()).hexdigest()
    yield base[:NAME_CHARS]
    for size in (8, 16, 32):
        yield f"{base[: NAME_CHARS - size - 1]}-{digest[:size]}"
