"""Small pieces every store shares: timestamps, the embedding-model check, waiting for the
writer lock, and the rows of a source and of an ingest report."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime

from shirabe.errors import IndexBusyError, ModelMismatchError
from shirabe.records import IngestReport
from shirabe.stores.protocol import SourceRecord

log = logging.getLogger(__name__)

UPDATE_TIMEOUT = 600.0
"""Seconds an ingest waits for another process's ingest of the same index to finish."""
_POLL_SECONDS = 0.5


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def check_model(
    where: str,
    stored_model: str | None,
    stored_dim: str | None,
    embedding_model: str,
    embedding_dim: int,
    *,
    hint: str,
) -> None:
    """Refuse to mix embedding models in one index; ``where`` names the index, ``hint`` the way
    out."""
    if stored_model is not None and stored_model != embedding_model:
        raise ModelMismatchError(
            f"{where} was built with embedding model {stored_model!r}, not "
            f"{embedding_model!r}; {hint}"
        )
    if stored_dim is not None and int(stored_dim) != embedding_dim:
        raise ModelMismatchError(
            f"{where} holds {stored_dim}-dimensional vectors, the embedder makes {embedding_dim}"
        )


def take_turn(try_lock: Callable[[], bool], where: str, timeout: float) -> None:
    """Take the index's writer lock with ``try_lock`` (True once held), waiting up to
    ``timeout`` seconds for another process to release it, and saying so in the log.

    Raises IndexBusyError when the wait runs out (at once with ``timeout`` 0)."""
    if try_lock():
        return
    if timeout > 0:
        log.warning(
            "the index (%s) is being updated by another process; waiting up to %.0f s for it "
            "to finish",
            where,
            timeout,
        )
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            time.sleep(min(_POLL_SECONDS, left))
            if try_lock():
                log.warning("the other update of the index finished; this one goes ahead")
                return
    raise IndexBusyError(where, timeout)


def source_row(
    source: SourceRecord, status: str, error: str | None
) -> tuple[str, str, int, float, str, str | None, str, str, str]:
    """The values of a ``sources`` row: path, sha256, size, mtime, status, error, metadata,
    ingested_at, warnings."""
    return (
        source.path,
        source.sha256,
        source.size,
        source.mtime,
        status,
        error,
        json.dumps(dict(source.metadata), ensure_ascii=False),
        now(),
        json.dumps(list(source.warnings), ensure_ascii=False),
    )


def ingest_row(report: IngestReport) -> tuple[str, float, int, int, int, int, int]:
    """The values of one row of the ``ingests`` table."""
    counts = report.counts
    return (
        now(),
        report.seconds,
        counts["added"],
        counts["updated"],
        counts["removed"],
        counts["unchanged"],
        counts["failed"],
    )
