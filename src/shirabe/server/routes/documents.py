"""Documents: the list with failures, one document's passages, uploads, deletes, reindex."""

from __future__ import annotations

import unicodedata
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import APIRouter, File, Form, Query, Request, Response, UploadFile

from shirabe.errors import (
    ChangedFileError,
    NoPageError,
    PageImageError,
    UploadConflictError,
    UploadError,
    UploadForbiddenError,
)
from shirabe.records import (
    CATEGORY,
    UPLOADED_BY,
    Chunk,
    IngestReport,
    Progress,
    SourceInfo,
)
from shirabe.server.deps import Admin, Principal, Server, ServerDep, Who
from shirabe.server.errors import ApiError
from shirabe.server.routes.streams import answered
from shirabe.text.paths import canonical_name

router = APIRouter(tags=["documents"])

UPLOAD_CATEGORY = "アップロード"
ANONYMOUS = "(anonymous)"
"""The uploader the audit log names for an upload without a token (local anonymous access)."""


@router.get("/api/documents")
def documents(
    who: Who,
    server: ServerDep,
    status: Annotated[Literal["ok", "failed"] | None, Query()] = None,
    category: Annotated[str | None, Query(max_length=200)] = None,
    q: Annotated[str | None, Query(max_length=200, description="part of the path")] = None,
    offset: Annotated[int, Query(ge=0)] = 0,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> dict[str, Any]:
    category = canonical_name(category) if category else category
    q = unicodedata.normalize("NFC", q) if q else q
    items = [
        s
        for s in server.readable(who)
        if (status is None or s.status == status)
        and (category is None or s.metadata.get(CATEGORY) == category)
        and (not q or q in server.show(s.path))
    ]
    page = items[offset : offset + limit]
    return {
        "total": len(items),
        "offset": offset,
        "items": [_document(s, server, who) for s in page],
    }


@router.post("/api/documents")
async def upload(
    who: Who,
    server: ServerDep,
    request: Request,
    files: Annotated[list[UploadFile], File(description="Files to add")],
    category: Annotated[str, Form(max_length=64)] = UPLOAD_CATEGORY,
    groups: Annotated[list[str] | None, Form(deprecated=True)] = None,
) -> Any:
    """Upload files into a category and ingest them. The response is JSON, or with ``Accept:
    text/event-stream`` server-sent ``progress`` events per file and a final ``done``.

    An upload lives in the category's folder of the uploads area, and its readers are those
    the access map gives that place, as for any file. A user may upload only where every
    reader group is one of theirs (or ``public``), and replace only what they uploaded
    themselves; admins may do both anywhere.
    """
    if groups:
        raise ApiError(
            422,
            "invalid_request",
            "groups: the readers of an upload come from the access map for its place "
            f"({category}/<file>), as for any file; change them there",
        )
    if who.name is None and server.shirabe.settings.server.anonymous != "localhost":
        raise ApiError(403, "sign_in_required", "sign in with an API token to upload")
    desk = server.shirabe.upload_desk
    with _refusals():
        folder = desk.folder(category)
    async with server.upload_lock:  # checked and written in turn; the ingest may then wait
        checked = [_checked(who, server, folder, f) for f in files]
        folder.mkdir(parents=True, exist_ok=True)
        saved, rejected, unusable = await _save_all(
            files, folder, server.shirabe.settings.limits.max_file_bytes, server
        )
    uploader = who.name or ANONYMOUS

    def run(progress: Progress | None) -> IngestReport:
        return server.shirabe.ingest(
            saved,
            progress,
            area=server.uploads,
            uploader=uploader,
            rejected=rejected,
            actor=uploader,
        )

    def result(report: IngestReport) -> dict[str, Any]:
        done = [
            {
                "path": server.show(f.path),
                "outcome": f.outcome,
                "chunks": f.chunks,
                "reason": f.reason,
            }
            for f in report.files
        ]
        readers = sorted({g for found in checked for g in found})
        return {"files": unusable + done, "groups": readers, "category": folder.name}

    if not saved and not rejected:  # every file refused without a trace to keep
        return result(IngestReport())
    return await answered(request, server, run, result)


def _checked(who: Principal, server: Server, folder: Path, upload: UploadFile) -> tuple[str, ...]:
    """The readers an upload would have; refused before anything is saved when ``who`` may
    not give them those readers (403) or may not replace the document there (409)."""
    desk = server.shirabe.upload_desk
    target = desk.target(folder, upload.filename or "")
    if target is None:
        return ()
    with _refusals():
        return desk.readers(who.reader, who.name, target)


@contextmanager
def _refusals() -> Iterator[None]:
    """An upload refused by the engine, given as the API's error."""
    try:
        yield
    except UploadForbiddenError as exc:
        raise ApiError(403, "forbidden", str(exc)) from None
    except UploadConflictError as exc:
        raise ApiError(409, "conflict", str(exc)) from None
    except UploadError as exc:
        raise ApiError(422, "invalid_request", str(exc)) from None


@router.get("/api/documents/{document_id}")
def document(who: Who, server: ServerDep, document_id: int) -> dict[str, Any]:
    """One document with its passages in order (its summary first). A document the
    caller may not read is reported as missing, like one that does not exist."""
    source = server.shirabe.catalog.document(document_id, who.reader)
    if source is None:
        raise ApiError(404, "not_found", f"no document {document_id}")
    return _with_passages(source, server, who)


@router.get("/api/passages/{chunk_id}/document")
def passage_document(who: Who, server: ServerDep, chunk_id: int) -> dict[str, Any]:
    """The whole document a passage (a citation's ``chunk_id``) comes from, as
    ``/api/documents/{id}`` gives it: the page opens it at that passage."""
    _, source = _readable_passage(server, who, chunk_id)
    return _with_passages(source, server, who)


def _readable_passage(server: Server, who: Principal, chunk_id: int) -> tuple[Chunk, SourceInfo]:
    """A passage and its document; 404 when either is missing or the caller may not read
    it (the same answer, so that a probe learns nothing)."""
    found = server.shirabe.catalog.passage(chunk_id, who.reader)
    if found is None:
        raise ApiError(404, "not_found", f"no passage {chunk_id}")
    return found


def _with_passages(source: SourceInfo, server: Server, who: Principal) -> dict[str, Any]:
    passages = [
        {
            "chunk_id": c.id,
            "heading_path": list(c.heading_path),
            "locator": c.locator,
            "is_summary": c.is_summary,
            "text": c.text,
        }
        for c in server.shirabe.catalog.passages(source)
    ]
    return _document(source, server, who) | {"passages": passages}


@router.get(
    "/api/passages/{chunk_id}/page.png",
    response_class=Response,
    responses={200: {"content": {"image/png": {}}}},
)
def passage_page(who: Who, server: ServerDep, chunk_id: int) -> Response:
    """The PDF page a passage comes from, as an image with the passage marked. A passage of a
    document the caller may not read is reported as missing, like one that does not exist; a
    file changed since it was indexed is a 409 (the page may no longer show the passage)."""
    chunk, source = _readable_passage(server, who, chunk_id)
    try:
        image = server.shirabe.page_images.render(chunk, source)
    except NoPageError as exc:
        raise ApiError(404, "no_page", str(exc)) from None
    except PageImageError as exc:
        shown = str(exc).replace(exc.path, server.show(exc.path)) if exc.path else str(exc)
        code = (409, "changed") if isinstance(exc, ChangedFileError) else (422, "no_image")
        raise ApiError(*code, shown) from None
    return Response(image, media_type="image/png", headers={"Cache-Control": "private, no-store"})


@router.delete("/api/documents/{document_id}")
def delete_document(who: Admin, server: ServerDep, document_id: int) -> dict[str, Any]:
    """Admins only: drop a document from the index (an upload's file too)."""
    source = server.shirabe.catalog.document(document_id, who.reader)
    if source is None:
        raise ApiError(404, "not_found", f"no document {document_id}")
    server.shirabe.remove(source.path, actor=who.name)
    return {"deleted": document_id, "path": server.show(source.path)}


@router.post("/api/reindex")
def reindex(who: Admin, server: ServerDep) -> dict[str, Any]:
    """Admins only: ingest the served folders again."""
    if not server.folders:
        raise ApiError(409, "no_folders", "the server was started without folders")
    report = server.shirabe.ingest(server.folders, actor=who.name)
    return {"counts": report.counts, "seconds": report.seconds}


async def _save_all(
    files: list[UploadFile], folder: Path, limit: int, server: Server
) -> tuple[list[Path], list[tuple[Path, str]], list[dict[str, Any]]]:
    """The uploads written to ``folder``; each one refused with its reason (recorded as a
    failure of the run, so that the document list shows it); and the outcome of each file
    whose name is no file name (only answered: it has no place to record it at)."""
    saved: list[Path] = []
    rejected: list[tuple[Path, str]] = []
    unusable: list[dict[str, Any]] = []
    desk = server.shirabe.upload_desk
    for upload_file in files:
        target = desk.target(folder, upload_file.filename or "")
        if target is None:
            shown = unicodedata.normalize("NFC", upload_file.filename or "")
            unusable.append(
                {"path": shown, "outcome": "failed", "chunks": 0, "reason": "not a file name"}
            )
        elif (unsupported := desk.unsupported(target)) is not None:
            rejected.append((target, unsupported))
        elif await _save(upload_file, target, limit) is None:
            rejected.append((target, f"file too large (limit {limit:,} bytes)"))
        else:
            saved.append(target)
    return saved, rejected, unusable


async def _save(upload: UploadFile, target: Path, limit: int) -> int | None:
    """Write the upload to ``target`` (replacing it); None, and nothing kept, over ``limit``."""
    partial = target.with_name(f".{uuid.uuid4().hex}.part")  # hidden: never walked
    size = 0
    with partial.open("wb") as out:
        while chunk := await upload.read(1 << 20):
            size += len(chunk)
            if size > limit:
                out.close()
                partial.unlink(missing_ok=True)
                return None
            out.write(chunk)
    partial.replace(target)
    return size


def _document(source: SourceInfo, server: Server, who: Principal) -> dict[str, Any]:
    item: dict[str, Any] = {
        "id": source.id,
        "path": server.show(source.path),
        "category": source.metadata.get(CATEGORY),
        "status": source.status,
        "error": source.error,
        "chunks": source.chunks,
        "ingested_at": source.ingested_at,
        "warnings": list(source.warnings),
    }
    if who.admin:
        item["groups"] = source.groups
        item["uploaded_by"] = source.metadata.get(UPLOADED_BY)
    return item
