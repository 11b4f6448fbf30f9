"""What administration reads and changes: the audit log's filters, the readers a change of the
access map would give, and the ingest runs under way."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime


@dataclass(frozen=True, slots=True)
class AuditQuery:
    """Which entries of the audit log to list: each field given narrows the list."""

    actor: str | None = None
    """Part of who acted (a user name, or ``user@host (local)``)."""
    action: str | None = None
    """One action exactly (``delete``, ``user_add``, ``access_map``, ...)."""
    path: str | None = None
    """Part of what was acted on, as stored (a document's key, a user's name)."""
    since: datetime | None = None
    """Entries at or after this moment (without a time zone: UTC)."""
    until: datetime | None = None
    """Entries before this moment (without a time zone: UTC)."""


@dataclass(frozen=True, slots=True)
class ReaderChange:
    """A document whose readers a new access map changes."""

    path: str
    """The document's key."""
    before: tuple[str, ...]
    after: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class GroupChange:
    """What a new access map does to one group: the documents it gains and loses."""

    group: str
    gains: int = 0
    loses: int = 0


@dataclass(frozen=True, slots=True)
class PlaceReaders:
    """A top-level folder of the index (a category, or a category of uploads) and who reads
    its documents: each set of reader groups with how many documents have it."""

    place: str
    """The folder's key (the root or the uploads folder joined with its name)."""
    documents: int
    readers: Sequence[tuple[tuple[str, ...], int]] = ()


@dataclass(frozen=True, slots=True)
class AccessPreview:
    """What saving an access map would do (or did) to the index's readers."""

    changes: list[ReaderChange] = field(default_factory=list)
    """Every document whose readers change, by key."""
    groups: list[GroupChange] = field(default_factory=list)
    """Each group that gains or loses documents, by name."""
    documents: int = 0
    """The documents the map decides the readers of (those it changes and the rest)."""
    changed: int = 0
    """How many documents' readers change (``changes`` may list only the first of them)."""


@dataclass(frozen=True, slots=True)
class RunningIngest:
    """An ingest run under way in this process, as far as it has gone."""

    id: int
    actor: str
    started_at: str
    stage: str
    """``starting``, ``scan``, ``file``, ``index`` (the search indexes) or ``done``."""
    done: int = 0
    total: int = 0
    current: str | None = None
    """The key of the last file read."""
