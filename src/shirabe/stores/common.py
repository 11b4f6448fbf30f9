"""Small pieces every store shares: timestamps, the embedding-model check, and the rows of a
source and of an ingest report."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from shirabe.errors import ModelMismatchError
from shirabe.records import IngestReport
from shirabe.stores.protocol import SourceRecord


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
