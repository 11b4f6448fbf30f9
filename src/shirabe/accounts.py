"""Users, their groups, and their API tokens, kept in ``<home>/accounts.sqlite3``.

A token is shown once when it is created; only its SHA-256 is stored. Tokens are 256 random
bits, so a fast hash is enough: nothing can be guessed from the hash that brute force over
2^256 values would not need. Removing a user revokes their tokens.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from shirabe.access import PUBLIC, Reader, check_group
from shirabe.errors import ShirabeError

TOKEN_PREFIX = "shb_"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS users (
    name TEXT PRIMARY KEY,
    groups TEXT NOT NULL,
    admin INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS tokens (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user TEXT NOT NULL REFERENCES users(name) ON DELETE CASCADE,
    hash TEXT NOT NULL UNIQUE,
    label TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    last_used_at TEXT,
    revoked INTEGER NOT NULL DEFAULT 0
);
"""


class AccountError(ShirabeError):
    """A user or token operation was refused; the message says which user or token, and why."""


@dataclass(frozen=True, slots=True)
class User:
    name: str
    groups: tuple[str, ...]
    admin: bool = False
    created_at: str = ""

    @property
    def reader(self) -> Reader:
        return Reader(frozenset(self.groups), admin=self.admin)


@dataclass(frozen=True, slots=True)
class TokenInfo:
    id: int
    user: str
    label: str
    created_at: str
    last_used_at: str | None
    revoked: bool


def hash_token(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _check_name(name: str) -> str:
    name = name.strip()
    if not name or len(name) > 64 or any(ch.isspace() for ch in name):
        raise AccountError(f"user name {name!r} must be 1-64 characters without spaces")
    return name


class Accounts:
    """The users and tokens of one shirabe home (SQLite; safe across threads and processes)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=30)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.executescript(_SCHEMA)
            self._local.conn = conn
        return conn

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        conn = self._conn()
        with conn:
            yield conn

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    # users

    @staticmethod
    def _user(row: sqlite3.Row) -> User:
        return User(
            row["name"], tuple(json.loads(row["groups"])), bool(row["admin"]), row["created_at"]
        )

    def add_user(self, name: str, groups: Sequence[str] = (), *, admin: bool = False) -> User:
        name = _check_name(name)
        clean = tuple(dict.fromkeys(check_group(g, f"user {name}") for g in groups if g != PUBLIC))
        try:
            with self._write() as conn:
                conn.execute(
                    "INSERT INTO users (name, groups, admin, created_at) VALUES (?, ?, ?, ?)",
                    (name, json.dumps(clean, ensure_ascii=False), int(admin), _now()),
                )
        except sqlite3.IntegrityError:
            raise AccountError(f"user {name!r} already exists") from None
        return self.get_user(name)

    def get_user(self, name: str) -> User:
        row = self._conn().execute("SELECT * FROM users WHERE name = ?", (name,)).fetchone()
        if row is None:
            raise AccountError(f"no user {name!r}")
        return self._user(row)

    def list_users(self) -> list[User]:
        rows = self._conn().execute("SELECT * FROM users ORDER BY name").fetchall()
        return [self._user(r) for r in rows]

    def update_user(
        self, name: str, *, groups: Sequence[str] | None = None, admin: bool | None = None
    ) -> User:
        user = self.get_user(name)
        new_groups = (
            user.groups
            if groups is None
            else tuple(dict.fromkeys(check_group(g, f"user {name}") for g in groups if g != PUBLIC))
        )
        new_admin = user.admin if admin is None else admin
        with self._write() as conn:
            conn.execute(
                "UPDATE users SET groups = ?, admin = ? WHERE name = ?",
                (json.dumps(new_groups, ensure_ascii=False), int(new_admin), name),
            )
        return self.get_user(name)

    def remove_user(self, name: str) -> None:
        with self._write() as conn:
            if conn.execute("DELETE FROM users WHERE name = ?", (name,)).rowcount == 0:
                raise AccountError(f"no user {name!r}")

    # tokens

    def create_token(self, user: str, label: str = "") -> tuple[TokenInfo, str]:
        """A new token for ``user``: its record and the secret, which is never shown again."""
        self.get_user(user)
        secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
        with self._write() as conn:
            cur = conn.execute(
                "INSERT INTO tokens (user, hash, label, created_at) VALUES (?, ?, ?, ?)",
                (user, hash_token(secret), label, _now()),
            )
            token_id = int(cur.lastrowid or 0)
        return self._token(token_id), secret

    def _token(self, token_id: int) -> TokenInfo:
        row = self._conn().execute("SELECT * FROM tokens WHERE id = ?", (token_id,)).fetchone()
        if row is None:
            raise AccountError(f"no token {token_id}")
        return TokenInfo(
            row["id"],
            row["user"],
            row["label"],
            row["created_at"],
            row["last_used_at"],
            bool(row["revoked"]),
        )

    def list_tokens(self, user: str | None = None) -> list[TokenInfo]:
        sql, params = "SELECT id FROM tokens", []
        if user is not None:
            sql, params = sql + " WHERE user = ?", [user]
        ids = [r["id"] for r in self._conn().execute(sql + " ORDER BY id", params)]
        return [self._token(i) for i in ids]

    def revoke_token(self, token_id: int) -> None:
        with self._write() as conn:
            if (
                conn.execute("UPDATE tokens SET revoked = 1 WHERE id = ?", (token_id,)).rowcount
                == 0
            ):
                raise AccountError(f"no token {token_id}")

    def authenticate(self, secret: str) -> User | None:
        """The user a token belongs to, or None for an unknown or revoked token."""
        if not secret.startswith(TOKEN_PREFIX):
            return None
        conn = self._conn()
        row = conn.execute(
            "SELECT t.id, u.* FROM tokens t JOIN users u ON u.name = t.user "
            "WHERE t.hash = ? AND t.revoked = 0",
            (hash_token(secret),),
        ).fetchone()
        if row is None:
            return None
        with self._write() as write:
            write.execute("UPDATE tokens SET last_used_at = ? WHERE id = ?", (_now(), row["id"]))
        return self._user(row)
