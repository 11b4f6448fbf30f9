"""Errors in one shape, ``{"error": {"status", "code", "message", "fields"?}}``, whatever raised
them."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from shirabe.errors import (
    GeneratorError,
    IndexBusyError,
    ShirabeError,
    UnsearchableError,
)

logger = logging.getLogger(__name__)

CODES = {
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    413: "too_large",
}


class ApiError(HTTPException):
    """An error for the caller: an HTTP status, a stable code and a message."""

    def __init__(
        self, status: int, code: str, message: str, *, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(status_code=status, detail=message, headers=headers)
        self.code = code


def error_response(
    status: int,
    code: str,
    message: str,
    *,
    headers: Mapping[str, str] | None = None,
    **extra: Any,
) -> JSONResponse:
    body = {"error": {"status": status, "code": code, "message": message, **extra}}
    sent = {"WWW-Authenticate": "Bearer"} if status == 401 else {}
    return JSONResponse(body, status_code=status, headers=sent | dict(headers or {}))


def install_error_handlers(app: FastAPI) -> None:
    """Every error the app can raise, answered in the one shape."""

    @app.exception_handler(HTTPException)
    async def http_error(_request: Request, exc: HTTPException) -> JSONResponse:
        code = getattr(exc, "code", None) or CODES.get(exc.status_code, "error")
        return error_response(exc.status_code, code, str(exc.detail), headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def invalid(_request: Request, exc: RequestValidationError) -> JSONResponse:
        fields = [
            {"field": ".".join(str(p) for p in e["loc"]), "reason": e["msg"]} for e in exc.errors()
        ]
        first = fields[0] if fields else {"field": "?", "reason": "invalid"}
        message = f"{first['field']}: {first['reason']}"
        return error_response(422, "invalid_request", message, fields=fields)

    @app.exception_handler(ShirabeError)
    async def refused(request: Request, exc: ShirabeError) -> JSONResponse:
        if isinstance(exc, UnsearchableError):
            field = "query.q" if request.url.path.startswith("/api/search") else "body.question"
            fields = [{"field": field, "reason": str(exc)}]
            return error_response(422, "unsearchable", f"{field}: {exc}", fields=fields)
        if isinstance(exc, IndexBusyError):
            return error_response(503, "busy", str(exc))
        return error_response(400, "bad_request", str(exc))

    @app.exception_handler(GeneratorError)
    async def model_failed(_request: Request, exc: GeneratorError) -> JSONResponse:
        return error_response(502, "model_error", str(exc))

    @app.exception_handler(Exception)
    async def unexpected(_request: Request, exc: Exception) -> JSONResponse:
        logger.exception("unexpected error", exc_info=exc)
        return error_response(500, "internal", "internal error; see the server log")
