"""The MCP server, driven by the official `mcp` SDK's client over both transports: streamable
HTTP at /mcp of Loupe served by uvicorn, and stdio through `manage.py mcp`."""

from __future__ import annotations

import asyncio
import json
import os
import sys

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from api.tests.live import MODEL_ENV, ROOT
from api.tokens import create_token
from library.models import Source
from notebooks.models import Message
from ops.tests.stack import database_url

REPLY = "Grey herons wait motionless at the edge of the pond [1]."
TOOLS = {
    "list_notebooks",
    "remember",
    "list_memories",
    "forget",
    "search_notebook",
    "ask",
    "add_source",
    "source_status",
    "make_studio_document",
    "document_status",
}


def _http(url: str, secret: str) -> Client:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {secret}"})
    return Client(streamable_http_client(f"{url}/mcp", http_client=http))


def _data(result) -> object:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        content = result.structured_content
        return content.get("result", content) if isinstance(content, dict) else content
    return json.loads(result.content[0].text)


def _run(coroutine):
    return asyncio.run(coroutine)


def test_the_tools_over_streamable_http(live, owner, notebook, live_library):
    url, models = live
    models.chat_replies.append(REPLY)
    secret = create_token(user=owner, name="agent", scope="write").secret

    async def session():
        async with _http(url, secret) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            notebooks = _data(await client.call_tool("list_notebooks", {}))
            passages = _data(
                await client.call_tool(
                    "search_notebook",
                    {"notebook_id": notebook.pk, "query": "Where do herons wait?", "limit": 3},
                )
            )
            answer = _data(
                await client.call_tool(
                    "ask", {"notebook_id": notebook.pk, "question": "Where do herons wait?"}
                )
            )
            added = _data(
                await client.call_tool(
                    "add_source",
                    {"notebook_id": notebook.pk, "text": "Otters hold hands.", "filename": "o.md"},
                )
            )
            status = _data(
                await client.call_tool(
                    "source_status",
                    {"notebook_id": notebook.pk, "source_id": added["source"]["id"]},
                )
            )
            document = _data(
                await client.call_tool(
                    "make_studio_document", {"notebook_id": notebook.pk, "kind": "report"}
                )
            )
            return tools, notebooks, passages, answer, status, document

    tools, notebooks, passages, answer, status, document = _run(session())

    assert tools >= TOOLS
    assert notebooks == [{"id": notebook.pk, "title": "Research", "role": "owner"}]
    assert len(passages) == 3 and passages[0]["source_id"] == live_library[0].pk
    assert {"page", "page_label", "section", "similarity", "text"} <= set(passages[0])
    assert answer["answer"] == REPLY and answer["citations"][0]["supported"] is True
    assert answer["unsupported"] == []  # every sentence cited and held by its passage
    assert status["status"] == "queued"
    assert Source.objects.get(pk=status["id"]).owner == owner
    assert document["kind"] == "report" and document["status"] == "queued"


def test_http_refuses_a_missing_token_and_other_peoples_notebooks(
    live, owner, outsider, notebook, live_library
):
    url, _models = live
    response = httpx2.post(f"{url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert response.status_code == 401 and response.json()["code"] == "invalid_token"

    theirs = create_token(user=outsider, name="agent", scope="write").secret
    reader = create_token(user=owner, name="reader", scope="read").secret

    async def session():
        async with _http(url, theirs) as client:
            listed = _data(await client.call_tool("list_notebooks", {}))
            foreign = await client.call_tool(
                "ask", {"notebook_id": notebook.pk, "question": "Where do herons wait?"}
            )
        async with _http(url, reader) as client:
            read_only = await client.call_tool(
                "ask", {"notebook_id": notebook.pk, "question": "Where do herons wait?"}
            )
        return listed, foreign, read_only

    listed, foreign, read_only = _run(session())

    assert listed == []
    assert foreign.is_error and "not_found" in foreign.content[0].text
    assert read_only.is_error and "read_only_token" in read_only.content[0].text
    assert not Message.objects.exists()


def test_the_tools_over_stdio(live, owner, notebook, live_library):
    from django.db import connection

    url, models = live
    secret = create_token(user=owner, name="desktop", scope="read").secret
    env = {
        **{key: value for key, value in os.environ.items() if key != "DJANGO_SETTINGS_MODULE"},
        **MODEL_ENV,
        "OPENAI_BASE_URL": models.base_url,
        "DATABASE_URL": database_url(connection.settings_dict),
        "LOUPE_TOKEN": secret,
    }
    server = StdioServerParameters(
        command=sys.executable, args=["manage.py", "mcp"], env=env, cwd=str(ROOT)
    )

    async def session():
        async with Client(server) as client:
            notebooks = _data(await client.call_tool("list_notebooks", {}))
            passages = _data(
                await client.call_tool(
                    "search_notebook", {"notebook_id": notebook.pk, "query": "herons"}
                )
            )
            refused = await client.call_tool(
                "ask", {"notebook_id": notebook.pk, "question": "Where do herons wait?"}
            )
            return notebooks, passages, refused

    notebooks, passages, refused = _run(session())

    assert notebooks[0]["id"] == notebook.pk
    assert passages and passages[0]["source_title"]
    assert refused.is_error and "read_only_token" in refused.content[0].text


def test_the_command_refuses_to_start_without_a_live_token(db):
    from django.core.management import CommandError, call_command

    with pytest.raises(CommandError):
        call_command("mcp", "--token", "loupe_nope")
