"""What ingest workers and the ingest that starts them decide, as functions of what they see
of the queue (:mod:`shirabe.stores.queue`): nothing here reads or waits."""

from __future__ import annotations

from typing import Literal

Idle = Literal["wait", "stop"]
Step = Literal["done", "start", "wait", "stalled"]


def when_idle(pending: int, *, wait: bool) -> Idle:
    """What a worker that found nothing to claim does: it waits while files of open runs are
    unfinished (another worker holds them, and gives them back if it dies) or when it was told
    to wait for runs; otherwise it stops."""
    return "wait" if pending > 0 or wait else "stop"


def gives_up(attempts: int, limit: int) -> bool:
    """Whether a file claimed for the ``attempts``-th time is recorded as failed instead of
    read: each of the ``limit`` claims before it ended without the file being finished."""
    return attempts > limit


def next_step(
    *, waiting: int, running: int, wanted: int, claimable: int, starts_left: int
) -> tuple[Step, int]:
    """What the ingest that opened a run does next, and how many local workers it starts:
    ``waiting`` files unfinished, ``running`` of the ``wanted`` local workers alive,
    ``claimable`` files no worker holds, ``starts_left`` workers it may still start. Done
    when nothing waits; it starts workers while some are missing and files are free; it
    waits while others (here or on other machines) hold the files; stalled when files are
    free and no worker is left to take them."""
    if waiting == 0:
        return "done", 0
    start = max(0, min(wanted - running, claimable, starts_left))
    if start:
        return "start", start
    if running == 0 and claimable > 0:
        return "stalled", 0
    return "wait", 0
