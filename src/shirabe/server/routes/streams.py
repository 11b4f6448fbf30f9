"""Work that reads files, answered as it goes: with ``Accept: text/event-stream``, a
``progress`` event per file and a final ``done`` with the outcome; else the outcome as JSON."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

from fastapi import Request
from sse_starlette.sse import EventSourceResponse
from starlette.concurrency import run_in_threadpool

from shirabe.records import IngestEvent, Progress
from shirabe.server.deps import Server

T = TypeVar("T")

Work = Callable[[Progress | None], T]
"""The work, told where to send its progress (None: nowhere)."""


async def answered(
    request: Request, server: Server, work: Work[T], result: Callable[[T], dict[str, Any]]
) -> Any:
    """``work`` run in a thread, its ``result`` as JSON or as events (the caller's choice)."""
    if "text/event-stream" not in request.headers.get("accept", ""):
        return result(await run_in_threadpool(work, None))
    return EventSourceResponse(progress_events(work, result, server))


async def progress_events(
    work: Work[T], result: Callable[[T], dict[str, Any]], server: Server
) -> AsyncIterator[dict[str, str]]:
    """A ``progress`` event per file as the work goes, then ``done`` with the outcome."""
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

    task = asyncio.ensure_future(run_in_threadpool(work, progress))
    task.add_done_callback(lambda _t: loop.call_soon_threadsafe(queue.put_nowait, None))
    while (message := await queue.get()) is not None:
        yield message
    done = task.result()
    yield {"event": "done", "data": json.dumps(result(done), ensure_ascii=False)}
