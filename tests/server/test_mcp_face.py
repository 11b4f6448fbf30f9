"""The Model Context Protocol face through the SDK's own client: over streamable HTTP at ``/mcp``
of a running ``shirabe serve`` (each request as the user of its bearer token) and over stdio
from ``shirabe mcp --user`` (as that user). Tools, document resources, and what each user may
read: another department's documents are neither found, counted, named nor opened."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from tests.server.served import Served, cli, sample_server
from tests.support import ROOT

pytestmark = pytest.mark.slow

T = TypeVar("T")
LEAVE = "有給休暇の申請方法は？"
TOOLS = {"search", "ask", "get_document", "list_categories"}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with sample_server(tmp_path_factory.mktemp("mcp")) as running:
        yield running


def over_http(served: Served, token: str, work: Callable[[Client], Awaitable[T]]) -> T:
    async def run() -> T:
        headers = {"Authorization": f"Bearer {token}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=120) as http,
            Client(streamable_http_client(f"{served.url}/mcp", http_client=http)) as c,
        ):
            return await work(c)

    return anyio.run(run)


def over_stdio(served: Served, user: str, work: Callable[[Client], Awaitable[T]]) -> T:
    command = ["-m", "shirabe", "mcp", "--index", str(served.home), "--user", user]
    parameters = StdioServerParameters(command=sys.executable, args=command, env=served.env)

    async def run() -> T:
        async with Client(parameters, read_timeout_seconds=120) as c:
            return await work(c)

    return anyio.run(run)


def as_user(served: Served, user: str) -> Callable[[Callable[[Client], Awaitable[T]]], T]:
    return lambda work: over_http(served, served.tokens[user], work)


async def tool(client: Client, name: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(name, arguments)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return dict(result.structured_content)


async def tool_error(client: Client, name: str, **arguments: Any) -> str:
    result = await client.call_tool(name, arguments)
    assert result.is_error
    text = result.content[0]
    assert text.type == "text"
    return text.text


def test_the_tools_and_the_document_template_are_listed(served: Served) -> None:
    async def listed(c: Client) -> tuple[set[str], list[str]]:
        tools = await c.list_tools()
        templates = await c.list_resource_templates()
        return {t.name for t in tools.tools}, [t.uri_template for t in templates.resource_templates]

    names, templates = as_user(served, "hr_user")(listed)
    assert names == TOOLS
    assert templates == ["shirabe://documents/{document_id}"]


def test_an_answer_cites_documents_that_open_as_resources(served: Served) -> None:
    async def asked(c: Client) -> tuple[dict[str, Any], str]:
        answer = await tool(c, "ask", question=LEAVE)
        opened = await c.read_resource(answer["citations"][0]["uri"])
        content = opened.contents[0]
        return answer, getattr(content, "text", "")

    answer, document = as_user(served, "hr_user")(asked)
    assert not answer["refused"]
    assert "ミナモ勤怠" in answer["answer"]
    assert answer["short_answer"] is None  # a way of doing has no short answer
    first = answer["citations"][0]
    assert first["source"] == "人事/休暇規程.md"
    assert first["label"].startswith("人事/休暇規程.md › ")
    assert document.startswith("# 人事/休暇規程.md\n")
    assert "3営業日前" in document

    other = as_user(served, "sales_user")(lambda c: tool(c, "ask", question=LEAVE))
    assert all(not c["source"].startswith("人事/") for c in other["citations"])
    assert "3営業日前" not in other["answer"]


def test_a_follow_up_is_answered_with_the_history_given(served: Served) -> None:
    question = "INC-2024-0004はどんな障害ですか"

    async def conversation(c: Client) -> dict[str, Any]:
        first = await tool(c, "ask", question=question)
        history = [{"question": question, "answer": first["answer"]}]
        return await tool(c, "ask", question="それは何時に復旧しましたか？", history=history)

    follow_up = as_user(served, "sales_user")(conversation)
    assert "12:10" in follow_up["answer"]
    assert follow_up["standalone"].startswith("INC-2024-0004")


def test_another_departments_documents_are_not_found_counted_or_opened(served: Served) -> None:
    async def hr_view(c: Client) -> tuple[dict[str, Any], dict[str, Any]]:
        found = await tool(c, "search", query="有給休暇 申請", k=5)
        return found, await tool(c, "list_categories")

    found, categories = as_user(served, "hr_user")(hr_view)
    leave = next(p for p in found["passages"] if p["source"] == "人事/休暇規程.md")
    assert {"name": "人事", "files": 1} in categories["categories"]

    async def sales_view(c: Client) -> tuple[dict[str, Any], dict[str, Any], list[str], str]:
        searched = await tool(c, "search", query="有給休暇 申請", k=50)
        listed = await tool(c, "list_categories")
        errors = [
            await tool_error(c, "get_document", document=str(leave["document_id"])),
            await tool_error(c, "get_document", document="人事/休暇規程.md"),
        ]
        try:
            await c.read_resource(leave["uri"])
            opened = "opened"
        except MCPError as exc:
            opened = str(exc)
        return searched, listed, errors, opened

    searched, listed, errors, opened = as_user(served, "sales_user")(sales_view)
    assert searched["passages"], "public documents are still found"
    assert all(not p["source"].startswith("人事/") for p in searched["passages"])
    assert all(c["name"] != "人事" for c in listed["categories"])
    assert all("no such document" in e for e in errors)
    assert "no document" in opened


def test_a_section_or_a_page_of_a_document(served: Served) -> None:
    async def parts(c: Client) -> tuple[dict[str, Any], dict[str, Any], str]:
        section = await tool(c, "get_document", document="人事/休暇規程.md", section="申請方法")
        page = await tool(c, "get_document", document="製品/AQ-300_かんたんガイド.pdf", page=1)
        missing = await tool_error(
            c, "get_document", document="製品/AQ-300_かんたんガイド.pdf", page=99
        )
        return section, page, missing

    section, page, missing = as_user(served, "hr_user")(parts)
    assert "3営業日前" in section["text"]
    assert section["text"].startswith("## ") and "申請方法" in section["text"].split("\n")[0]
    assert "特別休暇" not in section["text"]  # another section of the same document
    assert section["truncated"] is False
    assert "p.1" in page["text"] and "p.2" not in page["text"]
    assert "no page 99" in missing and "pages 1-" in missing


def test_http_without_a_valid_token_is_refused_before_the_protocol(served: Served) -> None:
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    for headers in ({}, {"Authorization": "Bearer not-a-token"}):
        response = httpx2.post(f"{served.url}/mcp", json=request, headers=headers, timeout=30)
        assert response.status_code == 401
        assert response.json()["error"]["code"] == "unauthorized"
        assert response.headers["www-authenticate"] == "Bearer"


def test_stdio_reads_as_the_user_named(served: Served) -> None:
    async def view(c: Client) -> tuple[dict[str, Any], dict[str, Any]]:
        return await tool(c, "list_categories"), await tool(c, "ask", question=LEAVE)

    categories, answer = over_stdio(served, "sales_user", view)
    assert all(c["name"] != "人事" for c in categories["categories"])
    assert all(not c["source"].startswith("人事/") for c in answer["citations"])

    categories, answer = over_stdio(served, "hr_user", view)
    assert {"name": "人事", "files": 1} in categories["categories"]
    assert answer["citations"][0]["source"] == "人事/休暇規程.md"


def documented_configuration() -> dict[str, Any]:
    """The desktop assistant's configuration of docs/api.md's MCP section, as printed."""
    page = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    section = page.split("\n## MCP (Model Context Protocol)\n", 1)[1].split("\n## ", 1)[0]
    block = section.split("```json\n", 1)[1].split("```", 1)[0]
    server: dict[str, Any] = json.loads(block)["mcpServers"]["shirabe"]
    return server


def test_the_documented_configuration_starts_a_server_for_its_user(served: Served) -> None:
    configured = documented_configuration()
    user = configured["args"][configured["args"].index("--user") + 1]
    cli("users", "add", user, "--group", "hr", "--index", str(served.home), env=served.env)
    command = configured["command"]
    if command == "shirabe":  # as installed beside this Python
        command = str(Path(sys.executable).parent / "shirabe")
    env = served.env | configured["env"] | {"SHIRABE_HOME": str(served.home)}
    parameters = StdioServerParameters(command=command, args=configured["args"], env=env)

    async def run() -> dict[str, Any]:
        async with Client(parameters, read_timeout_seconds=120) as c:
            return await tool(c, "ask", question=LEAVE)

    answer = anyio.run(run)
    assert answer["citations"][0]["source"] == "人事/休暇規程.md"


def test_stdio_without_a_user_or_anonymous_access_does_not_start(served: Served) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "shirabe", "mcp", "--index", str(served.home)],
        capture_output=True, text=True, env=served.env, timeout=120, stdin=subprocess.DEVNULL,
        check=False,
    )  # fmt: skip
    assert done.returncode != 0
    assert "--user" in done.stderr and done.stdout == ""
