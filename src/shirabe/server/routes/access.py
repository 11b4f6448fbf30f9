"""The access map from the admin page: its rules and who reads each top-level folder, what a
change would do before it is saved, and saving it (audited; the documents whose readers
change are given their new readers at once). Admins only."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, Field

from shirabe.errors import ConfigurationError
from shirabe.records import AccessPreview, IngestReport, Progress
from shirabe.server.deps import Admin, Server, ServerDep
from shirabe.server.errors import ApiError
from shirabe.server.routes.streams import answered

router = APIRouter(tags=["admin"])

MAX_MAP_CHARS = 100_000
"""The longest access map the page may save (a map of thousands of rules fits)."""
LISTED = 200
"""Documents whose readers change listed by default (the counts are always whole)."""


class AccessMapText(BaseModel):
    text: Annotated[str, Field(max_length=MAX_MAP_CHARS, description="The map as YAML")]


@router.get("/api/admin/access")
def access_map(who: Admin, server: ServerDep) -> dict[str, Any]:
    """The access map's file and rules (``editable``: a file is configured to save them in),
    the default groups, and per top-level folder the readers its documents have."""
    shirabe = server.shirabe
    with _invalid():
        current = shirabe.access
        text = shirabe.access_file.text()
    return {
        "file": str(shirabe.access_file.path) if shirabe.access_file.path else None,
        "editable": shirabe.access_file.path is not None,
        "text": text,
        "rules": [{"glob": glob, "groups": list(groups)} for glob, groups in current.rules],
        "default": list(current.default),
        "places": [
            {
                "place": server.show(p.place),
                "documents": p.documents,
                "readers": [{"groups": list(g), "documents": n} for g, n in p.readers],
            }
            for p in shirabe.readers.places()
        ],
    }


@router.post("/api/admin/access/preview")
def preview(
    who: Admin,
    server: ServerDep,
    body: AccessMapText,
    limit: Annotated[int, Query(ge=1, le=5000)] = LISTED,
) -> dict[str, Any]:
    """What saving ``text`` would do, nothing saved: the documents whose readers change (the
    first ``limit``), and per group how many documents it gains and loses. A map that does
    not parse is a 422 naming the rule."""
    with _invalid():
        found = server.shirabe.preview_access(body.text, limit=limit)
    return _preview(server, found)


@router.put("/api/admin/access")
async def save(who: Admin, server: ServerDep, request: Request, body: AccessMapText) -> Any:
    """Save the map (audited), then read again every document whose readers it changes (their
    embeddings come from the cache). JSON, or with ``Accept: text/event-stream`` a
    ``progress`` event per file and a final ``done``. 409 without an access map file."""
    shirabe = server.shirabe
    if shirabe.access_file.path is None:
        raise ApiError(
            409, "no_access_map", "no access map file is configured (SHIRABE_INGEST__ACCESS_MAP)"
        )
    with _invalid():
        shirabe.access_file.parse(body.text)  # refused before anything is written

    def work(progress: Progress | None) -> tuple[AccessPreview, IngestReport]:
        return shirabe.change_access(body.text, progress, actor=who.name)

    def result(done: tuple[AccessPreview, IngestReport]) -> dict[str, Any]:
        change, report = done
        counts = {"counts": report.counts, "seconds": report.seconds}
        return _preview(server, change, LISTED) | {"saved": True, "report": counts}

    return await answered(request, server, work, result)


def _preview(server: Server, found: AccessPreview, limit: int | None = None) -> dict[str, Any]:
    return {
        "documents": found.documents,
        "changed": found.changed,
        "changes": [
            {"path": server.show(c.path), "before": list(c.before), "after": list(c.after)}
            for c in found.changes[:limit]
        ],
        "groups": [{"group": g.group, "gains": g.gains, "loses": g.loses} for g in found.groups],
    }


@contextmanager
def _invalid() -> Iterator[None]:
    """A map that does not parse (or a file that cannot be read), as a 422 naming why."""
    try:
        yield
    except ConfigurationError as exc:
        raise ApiError(422, "invalid_access_map", str(exc)) from None
