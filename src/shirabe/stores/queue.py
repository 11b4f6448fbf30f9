"""The queue that ingest workers share: the files of a run, each taken by one worker at a time.

A run is opened by the ingest that scanned the folders (``shirabe ingest --workers``); any
number of workers on any machines join it (``shirabe worker``), each claiming one file at a
time, reading and embedding it, and writing it to the store in the claim's own transaction.
Only a store every machine reaches can host one (:class:`QueueHost`): PostgreSQL does, the
embedded store (a folder on one machine) does not.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from shirabe.errors import ConfigurationError
from shirabe.records import FileResult
from shirabe.stores.protocol import Backend, Store


@dataclass(frozen=True, slots=True)
class QueuedFile:
    """A file of a run: where a worker reads it, and its place below the run's root."""

    path: str
    key: str
    relative: str


@dataclass(frozen=True, slots=True)
class RunPlan:
    """What a run asks of its workers: the root its files are known below, the folders below
    which nothing is read, how files are indexed (a worker that would index them otherwise
    refuses to join), and whom the audit log names."""

    root: str
    skip: tuple[str, ...]
    recipe: str
    actor: str


@dataclass(frozen=True, slots=True)
class WorkRun:
    """An open run, as a worker joins it."""

    id: int
    plan: RunPlan


@dataclass(frozen=True, slots=True)
class Timings:
    """Where a file's time went, in seconds: all of it from claim to finish, the embedding
    model's share, the wait for the writer lock, and the write transaction after it."""

    seconds: float = 0.0
    embedding: float = 0.0
    waiting: float = 0.0
    writing: float = 0.0


@dataclass(frozen=True, slots=True)
class Finished:
    """A file a worker finished: its result, who finished it after how many claims, and
    where the time went."""

    result: FileResult
    worker: str
    attempts: int
    timings: Timings


class Claim(Protocol):
    """One file held by one worker until :meth:`finish` or :meth:`release`. If the worker
    dies first, the claim ends with its connection and the file goes to another worker."""

    run: WorkRun
    file: QueuedFile
    attempts: int
    """Claims of this file so far, this one included."""

    def writing(self) -> AbstractContextManager[None]:
        """The store's writes of this file, during the block, go into the claim's own
        transaction: they become visible with :meth:`finish`, or never."""
        ...

    def finish(self, result: FileResult, timings: Timings) -> None:
        """The file is done: its writes and its result are committed together."""
        ...

    def release(self) -> None:
        """Give the file back untouched (its writes undone) for another worker."""
        ...


class WorkQueue(Protocol):
    """The runs and their files, as the ingest that opens a run and its workers see them."""

    def open_run(self, plan: RunPlan, files: Sequence[QueuedFile]) -> int:
        """A new run of ``files``; its id. Runs left open by an ingest that is gone are
        closed first (only one ingest at a time opens runs: it holds the writer lock)."""
        ...

    def collect(self, run: int) -> list[Finished]:
        """The files of ``run`` finished since the last call, each given once."""
        ...

    def waiting(self, run: int) -> int:
        """Files of ``run`` not finished: waiting, or held by a worker."""
        ...

    def claimable(self, run: int, most: int) -> int:
        """Files of ``run`` no worker holds now (up to ``most``)."""
        ...

    def close_run(self, run: int, *, abandoned: bool = False) -> None:
        """End ``run``: finished, or abandoned (its files no worker holds are dropped)."""
        ...

    def claim(self, worker: str) -> Claim | None:
        """The next file of an open run that no worker holds, claimed by ``worker``; None
        when there is none."""
        ...

    def pending(self) -> int:
        """Files of open runs not finished: waiting, or held (a worker that dies gives its
        file back, so a worker with nothing to claim waits while this is not 0)."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class QueueHost(Protocol):
    """A backend whose store every machine reaches, which can host the workers' queue."""

    def open_queue(self, store: Store, *, lost_after: float) -> WorkQueue:
        """The queue beside ``store`` (opened by this backend), whose claims the database
        ends ``lost_after`` seconds after a worker's machine stops answering."""
        ...


def open_queue(backend: Backend, store: Store, *, lost_after: float) -> WorkQueue:
    """The workers' queue beside ``store``; a clear error for a backend that has none."""
    if not isinstance(backend, QueueHost):
        raise ConfigurationError(
            "ingest workers share a queue in the database, and this store has none (the "
            "embedded store is a folder on one machine): set SHIRABE_STORE__DATABASE_URL to "
            "use PostgreSQL, or ingest without --workers"
        )
    return backend.open_queue(store, lost_after=lost_after)
