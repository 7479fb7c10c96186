"""The real server over streamable HTTP (``serve --transport http``), through the SDK's HTTP client."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import error_text, http_server, module_command, payload, server_env

pytestmark = [pytest.mark.e2e, pytest.mark.anyio, pytest.mark.usefixtures("default_plugins")]


async def call(session: Any, tool: str, **args: Any) -> dict[str, Any]:
    return payload(await session.call_tool(tool, args))


async def test_basic_flow_over_streamable_http(db_path: Path, tmp_path: Path) -> None:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    with http_server(module_command(), server_env(db_path), tmp_path / "http.err", "--no-auth") as url:
        async with streamable_http_client(url) as (read, write), ClientSession(read, write) as session:
            init = await session.initialize()
            assert init.server_info.name == "mcp-memory"
            assert "update_memory" in (init.instructions or "")
            names = {t.name for t in (await session.list_tools()).tools}
            assert {
                "store_memory",
                "search_memories",
                "get_memory",
                "update_memory",
                "delete_memory",
            } <= names

            a = await call(
                session, "store_memory", content="Releases are tagged from the main branch every Tuesday"
            )
            await call(session, "store_memory", content="The user's favourite editor is Helix")
            hits = (await call(session, "search_memories", query="which day do we ship releases?"))["results"]
            assert hits[0]["id"] == a["id"]
            b = await call(session, "update_memory", id=a["id"], content="Releases now happen every Thursday")
            hits = (
                await call(session, "search_memories", query="tagged from the main branch every Tuesday")
            )["results"]
            assert hits[0]["id"] == b["id"] and hits[0]["matched_id"] == a["id"]
            got = await call(session, "get_memory", id=a["id"])
            assert got["status"] == "superseded" and got["head_id"] == b["id"]
            assert (await call(session, "delete_memory", id=b["id"]))["status"] == "deleted"
            ids = [r["id"] for r in (await call(session, "search_memories", query="release day"))["results"]]
            assert b["id"] not in ids and a["id"] not in ids
            assert (await call(session, "list_memories"))["total"] == 1
            assert "No memory with id" in error_text(
                await session.call_tool("get_memory", {"id": "00000000-0000-4000-8000-000000000000"})
            )

        # the SDK's high-level client (2026-era probe with fallback) works against the same server
        from mcp import Client

        async with Client(url) as client:
            listed = payload(await client.call_tool("list_memories", {}))
            assert listed["total"] == 1
    assert "streamable HTTP" in (tmp_path / "http.err").read_text()


def test_a_taken_port_is_one_sentence_and_a_failure(db_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [*module_command(), "serve", "--transport", "http", "--port", str(port)],
            env=server_env(db_path),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        f"mcp-memory: error: port {port} on 127.0.0.1 is in use: stop what listens there or pass --port N."
    ], done.stderr


def test_health_needs_no_token_on_a_server_with_tokens(db_path: Path, tmp_path: Path) -> None:
    import json
    import urllib.error
    import urllib.request

    with http_server(module_command(), server_env(db_path), tmp_path / "http.err") as url:
        base = url.removesuffix("/mcp")
        with urllib.request.urlopen(f"{base}/health", timeout=30) as health:
            assert health.status == 200 and json.loads(health.read()) == {"status": "ok"}
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(urllib.request.Request(url, data=b"{}", method="POST"), timeout=30)
        assert refused.value.code == 401
