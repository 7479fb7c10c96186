"""Assertions shared by the server's unit tests (a uniquely named module: several conftest.py exist)."""

from __future__ import annotations

import json
from typing import Any

# The first request of an MCP session, as a client posts it over HTTP.
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "mcp-memory-server-tests", "version": "0"},
    },
}


def payload(result: Any) -> dict[str, Any]:
    """The structured result of a successful tool call (also checks the text content agrees)."""
    assert not result.is_error, result.content
    assert result.structured_content is not None
    assert json.loads(result.content[0].text) == result.structured_content
    return dict(result.structured_content)


def error_text(result: Any) -> str:
    assert result.is_error, result.structured_content
    return " ".join(block.text for block in result.content)


async def stored_memory(client: Any, args: dict[str, Any]) -> dict[str, Any]:
    """Store a memory and read it back in full with get_memory (store_memory's receipt has no
    memory: id, status, namespace and similar only)."""
    receipt = payload(await client.call_tool("store_memory", args))
    return payload(await client.call_tool("get_memory", {"id": receipt["id"]}))
