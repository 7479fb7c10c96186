"""An independent client: the MCP Inspector CLI (Node), calling every tool of the real server over stdio.

Needs ``npx``; the first cold ``npx -y @modelcontextprotocol/inspector`` downloads the package (~1 min).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import server_env

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.npx,
    pytest.mark.usefixtures("default_plugins"),
    pytest.mark.skipif(shutil.which("npx") is None, reason="npx (Node.js) is not on PATH"),
]

INSPECTOR = os.environ.get("MCP_INSPECTOR_PACKAGE", "@modelcontextprotocol/inspector")
COLD_START_TIMEOUT = 600  # the first npx run downloads the inspector


class Inspector:
    def __init__(self, db_path: Path) -> None:
        self.env = server_env(db_path)
        self.db_path = db_path

    def run(self, *args: str) -> dict[str, Any]:
        # The inspector passes the server only a few safe variables: give it ours explicitly with -e.
        command = [
            "npx", "-y", INSPECTOR, "--cli",
            "-e", f"MCP_MEMORY_DB_PATH={self.db_path}",
            "-e", "MCP_MEMORY_LOG_LEVEL=WARNING",
            "-e", "MCP_MEMORY_NAMESPACE=inspected",
            sys.executable, "-m", "mcp_memory_server",
            *args,
        ]  # fmt: skip
        proc = subprocess.run(
            command, env=self.env, capture_output=True, text=True, timeout=COLD_START_TIMEOUT
        )
        assert proc.returncode == 0, f"inspector failed ({proc.returncode}): {proc.stdout}\n{proc.stderr}"
        start = proc.stdout.find("{")
        assert start >= 0, proc.stdout
        return dict(json.loads(proc.stdout[start:]))

    def call(self, tool: str, **args: Any) -> dict[str, Any]:
        tool_args: list[str] = []
        for key, value in args.items():
            text = value if isinstance(value, str) else json.dumps(value)
            tool_args += ["--tool-arg", f"{key}={text}"]
        return self.run("--method", "tools/call", "--tool-name", tool, *tool_args)


def ok(result: dict[str, Any]) -> dict[str, Any]:
    assert result.get("isError") is not True, result
    return dict(result["structuredContent"])


def test_every_tool_through_the_mcp_inspector_cli(db_path: Path) -> None:
    inspector = Inspector(db_path)

    tools = {tool["name"] for tool in inspector.run("--method", "tools/list")["tools"]}
    assert tools == {
        "store_memory",
        "search_memories",
        "get_memory",
        "update_memory",
        "delete_memory",
        "list_memories",
        "pin_memory",
        "list_namespaces",
        "clear_memories",
    }

    stored = ok(
        inspector.call(
            "store_memory",
            content="The user's favourite programming font is JetBrains Mono",
            metadata={"source": "inspector"},
        )
    )
    assert stored["status"] == "stored"
    assert db_path.exists()  # the -e variable reached the server

    found = ok(inspector.call("search_memories", query="which typeface do they code in?", limit=3))
    assert found["results"][0]["id"] == stored["id"]

    updated = ok(
        inspector.call(
            "update_memory", id=stored["id"], content="The user's favourite font is now Berkeley Mono"
        )
    )
    assert updated["superseded"] == stored["id"]

    got = ok(inspector.call("get_memory", id=stored["id"]))
    assert got["status"] == "superseded" and got["head_id"] == updated["id"]

    listed = ok(inspector.call("list_memories", limit=10))
    assert [m["id"] for m in listed["memories"]] == [updated["id"]]

    deleted = ok(inspector.call("delete_memory", id=updated["id"]))
    assert deleted["status"] == "deleted" and deleted["success"] is True
    after = ok(inspector.call("search_memories", query="favourite font"))
    assert all(r["id"] not in {stored["id"], updated["id"]} for r in after["results"])

    error = inspector.call("get_memory", id="not-a-uuid")
    assert error.get("isError") is True
    assert "not a memory id" in error["content"][0]["text"]

    note = ok(
        inspector.call(
            "store_memory",
            content="Scratch: rebasing feature-x",
            type="working",
            pinned=True,
            importance=0.9,  # an optional number: the Inspector sends a number only if the schema says so
            tags=["git"],
        )
    )
    noted = ok(inspector.call("get_memory", id=note["id"]))
    assert noted["pinned"] is True and noted["expires_at"] is None
    assert noted["importance"] == 0.9 and noted["tags"] == ["git"]
    unpinned = ok(inspector.call("pin_memory", id=note["id"], pinned=False))
    assert unpinned["pinned"] is False and unpinned["expires_at"] is not None

    spaces = ok(inspector.call("list_namespaces"))
    assert spaces["default"] == "inspected"
    assert {"name": "inspected", "memories": 1} in spaces["namespaces"]

    refused = inspector.call("clear_memories", namespace="inspected", confirm="yes")
    assert refused.get("isError") is True and "confirm" in refused["content"][0]["text"]
    cleared = ok(inspector.call("clear_memories", namespace="inspected", confirm="inspected"))
    assert cleared["status"] == "cleared" and cleared["purged"] == 3  # two versions + the note
    assert ok(inspector.call("list_memories"))["total"] == 0

    templates = inspector.run("--method", "resources/templates/list")
    assert [t["uriTemplate"] for t in templates["resourceTemplates"]] == ["memory://{id}"]
