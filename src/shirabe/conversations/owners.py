"""Whose conversations: a signed-in user's, or an anonymous browser's."""

from __future__ import annotations

import hashlib
import re

from shirabe.errors import ConversationError

_CLIENT_ID = re.compile(r"[A-Za-z0-9_-]{16,128}")


def user_owner(name: str) -> str:
    return f"user:{name}"


def client_owner(client_id: str) -> str:
    """The owner of an anonymous browser's conversations, from the id it keeps."""
    if not _CLIENT_ID.fullmatch(client_id):
        raise ConversationError("client id must be 16-128 letters, digits, '-' or '_'")
    return "anon:" + hashlib.sha256(client_id.encode("ascii")).hexdigest()
