"""Documents: the list with failures, one document's passages, uploads, deletes, reindex."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import APIRouter, File, Form, Query, Request, UploadFile
from sse_starlette.sse import EventSourceResponse
from starlette.concurrency import run_in_threadpool

from shirabe.access.map import check_group
from shirabe.indexing.ingest import IngestEvent
from shirabe.indexing.tags import CATEGORY, groups_of
from shirabe.loaders.registry import loader_for
from shirabe.records import IngestReport, SourceInfo
from shirabe.server.deps import Admin, Principal, Server, ServerDep, Who
from shirabe.server.errors import ApiError

router = APIRouter(tags=["documents"])

UPLOAD_CATEGORY = "アップロード"
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
    groups: Annotated[list[str] | None, Form()] = None,
) -> Any:
    """Upload files and ingest them. The response is JSON, or with ``Accept:
    text/event-stream`` server-sent ``progress`` events per file and a final ``done``.

    Readers: ``groups`` (admins only); else the uploader's groups, else the default ones.
    """
    if groups and not who.admin:
        raise ApiError(403, "forbidden", "only admins choose the groups of an upload")
    readers = _upload_groups(who, groups, server)
    folder = _upload_folder(server.uploads, category)
    saved, rejected = await _save_all(files, folder, server.shirabe.settings.max_file_bytes)

    def run(progress: Any = None) -> IngestReport:
        return server.shirabe.ingest(saved, progress, groups=readers, root=server.uploads)

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
        return {"files": rejected + done, "groups": list(readers), "category": category}

    if "text/event-stream" not in request.headers.get("accept", ""):
        report = await run_in_threadpool(run) if saved else IngestReport()
        return result(report)
    return EventSourceResponse(_progress_events(run, result, server, bool(saved)))


async def _progress_events(
    run: Any, result: Any, server: Server, saved: bool
) -> AsyncIterator[dict[str, str]]:
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
    report = task.result() if saved else IngestReport()
    yield {"event": "done", "data": json.dumps(result(report), ensure_ascii=False)}


@router.get("/api/documents/{document_id}")
def document(who: Who, server: ServerDep, document_id: int) -> dict[str, Any]:
    """One document with its passages in order (its summary first). A document the
    caller may not read is reported as missing, like one that does not exist."""
    source = server.shirabe.store.get_source_by_id(document_id)
    if source is None or not who.reader.may_read(groups_of(source)):
        raise ApiError(404, "not_found", f"no document {document_id}")
    passages = [
        {
            "chunk_id": c.id,
            "heading_path": list(c.heading_path),
            "locator": c.locator,
            "is_summary": c.is_summary,
            "text": c.text,
        }
        for c in server.shirabe.store.source_chunks(source.path)
    ]
    return _document(source, server, who) | {"passages": passages}


@router.delete("/api/documents/{document_id}")
def delete_document(who: Admin, server: ServerDep, document_id: int) -> dict[str, Any]:
    source = server.shirabe.store.get_source_by_id(document_id)
    if source is None:
        raise ApiError(404, "not_found", f"no document {document_id}")
    server.shirabe.remove(source.path)
    if Path(source.path).is_relative_to(server.uploads):
        Path(source.path).unlink(missing_ok=True)  # an upload has no other home
    return {"deleted": document_id, "path": server.show(source.path)}


@router.post("/api/reindex")
def reindex(who: Admin, server: ServerDep) -> dict[str, Any]:
    if not server.folders:
        raise ApiError(409, "no_folders", "the server was started without folders")
    report = server.shirabe.ingest(server.folders)
    return {"counts": report.counts, "seconds": report.seconds}


def _safe_name(filename: str) -> str | None:
    """The last path component of an uploaded name, if it is a usable file name."""
    name = filename.replace("\\", "/").rsplit("/", 1)[-1].strip()
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
    name = _safe_name(category)
    if name is None:
        raise ApiError(422, "invalid_request", f"category: {category!r} is not a folder name")
    folder = uploads / name
    folder.mkdir(parents=True, exist_ok=True)
    return folder


async def _save_all(
    files: list[UploadFile], folder: Path, limit: int
) -> tuple[list[Path], list[dict[str, Any]]]:
    """The uploads written to ``folder``, and the outcome of each one refused."""
    saved: list[Path] = []
    rejected: list[dict[str, Any]] = []
    for upload_file in files:
        name = _safe_name(upload_file.filename or "")
        reason = None
        if name is None:
            reason = "not a file name"
        elif loader_for(Path(name)) is None:
            reason = f"unsupported file type {Path(name).suffix or '(none)'}"
        elif await _save(upload_file, folder / name, limit) is None:
            reason = f"file too large (limit {limit:,} bytes)"
        if reason is None and name is not None:
            saved.append(folder / name)
        else:
            path = upload_file.filename if name is None else name
            rejected.append({"path": path, "outcome": "failed", "reason": reason})
    return saved, rejected


async def _save(upload: UploadFile, target: Path, limit: int) -> int | None:
    """Write the upload to ``target`` (replacing it); None, and nothing kept, over ``limit``."""
    partial = target.with_name(target.name + ".part")
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


def _upload_groups(who: Principal, groups: list[str] | None, server: Server) -> tuple[str, ...]:
    if groups:
        return tuple(dict.fromkeys(check_group(g, "groups") for g in groups))
    if who.name is not None and not who.admin:
        own = server.shirabe.accounts.get_user(who.name).groups
        if own:
            return own
    return tuple(server.shirabe.settings.default_groups)


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
        item["groups"] = groups_of(source)
    return item
