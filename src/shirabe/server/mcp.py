"""The Model Context Protocol face: tools and document resources for AI assistants and editors.

Tools: ``search``, ``ask``, ``get_document`` and ``list_categories``; resources
``shirabe://documents/{id}`` (the text of a document, as a citation's ``uri`` names it). Served
over stdio by ``shirabe mcp`` (as the user given there) and over streamable HTTP at ``/mcp`` by
``shirabe serve`` (as the user of each request's bearer token, exactly as the API decides).
Every tool reads through the same filters as the API: what a caller may not read is neither
found, counted nor named.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp.types import ToolAnnotations
from pydantic import Field
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from shirabe.errors import GeneratorError, ShirabeError
from shirabe.records import (
    CITATION_SEPARATOR,
    HEADING_SEPARATOR,
    Citation,
    Hit,
    SourceInfo,
    Turn,
    format_locator,
)
from shirabe.server.deps import Principal, Server, principal_of
from shirabe.server.errors import ApiError, error_response
from shirabe.server.routes.answers import ANSWER_CHARS, MAX_HISTORY, QUESTION_CHARS

DOCUMENT_URI = "shirabe://documents/{document_id}"
INSTRUCTIONS = (
    "社内ドキュメントの検索と質問応答。ask は出典付きの回答か"
    "「ドキュメントに記載がありません」を返す。"
    "search は根拠となる文章を、get_document は文書の全文・章・ページを返す。"
)

Caller = Callable[[Context], Principal]
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)


def uri_of(document_id: int) -> str:
    return DOCUMENT_URI.format(document_id=document_id)


def create_mcp(server: Server, caller: Caller) -> MCPServer:
    """The MCP server over ``server``; ``caller`` says who sends a request (from its context)."""
    shirabe = server.shirabe
    mcp: MCPServer = MCPServer(
        name="shirabe",
        title="調べ shirabe",
        instructions=INSTRUCTIONS,
        version="0.1",
        log_level="WARNING",
    )

    def ids_of(paths: set[str], who: Principal) -> dict[str, int]:
        found = {p: shirabe.catalog.source(p, who.reader) for p in paths}
        return {p: s.id for p, s in found.items() if s is not None and s.id is not None}

    @mcp.tool(annotations=READ_ONLY)
    def search(
        query: Annotated[
            str, Field(min_length=1, max_length=QUESTION_CHARS, description="検索語または質問")
        ],
        ctx: Context,
        k: Annotated[int, Field(ge=1, le=50, description="返す文章の数")] = 10,
        categories: Annotated[
            list[str] | None, Field(max_length=50, description="このカテゴリーの文書だけを検索")
        ] = None,
    ) -> dict[str, Any]:
        """社内ドキュメントを検索し、関連する文章を出典（ファイル › 見出し › ページ）と
        スコア付きで返す。"""
        who = caller(ctx)
        hits = _checked(lambda: shirabe.search(query, k=k, filters=server.scope(who, categories)))
        ids = ids_of({h.chunk.source for h in hits}, who)
        return {"query": query, "passages": [_passage(h, server, ids) for h in hits]}

    @mcp.tool(annotations=READ_ONLY)
    def ask(
        question: Annotated[
            str, Field(min_length=1, max_length=QUESTION_CHARS, description="質問（日本語）")
        ],
        ctx: Context,
        categories: Annotated[
            list[str] | None, Field(max_length=50, description="このカテゴリーの文書だけから答える")
        ] = None,
        history: Annotated[
            list[dict[str, str]] | None,
            Field(
                max_length=MAX_HISTORY,
                description="この会話のこれまでの質問と回答 [{question, answer}]（古い順）: "
                "「それは？」のような続きの質問に使う",
            ),
        ] = None,
    ) -> dict[str, Any]:
        """ドキュメントから質問に答える。回答と番号付きの出典を返し、ドキュメントに書かれていなければ
        refused: true と理由を返す（推測では答えない）。confidence は文書が質問に答えている確率
        （0〜1）、short_answer は答えそのものと思われる語句とその確率（理由や方法を問う質問では
        null）。"""
        who = caller(ctx)
        turns = [
            Turn(
                str(t.get("question", ""))[:QUESTION_CHARS], str(t.get("answer", ""))[:ANSWER_CHARS]
            )
            for t in history or []
            if t.get("question")
        ]
        answer = _checked(
            lambda: shirabe.ask(question, filters=server.scope(who, categories), history=turns)
        )
        ids = ids_of({c.source for c in answer.citations}, who)
        return {
            "answer": answer.text,
            "refused": answer.refused,
            "refusal_reason": answer.refusal_reason,
            "confidence": answer.confidence,
            "short_answer": (
                None
                if answer.span is None
                else {"text": answer.span, "probability": answer.span_confidence}
            ),
            "standalone": answer.standalone,
            "mode": answer.mode,
            "citations": [_citation(c, server, ids) for c in answer.citations],
        }

    @mcp.tool(annotations=READ_ONLY)
    def get_document(
        document: Annotated[
            str,
            Field(
                min_length=1,
                max_length=1000,
                description="文書の ID（search や ask の document_id）"
                "またはパス（人事/休暇規程.md）",
            ),
        ],
        ctx: Context,
        section: Annotated[
            str | None,
            Field(max_length=200, description="見出しまたはシート名の一部: その部分だけ"),
        ] = None,
        page: Annotated[
            int | None, Field(ge=1, description="ページ（PDF）またはスライドの番号: その部分だけ")
        ] = None,
    ) -> dict[str, Any]:
        """文書の本文を返す（全体、または見出し・シート・ページを指定した部分）。"""
        who = caller(ctx)
        source = _find(server, who, document)
        if source is None:
            raise ToolError(f"document {document!r}: no such document")
        return _text(server, source, section=section, page=page)

    @mcp.tool(annotations=READ_ONLY)
    def list_categories(ctx: Context) -> dict[str, Any]:
        """検索できる文書のカテゴリー（部署などのフォルダー）と文書数。"""
        who = caller(ctx)
        return {"categories": [{"name": k, "files": v} for k, v in server.categories(who).items()]}

    @mcp.resource(DOCUMENT_URI, name="document", mime_type="text/markdown")
    def document_resource(document_id: str, ctx: Context) -> str:
        """文書の本文（引用の uri で開く）。"""
        who = caller(ctx)
        found = _document_id(document_id) is not None
        source = _find(server, who, document_id) if found else None
        if source is None:
            raise ResourceNotFoundError(f"no document {document_id}")
        shown = _text(server, source)
        return f"# {shown['path']}\n\n{shown['text']}"

    return mcp


def _checked(work: Callable[[], Any]) -> Any:
    """``work``'s result; what shirabe refuses becomes the tool's error message."""
    try:
        return work()
    except (ShirabeError, GeneratorError) as exc:
        raise ToolError(str(exc)) from None


def _passage(hit: Hit, server: Server, ids: dict[str, int]) -> dict[str, Any]:
    chunk = hit.chunk
    shown = server.show(chunk.source)
    document_id = ids.get(chunk.source)
    return {
        "chunk_id": chunk.id,
        "document_id": document_id,
        "uri": uri_of(document_id) if document_id is not None else None,
        "source": shown,
        "label": Citation.of(0, hit).label(shown),
        "heading_path": list(chunk.heading_path),
        "locator": chunk.locator,
        "score": round(hit.score, 4),
        "text": chunk.text,
    }


def _citation(citation: Citation, server: Server, ids: dict[str, int]) -> dict[str, Any]:
    shown = server.show(citation.source)
    document_id = ids.get(citation.source)
    return {
        "number": citation.number,
        "label": citation.label(shown),
        "source": shown,
        "document_id": document_id,
        "uri": uri_of(document_id) if document_id is not None else None,
        "chunk_id": citation.chunk_id,
        "text": citation.text,
    }


def _find(server: Server, who: Principal, document: str) -> SourceInfo | None:
    """The document ``who`` may read by id or by path as shown; one they may not read is
    missing, as one that does not exist."""
    wanted = unicodedata.normalize("NFC", document.strip())
    if wanted.isascii() and wanted.isdigit():
        number = _document_id(wanted)
        source = server.shirabe.catalog.document(number, who.reader) if number else None
    else:
        source = next((s for s in server.readable(who) if server.show(s.path) == wanted), None)
    return source if source is not None and source.status == "ok" else None


def _document_id(text: str) -> int | None:
    """The document id ``text`` names: ASCII digits only, fewer than 12 (``²``, ``①`` or ``１``
    are digits to ``str.isdigit`` but no id)."""
    if text.isascii() and text.isdigit() and len(text) < 12:
        return int(text)
    return None


def _text(
    server: Server, source: SourceInfo, *, section: str | None = None, page: int | None = None
) -> dict[str, Any]:
    """A document's passages as text under their headings, or those of one section or page, cut
    at ``document_text_chars``."""
    limit = server.shirabe.settings.server.document_text_chars
    wanted = unicodedata.normalize("NFC", section) if section else None
    passages = [
        c
        for c in server.shirabe.catalog.passages(source)
        if not c.is_summary
        and (page is None or page in (c.locator.get("page"), c.locator.get("slide")))
        and (
            wanted is None
            or any(wanted in h for h in c.heading_path)
            or wanted in str(c.locator.get("sheet", ""))
        )
    ]
    shown = server.show(source.path)
    if not passages:
        raise ToolError(_missing(server, source, section, page))
    lines: list[str] = []
    last = ""
    for c in passages:
        labels = [label for label in format_locator(c.locator) if label not in c.heading_path]
        place = HEADING_SEPARATOR.join(c.heading_path)
        header = CITATION_SEPARATOR.join(part for part in (place, *labels) if part)
        if header and header != last:
            lines.append(f"## {header}")
        last = header
        lines.append(c.text.strip() + "\n")
    text = "\n".join(lines)
    assert source.id is not None  # a stored document
    return {
        "id": source.id,
        "path": shown,
        "uri": uri_of(source.id),
        "text": text[:limit],
        "truncated": len(text) > limit,
    }


def _missing(server: Server, source: SourceInfo, section: str | None, page: int | None) -> str:
    """Why no part of a document was given, with the parts it has."""
    chunks = [c for c in server.shirabe.catalog.passages(source) if not c.is_summary]
    asked = " and ".join(
        part
        for part in (f"section {section!r}" if section else "", f"page {page}" if page else "")
        if part
    )
    sections = dict.fromkeys(HEADING_SEPARATOR.join(c.heading_path) for c in chunks)
    pages = sorted({p for c in chunks if isinstance(p := c.locator.get("page"), int)})
    has = f"sections: {', '.join(list(sections)[:30])}" if sections else "no sections"
    if pages:
        has += f"; pages {pages[0]}-{pages[-1]}"
    return f"{server.show(source.path)}: no {asked} in this document ({has})"


class Authenticated:
    """``/mcp`` over HTTP: a request without a valid bearer token (or anonymous access the
    settings allow) is answered 401 in the API's error shape before the protocol sees it."""

    def __init__(self, app: ASGIApp, server: Server) -> None:
        self.app, self.server = app, server

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            request = Request(scope)
            try:  # the token's lookup writes when it was last used: not on the event loop
                await run_in_threadpool(principal_of, self.server.shirabe, request)
            except ApiError as exc:
                response = error_response(exc.status_code, exc.code, str(exc.detail))
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def http_caller(server: Server) -> Caller:
    """Who sends a request over HTTP: the user of its bearer token, checked on every call."""

    def caller(ctx: Context) -> Principal:
        request = ctx.request_context.request
        if not isinstance(request, Request):
            raise ToolError("unauthorized: no HTTP request")
        try:
            return principal_of(server.shirabe, request)
        except ApiError as exc:
            raise ToolError(f"unauthorized: {exc.detail}") from None

    return caller


def fixed_caller(who: Principal) -> Caller:
    """Over stdio, every request is made by one reader, named when the server starts."""
    return lambda _ctx: who


__all__ = ["Authenticated", "create_mcp", "fixed_caller", "http_caller", "uri_of"]
