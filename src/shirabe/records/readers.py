"""Who reads, and what they keep: readers and users, the people the company's directory vouches
for and the browsers signed in, the audit log, conversations and feedback."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from shirabe.text.paths import canonical_name

PUBLIC = "public"
"""The group every user belongs to."""


@dataclass(frozen=True, slots=True)
class Reader:
    """Who is asking: the groups they belong to (``public`` always), or everything."""

    groups: frozenset[str] = field(default_factory=frozenset)
    admin: bool = False

    @property
    def visible(self) -> frozenset[str] | None:
        """Groups whose documents this reader may see (canonical names); None: all of them."""
        if self.admin:
            return None
        return frozenset(canonical_name(g) for g in self.groups) | {PUBLIC}

    def may_read(self, document_groups: Sequence[str]) -> bool:
        visible = self.visible
        return visible is None or bool(visible.intersection(document_groups))


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
class Identity:
    """Someone as the company's directory vouches for them: who vouches (an OpenID Connect
    issuer, or ``proxy``) and the subject it gives them identify them; the name and groups
    are what it says of them now."""

    issuer: str
    subject: str
    name: str
    """The name they go by there (a user made for them is named after it)."""
    groups: tuple[str, ...] = ()
    """Their directory groups."""


@dataclass(frozen=True, slots=True)
class SignedIn:
    """A directory user after signing in, and as they were before (None: made just now)."""

    user: User
    before: User | None

    @property
    def changed(self) -> bool:
        """Whether the user was made, or their groups or admin role changed."""
        before = self.before
        return before is None or (before.groups, before.admin) != (
            self.user.groups,
            self.user.admin,
        )


@dataclass(frozen=True, slots=True)
class Session:
    """A browser signed in to the page, as stored (never its secret)."""

    id: int
    user: User
    via: str
    """How it was signed in: ``token`` (an API token typed into the page) or ``oidc``."""
    created_at: str
    expires_at: str


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """Who changed a document, or the index's settings, and when."""

    id: int
    at: str
    actor: str
    action: str
    """``upload``, ``replace``, ``delete``, ``readers`` (the readers changed), ``root``,
    ``reread``, ``access_map``, ``sign_in_failed``, or a change of accounts (``user_add``,
    ``user_change``, ``user_remove``, ``token_create``, ``token_revoke``: ``path`` is the user)."""
    path: str
    detail: str


Rating = Literal["up", "down"]

TITLE_CHARS = 80
"""A title is cut to this many characters (made from the first question, unless renamed)."""
COMMENT_CHARS = 2000
SEARCH_CHARS = 100
"""The longest search over one's conversations."""


@dataclass(frozen=True, slots=True)
class Conversation:
    id: str
    title: str
    created_at: str
    updated_at: str
    turns: int = 0
    pinned: bool = False
    """Listed above the others, whenever it was last used."""
    named: bool = False
    """The title was given by the owner (kept as it is), not made from the first question."""


@dataclass(frozen=True, slots=True)
class NewTurn:
    """A question and the answer shirabe gave, to be recorded as a conversation's next turn."""

    question: str
    answer: str
    refused: bool
    standalone: str | None = None
    refusal_reason: str | None = None
    citations: Sequence[dict[str, Any]] = ()
    """The citations as the API returned them (file, heading path, place, text)."""
    sources: Sequence[str] = ()
    """Keys of the documents cited."""
    categories: Sequence[str] = ()
    """The category filter the question was asked under."""


@dataclass(frozen=True, slots=True)
class StoredTurn:
    """One question and the answer shirabe gave, as recorded."""

    position: int
    question: str
    answer: str
    refused: bool
    at: str
    standalone: str | None = None
    refusal_reason: str | None = None
    citations: list[dict[str, Any]] = field(default_factory=list)
    """The citations as the API returned them (file, heading path, place, text)."""
    sources: tuple[str, ...] = ()
    """Keys of the documents cited, checked against the reader whenever the turn is shown."""
    categories: tuple[str, ...] = ()
    """The category filter the question was asked under."""
    version: int = 1
    """Which of the turn's answers this is (再生成 makes another); the chosen one is the
    turn's answer, shown and read by the follow-ups."""
    versions: int = 1
    """How many answers the turn has."""


@dataclass(frozen=True, slots=True)
class FoundConversation:
    """A conversation that matched a search, with the words around the first match."""

    conversation: Conversation
    excerpt: str = ""


@dataclass(frozen=True, slots=True)
class Feedback:
    id: int
    owner: str
    conversation: str
    position: int
    rating: Rating
    comment: str
    at: str
    turn: StoredTurn
    """The turn with the answer that was rated (the version chosen when it was given)."""
    version: int = 1
