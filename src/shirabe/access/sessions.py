"""Browsers signed in to the page: a session is a random secret kept in a cookie; only its
SHA-256 is stored, with the accounts (so every server sharing the database knows it), with the
user, how they signed in and when it expires. Ending a session (signing out) marks it ended;
an ended or expired session signs no one in, and expired ones are removed as new ones start.
A session made from an API token lasts no longer than the token, and ends when the token is
revoked.

The CSRF token of a session is an HMAC of its secret under a key kept with the accounts
(made once, at first use): the page holds it in memory and sends it with every change, and a
page of another site can neither read it nor compute it."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import UTC, datetime, timedelta
from functools import cached_property

from shirabe.access.accounts import Accounts, Row, _expired, _stamp, hash_token
from shirabe.errors import AccountError, SignInError
from shirabe.records import Session

SESSION_PREFIX = "shs_"
KEY_CONTROL = "session_key"
"""The control setting holding the key of CSRF tokens and signed values (hex)."""


class Sessions:
    """The sessions of one accounts database."""

    def __init__(self, accounts: Accounts) -> None:
        self._accounts = accounts
        self._db = accounts.database

    @cached_property
    def _key(self) -> bytes:
        return bytes.fromhex(self._accounts.claim_control(KEY_CONTROL, secrets.token_hex(32)))

    def mac(self, purpose: str, value: str) -> str:
        """An HMAC-SHA256 of ``value`` for ``purpose`` under the key kept with the accounts:
        what only a server of these accounts can compute."""
        message = purpose.encode("utf-8") + b"\0" + value.encode("utf-8")
        return hmac.new(self._key, message, hashlib.sha256).hexdigest()

    def csrf(self, secret: str) -> str:
        """The CSRF token of the session whose secret is ``secret``."""
        return self.mac("csrf session", secret)

    def start(
        self,
        user: str,
        lifetime: timedelta,
        via: str,
        *,
        token: str | None = None,
        now: datetime | None = None,
    ) -> tuple[Session, str]:
        """A new session of ``user`` lasting ``lifetime`` (made from the API token ``token``:
        no longer than it lasts): its record and its secret, which only the cookie keeps."""
        if lifetime <= timedelta(0):
            raise AccountError(f"session lifetime {lifetime} must be positive")
        self._accounts.get_user(user)
        moment = now or datetime.now(UTC)
        ends = moment + lifetime
        token_id = None
        if token is not None:
            found = self._db.query(
                'SELECT id, expires_at FROM tokens WHERE hash = ? AND "user" = ? AND revoked = 0',
                (hash_token(token), user),
            )
            if not found:
                raise SignInError("unknown or revoked token")
            token_id = found[0]["id"]
            if found[0]["expires_at"] is not None:
                ends = min(ends, datetime.fromisoformat(found[0]["expires_at"]))
        self._db.change("DELETE FROM sessions WHERE expires_at <= ?", (_stamp(moment),))
        secret = SESSION_PREFIX + secrets.token_urlsafe(32)
        self._db.change(
            'INSERT INTO sessions (hash, "user", via, token, created_at, expires_at) '
            "VALUES (?, ?, ?, ?, ?, ?)",
            (hash_token(secret), user, via, token_id, _stamp(moment), _stamp(ends)),
        )
        return self.find(secret, now=moment), secret

    def find(self, secret: str, *, now: datetime | None = None) -> Session:
        """The live session whose secret is ``secret``; :class:`SignInError` saying why for
        an unknown, ended or expired one, or one whose token was revoked or has expired."""
        rows = []
        if secret.startswith(SESSION_PREFIX):
            rows = self._db.query(
                "SELECT s.id AS session_id, s.via AS session_via, s.created_at AS started_at, "
                "s.expires_at AS session_expires_at, s.ended_at AS session_ended_at, "
                "s.token AS session_token, t.revoked AS token_revoked, "
                "t.expires_at AS token_expires_at, u.* FROM sessions s "
                'JOIN users u ON u.name = s."user" LEFT JOIN tokens t ON t.id = s.token '
                "WHERE s.hash = ?",
                (hash_token(secret),),
            )
        if not rows:
            raise SignInError("unknown session")
        row = rows[0]
        if row["session_ended_at"] is not None:
            raise SignInError("ended session")
        if _expired(row["session_expires_at"], now):
            raise SignInError("expired session")
        if row["session_token"] is not None and (
            row["token_revoked"] != 0 or _expired(row["token_expires_at"], now)
        ):
            raise SignInError("the session's token was revoked or has expired")
        return _session(row)

    def end(self, secret: str, *, now: datetime | None = None) -> Session | None:
        """End the session whose secret is ``secret`` (signing out): the session it was, or
        None when it was not live."""
        try:
            session = self.find(secret, now=now)
        except SignInError:
            return None
        stamp = _stamp(now or datetime.now(UTC))
        self._db.change(
            "UPDATE sessions SET ended_at = ? WHERE id = ? AND ended_at IS NULL",
            (stamp, session.id),
        )
        return session


def _session(row: Row) -> Session:
    user = Accounts.user_of(row)
    return Session(
        row["session_id"], user, row["session_via"], row["started_at"], row["session_expires_at"]
    )
