"""The HTTP API: a thin face over ``Shirabe``.

Every request is made on behalf of a reader: the user of the bearer token, or an anonymous
reader (public documents only) when anonymous access is enabled. What a reader may not read
never reaches them: searches and answers are filtered inside retrieval, and document lists
and counts are filtered the same way.

Errors always have one shape, ``{"error": {"status", "code", "message", "fields"?}}``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import Depends, FastAPI, File, Form, Query, Request, UploadFile
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field
from sse_starlette.sse import EventSourceResponse
from starlette.concurrency import iterate_in_threadpool, run_in_threadpool
from starlette.exceptions import HTTPException
from swagger_ui_bundle import swagger_ui_path

from shirabe.access import PUBLIC, Reader, check_group, restrict
from shirabe.engine import Shirabe
from shirabe.errors import ShirabeError
from shirabe.generators.protocol import (
    CitationsEvent,
    DoneEvent,
    ErrorEvent,
    GenerationEvent,
    GeneratorError,
    HitsEvent,
    TokenEvent,
)
from shirabe.ingest import CATEGORY, GROUPS, IngestEvent
from shirabe.loaders import loader_for
from shirabe.records import IngestReport, SourceInfo
from shirabe.serialize import answer_json, citation_json, hit_json
from shirabe.stores.protocol import Filters

logger = logging.getLogger(__name__)

PAGE_POLICY = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "connect-src 'self'; img-src 'self' data:; form-action 'self'; base-uri 'none'"
)
LOCAL_HOSTS = frozenset({"127.0.0.1", "::1", "localhost", "testclient"})


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: a user, or anonymous."""

    name: str | None
    reader: Reader

    @property
    def admin(self) -> bool:
        return self.reader.admin


class ApiError(HTTPException):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(status_code=status, detail=message)
        self.code = code


def _error(status: int, code: str, message: str, **extra: Any) -> JSONResponse:
    body = {"error": {"status": status, "code": code, "message": message, **extra}}
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return JSONResponse(body, status_code=status, headers=headers)


# ------------------------------------------------------------------------------- models


class AskRequest(BaseModel):
    question: str = Field(min_length=1, max_length=2000, description="質問")
    top_k: int | None = Field(default=None, ge=1, le=50)
    categories: list[str] = Field(default_factory=list, max_length=50)


class HealthResponse(BaseModel):
    status: Literal["ok"]


# ------------------------------------------------------------------------------- who


def principal(request: Request) -> Principal:
    """The caller, from the bearer token; anonymous only where the settings allow it."""
    shirabe: Shirabe = request.app.state.shirabe
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if header:
        if scheme.lower() != "bearer" or not token.strip():
            raise ApiError(401, "unauthorized", "use 'Authorization: Bearer <token>'")
        user = shirabe.accounts.authenticate(token.strip())
        if user is None:
            raise ApiError(401, "unauthorized", "unknown or revoked token")
        return Principal(user.name, user.reader)
    anonymous = shirabe.settings.anonymous
    host = request.client.host if request.client else ""
    if anonymous == "on" or (anonymous == "localhost" and host in LOCAL_HOSTS):
        return Principal(None, Reader())
    raise ApiError(401, "unauthorized", "sign in with an API token")


def require_admin(who: Annotated[Principal, Depends(principal)]) -> Principal:
    if not who.admin:
        raise ApiError(403, "forbidden", "admins only")
    return who


Who = Annotated[Principal, Depends(principal)]
Admin = Annotated[Principal, Depends(require_admin)]


# ------------------------------------------------------------------------------- app


def create_app(shirabe: Shirabe, *, roots: list[Path] | None = None) -> FastAPI:
    """The API over ``shirabe``; ``roots`` are the folders it serves (paths are shown
    relative to them, and ``/api/reindex`` ingests them again)."""
    settings = shirabe.settings
    folders = [r.resolve() for r in roots or []]
    uploads = (settings.uploads or settings.home / "uploads").resolve()
    folders_shown = [*folders, uploads]

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        await run_in_threadpool(_warm_up, shirabe)
        yield
        shirabe.close()

    app = FastAPI(
        title="shirabe",
        summary="日本語ドキュメント検索・質問応答",
        version="0.1",
        lifespan=lifespan,
        docs_url=None,  # served below from local files: the API page works offline
        redoc_url=None,
    )
    app.state.shirabe = shirabe
    app.mount("/docs-assets", StaticFiles(directory=swagger_ui_path), name="docs-assets")

    @app.get("/docs", include_in_schema=False)
    def api_docs() -> HTMLResponse:
        """The interactive API reference, with no external assets."""
        return get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title="shirabe API",
            swagger_js_url="/docs-assets/swagger-ui-bundle.js",
            swagger_css_url="/docs-assets/swagger-ui.css",
            swagger_favicon_url="/docs-assets/favicon-32x32.png",
        )

    def show(path: str) -> str:
        for root in folders_shown:
            try:
                return Path(path).relative_to(root).as_posix()
            except ValueError:
                continue
        return Path(path).name

    # ---------------------------------------------------------------- errors

    @app.exception_handler(HTTPException)
    async def http_error(_request: Request, exc: HTTPException) -> JSONResponse:
        code = getattr(exc, "code", None) or {
            401: "unauthorized",
            403: "forbidden",
            404: "not_found",
            405: "method_not_allowed",
        }.get(exc.status_code, "error")
        return _error(exc.status_code, code, str(exc.detail))

    @app.exception_handler(RequestValidationError)
    async def invalid(_request: Request, exc: RequestValidationError) -> JSONResponse:
        fields = [
            {"field": ".".join(str(p) for p in e["loc"]), "reason": e["msg"]} for e in exc.errors()
        ]
        first = fields[0] if fields else {"field": "?", "reason": "invalid"}
        return _error(422, "invalid_request", f"{first['field']}: {first['reason']}", fields=fields)

    @app.exception_handler(ShirabeError)
    async def refused(_request: Request, exc: ShirabeError) -> JSONResponse:
        return _error(400, "bad_request", str(exc))

    @app.exception_handler(GeneratorError)
    async def model_failed(_request: Request, exc: GeneratorError) -> JSONResponse:
        return _error(502, "model_error", str(exc))

    @app.exception_handler(Exception)
    async def unexpected(_request: Request, exc: Exception) -> JSONResponse:
        logger.exception("unexpected error", exc_info=exc)
        return _error(500, "internal", "internal error; see the server log")

    def scope(who: Principal, categories: list[str] | None) -> Filters | None:
        filters = Filters(categories=frozenset(categories)) if categories else None
        return restrict(filters, who.reader)

    def readable(who: Principal) -> list[SourceInfo]:
        return [s for s in shirabe.store.list_sources() if who.reader.may_read(_groups(s))]

    # ---------------------------------------------------------------- routes

    page = (Path(__file__).parent / "static" / "index.html").read_text(encoding="utf-8")

    @app.get("/", include_in_schema=False)
    def index() -> HTMLResponse:
        """The chat page: one file, no external assets."""
        return HTMLResponse(page, headers={"Content-Security-Policy": PAGE_POLICY})

    @app.get("/healthz", response_model=HealthResponse, tags=["status"])
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/api/status", tags=["status"])
    def status(who: Who) -> dict[str, Any]:
        """Index status, counted over the documents the caller may read."""
        sources = readable(who)
        ok = [s for s in sources if s.status == "ok"]
        categories: dict[str, int] = {}
        for s in ok:
            name = s.metadata.get(CATEGORY)
            if name:
                categories[name] = categories.get(name, 0) + 1
        index = shirabe.store.status()
        generator = shirabe.generator
        return {
            "files": len(ok),
            "chunks": sum(s.chunks for s in ok),
            "failed": len(sources) - len(ok),
            "categories": [{"name": k, "files": v} for k, v in sorted(categories.items())],
            "embedding_model": index.embedding_model,
            "last_ingest": index.last_ingest,
            "llm": {"configured": settings.generator != "extractive", "model": generator.name},
            "user": who.name,
            "admin": who.admin,
        }

    @app.get("/api/search", tags=["answers"])
    def search(
        who: Who,
        q: Annotated[str, Query(min_length=1, max_length=2000, description="検索語")],
        top_k: Annotated[int, Query(ge=1, le=50)] = 10,
        category: Annotated[list[str] | None, Query()] = None,
    ) -> dict[str, Any]:
        hits = shirabe.search(q, k=top_k, filters=scope(who, category))
        return {"query": q, "hits": [hit_json(h, show) for h in hits]}

    @app.post("/api/ask", tags=["answers"])
    def ask(who: Who, body: AskRequest) -> dict[str, Any]:
        answer = shirabe.ask(body.question, k=body.top_k, filters=scope(who, body.categories))
        return answer_json(answer, show)

    @app.post("/api/ask/stream", tags=["answers"])
    async def ask_stream(who: Who, body: AskRequest, request: Request) -> EventSourceResponse:
        """Server-sent events: ``hits``, ``token`` (many), ``citations``, ``done``; or
        ``error``. Closing the connection stops the answer being written."""
        events = shirabe.ask_stream(
            body.question, k=body.top_k, filters=scope(who, body.categories)
        )

        async def send() -> AsyncIterator[dict[str, str]]:
            try:
                async for event in iterate_in_threadpool(events):
                    if await request.is_disconnected():
                        break
                    yield {
                        "event": event.kind,
                        "data": json.dumps(_event(event, show), ensure_ascii=False),
                    }
            except GeneratorError as exc:
                yield {
                    "event": "error",
                    "data": json.dumps({"message": str(exc)}, ensure_ascii=False),
                }
            finally:
                # on a hang-up this runs cancelled, so no awaiting: closing the generator ends
                # the model's stream at once (the worker thread is idle by now)
                _close(events)

        return EventSourceResponse(send(), ping=15)

    @app.get("/api/documents", tags=["documents"])
    def documents(
        who: Who,
        status: Annotated[Literal["ok", "failed"] | None, Query()] = None,
        category: Annotated[str | None, Query(max_length=200)] = None,
        q: Annotated[str | None, Query(max_length=200, description="part of the path")] = None,
        offset: Annotated[int, Query(ge=0)] = 0,
        limit: Annotated[int, Query(ge=1, le=500)] = 50,
    ) -> dict[str, Any]:
        items = [
            s
            for s in readable(who)
            if (status is None or s.status == status)
            and (category is None or s.metadata.get(CATEGORY) == category)
            and (not q or q in show(s.path))
        ]
        page = items[offset : offset + limit]
        return {
            "total": len(items),
            "offset": offset,
            "items": [_document(s, show, who) for s in page],
        }

    @app.post("/api/documents", tags=["documents"])
    async def upload(
        who: Who,
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
        readers = _upload_groups(who, groups, settings.default_groups, shirabe)
        folder = _upload_folder(uploads, category)
        saved: list[Path] = []
        rejected: list[dict[str, Any]] = []
        for upload_file in files:
            name = _safe_name(upload_file.filename or "")
            if name is None:
                rejected.append(
                    {"path": upload_file.filename, "outcome": "failed", "reason": "not a file name"}
                )
                continue
            if loader_for(Path(name)) is None:
                rejected.append(
                    {
                        "path": name,
                        "outcome": "failed",
                        "reason": f"unsupported file type {Path(name).suffix or '(none)'}",
                    }
                )
                continue
            target = folder / name
            size = await _save(upload_file, target, settings.max_file_bytes)
            if size is None:
                rejected.append(
                    {
                        "path": name,
                        "outcome": "failed",
                        "reason": f"file too large (limit {settings.max_file_bytes:,} bytes)",
                    }
                )
                continue
            saved.append(target)

        def run(progress: Any = None) -> IngestReport:
            return shirabe.ingest(saved, progress, groups=readers, root=uploads)

        def result(report: IngestReport) -> dict[str, Any]:
            done = [
                {"path": show(f.path), "outcome": f.outcome, "chunks": f.chunks, "reason": f.reason}
                for f in report.files
            ]
            return {"files": rejected + done, "groups": list(readers), "category": category}

        if "text/event-stream" not in request.headers.get("accept", ""):
            report = await run_in_threadpool(run) if saved else IngestReport()
            return result(report)

        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[dict[str, str] | None] = asyncio.Queue()

        def progress(event: IngestEvent) -> None:
            if event.kind != "file" or event.result is None:
                return
            data = {
                "done": event.done,
                "total": event.total,
                "path": show(event.result.path),
                "outcome": event.result.outcome,
                "reason": event.result.reason,
            }
            message = {"event": "progress", "data": json.dumps(data, ensure_ascii=False)}
            loop.call_soon_threadsafe(queue.put_nowait, message)

        async def send() -> AsyncIterator[dict[str, str]]:
            task = asyncio.ensure_future(run_in_threadpool(run, progress))
            task.add_done_callback(lambda _t: loop.call_soon_threadsafe(queue.put_nowait, None))
            while (message := await queue.get()) is not None:
                yield message
            report = task.result() if saved else IngestReport()
            yield {"event": "done", "data": json.dumps(result(report), ensure_ascii=False)}

        return EventSourceResponse(send())

    @app.get("/api/documents/{document_id}", tags=["documents"])
    def document(who: Who, document_id: int) -> dict[str, Any]:
        """One document with its passages in order (its summary first). A document the
        caller may not read is reported as missing, like one that does not exist."""
        for s in readable(who):
            if s.id == document_id:
                passages = [
                    {
                        "chunk_id": c.id,
                        "heading_path": list(c.heading_path),
                        "locator": c.locator,
                        "is_summary": c.is_summary,
                        "text": c.text,
                    }
                    for c in shirabe.store.source_chunks(s.path)
                ]
                return _document(s, show, who) | {"passages": passages}
        raise ApiError(404, "not_found", f"no document {document_id}")

    @app.delete("/api/documents/{document_id}", tags=["documents"])
    def delete_document(who: Admin, document_id: int) -> dict[str, Any]:
        for s in shirabe.store.list_sources():
            if s.id == document_id:
                shirabe.remove(s.path)
                if Path(s.path).is_relative_to(uploads):
                    Path(s.path).unlink(missing_ok=True)  # an upload has no other home
                return {"deleted": document_id, "path": show(s.path)}
        raise ApiError(404, "not_found", f"no document {document_id}")

    @app.post("/api/reindex", tags=["documents"])
    def reindex(who: Admin) -> dict[str, Any]:
        if not folders:
            raise ApiError(409, "no_folders", "the server was started without folders")
        report = shirabe.ingest(folders)
        return {"counts": report.counts, "seconds": report.seconds}

    return app


UPLOAD_CATEGORY = "アップロード"
_UNSAFE = re.compile(r'[\x00-\x1f<>:"|?*\\/]')


def _safe_name(filename: str) -> str | None:
    """The last path component of an uploaded name, if it is a usable file name."""
    name = filename.replace("\\", "/").rsplit("/", 1)[-1].strip()
    if not name or name in {".", ".."} or name.startswith(".") or _UNSAFE.search(name):
        return None
    return name[:200]


def _upload_folder(uploads: Path, category: str) -> Path:
    name = _safe_name(category)
    if name is None:
        raise ApiError(422, "invalid_request", f"category: {category!r} is not a folder name")
    folder = uploads / name
    folder.mkdir(parents=True, exist_ok=True)
    return folder


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


def _upload_groups(
    who: Principal, groups: list[str] | None, default: list[str], shirabe: Shirabe
) -> tuple[str, ...]:
    if groups:
        return tuple(dict.fromkeys(check_group(g, "groups") for g in groups))
    if who.name is not None and not who.admin:
        own = shirabe.accounts.get_user(who.name).groups
        if own:
            return own
    return tuple(default)


def _warm_up(shirabe: Shirabe) -> None:
    """Load the model and open the index before the first request."""
    shirabe.store.refresh(wait=False)
    shirabe.embedder.embed_query("準備")


def _close(events: Iterator[GenerationEvent]) -> None:
    close = getattr(events, "close", None)
    if callable(close):
        try:
            close()
        except ValueError:  # still running in a worker thread: it ends with the request
            logger.warning("answer stream still running at hang-up; it stops at its next token")


def _groups(source: SourceInfo) -> list[str]:
    raw = source.metadata.get(GROUPS)
    if raw is None:
        return []  # tagged before access control: nobody's but admins'
    try:
        groups = json.loads(raw)
    except json.JSONDecodeError:
        return []
    return [str(g) for g in groups] if isinstance(groups, list) else []


def _document(source: SourceInfo, show: Any, who: Principal) -> dict[str, Any]:
    item: dict[str, Any] = {
        "id": source.id,
        "path": show(source.path),
        "category": source.metadata.get(CATEGORY),
        "status": source.status,
        "error": source.error,
        "chunks": source.chunks,
        "ingested_at": source.ingested_at,
        "warnings": list(source.warnings),
    }
    if who.admin:
        item["groups"] = _groups(source)
    return item


def _event(event: GenerationEvent, show: Any) -> dict[str, Any]:
    if isinstance(event, HitsEvent):
        return {"hits": [hit_json(h, show) for h in event.hits]}
    if isinstance(event, TokenEvent):
        return {"text": event.text}
    if isinstance(event, CitationsEvent):
        return {"citations": [citation_json(c, show) for c in event.citations]}
    if isinstance(event, DoneEvent):
        return answer_json(event.answer, show)
    if isinstance(event, ErrorEvent):
        return {"message": event.message}
    return {}


__all__ = ["PUBLIC", "create_app"]
