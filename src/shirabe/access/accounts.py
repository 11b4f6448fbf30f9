"""Users, their groups, and their API tokens, kept by the store: ``<home>/accounts.sqlite3`` for
the embedded store, the database itself for PostgreSQL (so every server sees the same users).

A token is shown once when it is created; only its SHA-256 is stored. Tokens are 256 random
bits, so a fast hash is enough: nothing can be guessed from the hash that brute force over
2^256 values would not need. Removing a user revokes their tokens. A token may carry an expiry;
past it, it is refused as a revoked one is.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from shirabe.access.map import check_group
from shirabe.errors import (
    AccountConflictError,
    AccountError,
    LastAdminError,
    NoAccountError,
    SignInError,
)
from shirabe.records import PUBLIC, AuditEntry, AuditQuery, User

TOKEN_PREFIX = "shb_"

# The tables are the store's: each store backend provides a Database over its own storage
# (shirabe.stores.embedded.accounts, shirabe.stores.postgres.accounts).

Row = Mapping[str, Any]


class Database(Protocol):
    """Just enough of a database for accounts: statements with ``?`` placeholders."""

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[Row]: ...

    def change(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run a write in its own transaction; the number of rows it touched."""
        ...

    def changes(self, steps: Sequence[tuple[str, Sequence[Any]]]) -> list[int]:
        """Run several writes in one transaction, all or none; the rows each touched."""
        ...

    def close(self) -> None: ...


class DuplicateError(Exception):
    """A unique key already exists."""


@dataclass(frozen=True, slots=True)
class TokenInfo:
    id: int
    user: str
    label: str
    created_at: str
    last_used_at: str | None
    revoked: bool
    expires_at: str | None = None
    """When the token stops working (UTC, ISO 8601); None: when it is revoked."""

    def expired(self, now: datetime | None = None) -> bool:
        return _expired(self.expires_at, now)


def hash_token(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def _now() -> str:
    return _stamp(datetime.now(UTC))


def _stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="seconds")


def _expired(expires_at: str | None, now: datetime | None = None) -> bool:
    if expires_at is None:
        return False
    return datetime.fromisoformat(expires_at) <= (now or datetime.now(UTC))


_ANOTHER_ADMIN = "EXISTS (SELECT 1 FROM users u2 WHERE u2.admin = 1 AND u2.name <> ?)"
"""True while an admin other than the user named by the parameter is left."""
_HOLD_ADMINS = ("UPDATE users SET admin = admin WHERE admin = 1", ())
"""The first step of a change that must leave an admin: it holds every admin's row until the
change commits, so that two admins demoting each other at once are taken in turn (PostgreSQL
checks the second against the first's result; SQLite writes one transaction at a time)."""


def _like(part: str) -> str:
    """A ``LIKE ... ESCAPE '\\'`` pattern matching ``part`` anywhere, as written."""
    escaped = part.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _audit_where(query: AuditQuery) -> tuple[str, list[str]]:
    """The ``WHERE`` clause (with its leading space; empty for no filter) and parameters."""
    clauses: list[str] = []
    params: list[str] = []
    for column, part in (("actor", query.actor), ("path", query.path)):
        if part:
            clauses.append(f"lower({column}) LIKE lower(?) ESCAPE '\\'")  # any case, both stores
            params.append(_like(part))
    if query.action:
        clauses.append("action = ?")
        params.append(query.action)
    for operator, moment in ((">=", query.since), ("<", query.until)):
        if moment is not None:  # stamps in one form compare as text
            clauses.append(f"at {operator} ?")
            params.append(_stamp(moment if moment.tzinfo else moment.replace(tzinfo=UTC)))
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), params


def _check_name(name: str) -> str:
    name = name.strip()
    if not name or len(name) > 64 or any(ch.isspace() for ch in name) or name.startswith("("):
        raise AccountError(
            f"user name {name!r} must be 1-64 characters without spaces, not starting with '('"
        )
    return name


class Accounts:
    """The users and tokens of one shirabe home, or of one PostgreSQL database; with them the
    audit log and the index's control settings (its document root)."""

    def __init__(self, database: Database) -> None:
        self._db = database

    @property
    def database(self) -> Database:
        """The database the accounts live in (conversations and feedback are kept there too)."""
        return self._db

    def close(self) -> None:
        self._db.close()

    # users

    @staticmethod
    def user_of(row: Row) -> User:
        """The user of a row of the users table (with any other columns beside)."""
        return User(
            row["name"], tuple(json.loads(row["groups"])), bool(row["admin"]), row["created_at"]
        )

    def add_user(self, name: str, groups: Sequence[str] = (), *, admin: bool = False) -> User:
        name = _check_name(name)
        clean = tuple(dict.fromkeys(check_group(g, f"user {name}") for g in groups if g != PUBLIC))
        try:
            self._db.change(
                "INSERT INTO users (name, groups, admin, created_at) VALUES (?, ?, ?, ?)",
                (name, json.dumps(clean, ensure_ascii=False), int(admin), _now()),
            )
        except DuplicateError:
            raise AccountConflictError(f"user {name!r} already exists") from None
        return self.get_user(name)

    def get_user(self, name: str) -> User:
        rows = self._db.query("SELECT * FROM users WHERE name = ?", (name,))
        if not rows:
            raise NoAccountError(f"no user {name!r}")
        return self.user_of(rows[0])

    def list_users(self) -> list[User]:
        return [self.user_of(r) for r in self._db.query("SELECT * FROM users ORDER BY name")]

    def update_user(
        self,
        name: str,
        *,
        groups: Sequence[str] | None = None,
        admin: bool | None = None,
        keep_an_admin: bool = False,
    ) -> User:
        """Replace ``name``'s groups, or grant or take the admin role. With ``keep_an_admin``
        (a change an admin makes), never from the last admin (:class:`LastAdminError`); the
        company's directory, which decides its users' roles, changes them as it says."""
        user = self.get_user(name)
        new_groups = (
            user.groups
            if groups is None
            else tuple(dict.fromkeys(check_group(g, f"user {name}") for g in groups if g != PUBLIC))
        )
        new_admin = user.admin if admin is None else admin
        kept = keep_an_admin and user.admin and not new_admin
        sql = "UPDATE users SET groups = ?, admin = ? WHERE name = ?"
        params: tuple[Any, ...] = (json.dumps(new_groups, ensure_ascii=False), int(new_admin), name)
        if not kept:
            if self._db.change(sql, params) == 0:
                raise self._missing_or_last(name)
            return self.get_user(name)
        _held, changed = self._db.changes(
            [_HOLD_ADMINS, (f"{sql} AND {_ANOTHER_ADMIN}", (*params, name))]
        )
        if changed == 0:
            raise self._missing_or_last(name)
        return self.get_user(name)

    def remove_user(self, name: str, *, keep_an_admin: bool = False) -> None:
        """Remove a user; their tokens and sessions stop working at once. With
        ``keep_an_admin``, never the last admin (:class:`LastAdminError`): someone must be
        able to manage the index from the page."""
        sql, params = "DELETE FROM users WHERE name = ?", [name]
        if keep_an_admin:
            guarded = (f"{sql} AND (admin = 0 OR {_ANOTHER_ADMIN})", [name, name])
            removed = self._db.changes([_HOLD_ADMINS, guarded])[1]
        else:
            removed = self._db.change(sql, params)
        if removed == 0:
            raise self._missing_or_last(name)

    def _missing_or_last(self, name: str) -> LastAdminError:
        """Why a change to ``name`` touched nothing: no such user, or the last admin."""
        self.get_user(name)  # raises for a user that is not there
        return LastAdminError(
            f"{name!r} is the last admin: make another user an admin first "
            "(the index needs an admin to be managed)"
        )

    # tokens

    def create_token(
        self, user: str, label: str = "", *, lifetime: timedelta | None = None
    ) -> tuple[TokenInfo, str]:
        """A new token for ``user``: its record and the secret, which is never shown again;
        with ``lifetime``, it stops working that long from now."""
        self.get_user(user)
        if lifetime is not None and lifetime <= timedelta(0):
            raise AccountError(f"token lifetime {lifetime} must be positive")
        now = datetime.now(UTC)
        expires_at = _stamp(now + lifetime) if lifetime is not None else None
        secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
        digest = hash_token(secret)
        self._db.change(
            'INSERT INTO tokens ("user", hash, label, created_at, expires_at) '
            "VALUES (?, ?, ?, ?, ?)",
            (user, digest, label, _stamp(now), expires_at),
        )
        token_id = int(self._db.query("SELECT id FROM tokens WHERE hash = ?", (digest,))[0]["id"])
        return self.get_token(token_id), secret

    def get_token(self, token_id: int) -> TokenInfo:
        rows = self._db.query("SELECT * FROM tokens WHERE id = ?", (token_id,))
        if not rows:
            raise NoAccountError(f"no token {token_id}")
        row = rows[0]
        return TokenInfo(
            row["id"],
            row["user"],
            row["label"],
            row["created_at"],
            row["last_used_at"],
            bool(row["revoked"]),
            row["expires_at"],
        )

    def list_tokens(self, user: str | None = None) -> list[TokenInfo]:
        sql, params = "SELECT id FROM tokens", []
        if user is not None:
            sql, params = sql + ' WHERE "user" = ?', [user]
        ids = [r["id"] for r in self._db.query(sql + " ORDER BY id", params)]
        return [self.get_token(i) for i in ids]

    def revoke_token(self, token_id: int) -> None:
        if self._db.change("UPDATE tokens SET revoked = 1 WHERE id = ?", (token_id,)) == 0:
            raise NoAccountError(f"no token {token_id}")

    def authenticate(self, secret: str) -> User | None:
        """The user a token belongs to, or None for an unknown, revoked or expired token."""
        try:
            return self.sign_in(secret)
        except SignInError:
            return None

    def sign_in(self, secret: str, now: datetime | None = None) -> User:
        """The user a token belongs to, its use recorded; :class:`SignInError` saying why
        for an unknown, revoked or expired token."""
        rows = []
        if secret.startswith(TOKEN_PREFIX):
            rows = self._db.query(
                "SELECT t.id AS token_id, t.expires_at AS token_expires_at, u.* FROM tokens t "
                'JOIN users u ON u.name = t."user" WHERE t.hash = ? AND t.revoked = 0',
                (hash_token(secret),),
            )
        if not rows:
            raise SignInError("unknown or revoked token")
        if _expired(rows[0]["token_expires_at"], now):
            raise SignInError("expired token")
        self._db.change(
            "UPDATE tokens SET last_used_at = ? WHERE id = ?", (_now(), rows[0]["token_id"])
        )
        return self.user_of(rows[0])

    # the audit log

    def audit(self, actor: str, action: str, path: str, detail: str = "") -> None:
        self._db.change(
            "INSERT INTO audit (at, actor, action, path, detail) VALUES (?, ?, ?, ?, ?)",
            (_now(), actor, action, path, detail),
        )

    def audit_log(
        self, *, limit: int = 100, offset: int = 0, query: AuditQuery | None = None
    ) -> list[AuditEntry]:
        """The newest entries first; those ``query`` asks for, when given."""
        where, params = _audit_where(query or AuditQuery())
        rows = self._db.query(
            f"SELECT * FROM audit{where} ORDER BY id DESC LIMIT ? OFFSET ?",
            (*params, limit, offset),
        )
        return [
            AuditEntry(r["id"], r["at"], r["actor"], r["action"], r["path"], r["detail"])
            for r in rows
        ]

    # control settings

    def control(self, key: str) -> str | None:
        rows = self._db.query("SELECT value FROM control WHERE key = ?", (key,))
        return str(rows[0]["value"]) if rows else None

    def set_control(self, key: str, value: str) -> None:
        if self._db.change("UPDATE control SET value = ? WHERE key = ?", (value, key)) == 0:
            try:
                self._db.change("INSERT INTO control (key, value) VALUES (?, ?)", (key, value))
            except DuplicateError:  # set by another process just now
                self._db.change("UPDATE control SET value = ? WHERE key = ?", (value, key))

    def claim_control(self, key: str, value: str) -> str:
        """``key``'s value, set to ``value`` first if it has none (first writer wins)."""
        with contextlib.suppress(DuplicateError):  # set by another process first
            self._db.change("INSERT INTO control (key, value) VALUES (?, ?)", (key, value))
        found = self.control(key)
        assert found is not None
        return found
