"""Who did what to the index, written to the audit log."""

from __future__ import annotations

import getpass
import os
import socket

from shirabe.access.accounts import Accounts


def local_actor() -> str:
    """Who the audit log names for work done on this machine (a command, a script)."""
    try:
        name = getpass.getuser()
    except (KeyError, OSError):
        name = str(os.getuid()) if hasattr(os, "getuid") else "unknown"
    return f"{name}@{socket.gethostname()} (local)"


class AuditWriter:
    """Writes one actor's actions to the audit log kept with the accounts (the local user
    when no actor is named)."""

    def __init__(self, accounts: Accounts, actor: str | None = None) -> None:
        self._accounts = accounts
        self.actor = actor or local_actor()

    def __call__(self, action: str, key: str, detail: str = "") -> None:
        self._accounts.audit(self.actor, action, key, detail)
