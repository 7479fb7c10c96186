"""Assertions shared by the server's unit tests (a uniquely named module: several conftest.py exist)."""

from __future__ import annotations

import json
from typing import Any

from click.testing import CliRunner, Result

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


def run_cli(*args: str, input: str | None = None) -> Result:
    """``mcp-memory ARGS`` in process (click's runner), ``input`` on its stdin."""
    from mcp_memory_server.cli import cli

    return CliRunner().invoke(cli, list(args), input=input)


def cli_ok(*args: str, input: str | None = None) -> Result:
    """:func:`run_cli`, which must succeed (its output and exception shown when it does not)."""
    result = run_cli(*args, input=input)
    assert result.exit_code == 0, (result.stdout, result.stderr, result.exception)
    return result
