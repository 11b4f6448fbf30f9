"""Documents: the list with failures, one document's passages, uploads, deletes, reindex."""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import unicodedata
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import APIRouter, File, Form, Query, Request, Response, UploadFile
from sse_starlette.sse import EventSourceResponse
from starlette.concurrency import run_in_threadpool

from shirabe.indexing.places import place_of
from shirabe.loaders.pdfpage import PageImageError, probes, render_page
from shirabe.loaders.protocol import LoadOptions
from shirabe.loaders.registry import loader_for
from shirabe.records import (
    CATEGORY,
    PUBLIC,
    UPLOADED_BY,
    Chunk,
    IngestEvent,
    IngestReport,
    SourceInfo,
)
from shirabe.server.deps import Admin, Principal, Server, ServerDep, Who
from shirabe.server.errors import ApiError
from shirabe.text.paths import canonical_name, mixed_scripts

router = APIRouter(tags=["documents"])

UPLOAD_CATEGORY = "アップロード"
ANONYMOUS = "(anonymous)"
"""The uploader the audit log names for an upload without a token (local anonymous access)."""
MAX_NAME_BYTES = 200
"""Uploaded names are shortened to this many UTF-8 bytes, their suffix kept: file systems hold
255 bytes a name, and a file being received has ``.part`` added."""
_UNSAFE = re.compile(r'[\x00-\x1f<>:"|?*\\/]')


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
    folder = _upload_folder(server.uploads, category)
    async with server.upload_lock:  # checked and written in turn; the ingest may then wait
        checked = [_checked(who, server, folder, f) for f in files]
        folder.mkdir(parents=True, exist_ok=True)
        saved, rejected, unusable = await _save_all(
            files, folder, server.shirabe.settings.limits.max_file_bytes
        )
    uploader = who.name or ANONYMOUS

    def run(progress: Any = None) -> IngestReport:
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
    if "text/event-stream" not in request.headers.get("accept", ""):
        return result(await run_in_threadpool(run))
    return EventSourceResponse(_progress_events(run, result, server))


def _may_replace(who: Principal, server: Server, path: Path) -> bool:
    """Whether ``who`` may write the document at ``path`` in the uploads area: a new one, one
    they uploaded, or any for an admin. A file there that is not indexed yet (another upload
    waiting for its ingest, or a file put there by hand) is nobody's to replace but an
    admin's."""
    if who.admin:
        return True
    place = place_of(path, server.uploads)
    assert place is not None
    existing = server.shirabe.store.get_source(place.key)
    if existing is None:
        return not path.exists()
    return who.name is not None and existing.metadata.get(UPLOADED_BY) == who.name


def _checked(who: Principal, server: Server, folder: Path, upload: UploadFile) -> tuple[str, ...]:
    """The readers an upload would have; refused before anything is saved when ``who`` may
    not give them those readers (403) or may not replace the document there (409)."""
    name = _safe_name(upload.filename or "")
    if name is None:
        return ()
    place = place_of(folder / name, server.uploads)
    assert place is not None
    readers = server.shirabe.access.groups_for(place.relative)
    if who.admin:
        return readers
    own = who.reader.visible or frozenset({PUBLIC})
    outside = [g for g in readers if g not in own]
    if outside:
        raise ApiError(
            403,
            "forbidden",
            f"{place.relative} would be readable by {', '.join(outside)}, which you are not "
            "in; upload it into a category of your own groups",
        )
    if not _may_replace(who, server, folder / name):
        raise ApiError(
            409,
            "conflict",
            f"{place.relative} already exists and was not uploaded by you; only an admin can "
            "replace it (upload it under another name or category)",
        )
    return readers


async def _progress_events(run: Any, result: Any, server: Server) -> AsyncIterator[dict[str, str]]:
    """A ``progress`` event per file as the ingest goes, then ``done`` with the outcome."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[dict[str, str] | None] = asyncio.Queue()

    def progress(event: IngestEvent) -> None:
        if event.kind != "file" or event.result is None:
            return
        data = {
            "done": event.done,
            "total": event.total,
            "path": server.show(event.result.path),
            "outcome": event.result.outcome,
            "reason": event.result.reason,
        }
        message = {"event": "progress", "data": json.dumps(data, ensure_ascii=False)}
        loop.call_soon_threadsafe(queue.put_nowait, message)

    task = asyncio.ensure_future(run_in_threadpool(run, progress))
    task.add_done_callback(lambda _t: loop.call_soon_threadsafe(queue.put_nowait, None))
    while (message := await queue.get()) is not None:
        yield message
    report = task.result()
    yield {"event": "done", "data": json.dumps(result(report), ensure_ascii=False)}


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
    page = chunk.locator.get("page")
    if not source.path.lower().endswith(".pdf") or not isinstance(page, int):
        raise ApiError(404, "no_page", f"passage {chunk_id} is not on a PDF page")
    path = Path(source.path)
    if not path.is_file() or _sha256(path) != source.sha256:
        raise ApiError(409, "changed", f"{server.show(source.path)} changed since it was indexed")
    options = LoadOptions(passwords=server.shirabe.settings.ingest.passwords)
    try:
        image = render_page(
            source.path, page, probes(chunk.text), password=options.password_for(path)
        )
    except PageImageError as exc:
        shown = str(exc).replace(source.path, server.show(source.path))
        raise ApiError(422, "no_image", shown) from None
    return Response(image, media_type="image/png", headers={"Cache-Control": "private, no-store"})


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@router.delete("/api/documents/{document_id}")
def delete_document(who: Admin, server: ServerDep, document_id: int) -> dict[str, Any]:
    source = server.shirabe.catalog.document(document_id, who.reader)
    if source is None:
        raise ApiError(404, "not_found", f"no document {document_id}")
    server.shirabe.remove(source.path, actor=who.name)
    if Path(source.path).is_relative_to(server.uploads):
        Path(source.path).unlink(missing_ok=True)  # an upload has no other home
    return {"deleted": document_id, "path": server.show(source.path)}


@router.post("/api/reindex")
def reindex(who: Admin, server: ServerDep) -> dict[str, Any]:
    if not server.folders:
        raise ApiError(409, "no_folders", "the server was started without folders")
    report = server.shirabe.ingest(server.folders, actor=who.name)
    return {"counts": report.counts, "seconds": report.seconds}


def _safe_name(filename: str) -> str | None:
    """The last path component of an uploaded name, if it is a usable file name. Format
    characters are dropped: a right-to-left override would show ``ok\u202egpj.md`` as
    ``okdm.jpg``."""
    name = unicodedata.normalize("NFC", filename.replace("\\", "/").rsplit("/", 1)[-1])
    name = "".join(ch for ch in name if unicodedata.category(ch) != "Cf").strip()
    if not name or name in {".", ".."} or name.startswith(".") or _UNSAFE.search(name):
        return None
    return _shortened(name)


def _shortened(name: str, limit: int = MAX_NAME_BYTES) -> str:
    """``name`` cut to ``limit`` UTF-8 bytes at a character boundary, its suffix kept."""
    if len(name.encode("utf-8")) <= limit:
        return name
    suffix = Path(name).suffix if len(Path(name).suffix) <= 16 else ""
    room = limit - len(suffix.encode("utf-8"))
    stem = name[: len(name) - len(suffix)].encode("utf-8")[:room].decode("utf-8", "ignore")
    return stem + suffix


def _upload_folder(uploads: Path, category: str) -> Path:
    """The folder of ``category`` in the uploads area (made only once the upload is allowed),
    named in its canonical form: ``⼈事`` or ``人事.`` is the category ``人事``, with its
    readers. A name that mixes look-alike alphabets (``НR`` with a Cyrillic Н) is refused: it
    would be shown as another category's name."""
    name = _safe_name(canonical_name(category))
    if name is None:
        raise ApiError(422, "invalid_request", f"category: {category!r} is not a folder name")
    mixed = mixed_scripts(name)
    if mixed:
        raise ApiError(
            422,
            "invalid_request",
            f"category: {category!r} mixes {' and '.join(s.title() for s in mixed)} letters, "
            "which look alike; write it in one alphabet",
        )
    return uploads / name


async def _save_all(
    files: list[UploadFile], folder: Path, limit: int
) -> tuple[list[Path], list[tuple[Path, str]], list[dict[str, Any]]]:
    """The uploads written to ``folder``; each one refused with its reason (recorded as a
    failure of the run, so that the document list shows it); and the outcome of each file
    whose name is no file name (only answered: it has no place to record it at)."""
    saved: list[Path] = []
    rejected: list[tuple[Path, str]] = []
    unusable: list[dict[str, Any]] = []
    for upload_file in files:
        name = _safe_name(upload_file.filename or "")
        if name is None:
            shown = unicodedata.normalize("NFC", upload_file.filename or "")
            unusable.append(
                {"path": shown, "outcome": "failed", "chunks": 0, "reason": "not a file name"}
            )
        elif loader_for(Path(name)) is None:
            suffix = Path(name).suffix or "(none)"
            rejected.append((folder / name, f"unsupported file type {suffix}"))
        elif await _save(upload_file, folder / name, limit) is None:
            rejected.append((folder / name, f"file too large (limit {limit:,} bytes)"))
        else:
            saved.append(folder / name)
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
