"""A misspelt ``MCP_MEMORY_*`` variable is said once on stderr when a command or the server loads
its plugins (not only by ``doctor``), and never on stdout."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from typing import Any

import pytest
from server_helpers import INITIALIZE

from mcp_memory_core.settings import Settings
from mcp_memory_server.runtime import variables
from mcp_memory_server.runtime.assembly import load_plugins


def mentions(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "MCP_MEMORY_DB_PATHH" in line]


def test_a_command_warns_once_on_stderr(fake_env: dict[str, str]) -> None:
    env = {**os.environ, **fake_env, "MCP_MEMORY_DB_PATHH": "/tmp/typo.db"}
    done = subprocess.run(
        [sys.executable, "-m", "mcp_memory_server", "list", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    json.loads(done.stdout)  # stdout is the command's output only
    [line] = mentions(done.stderr)
    assert "did you mean MCP_MEMORY_DB_PATH?" in line


def test_the_stdio_server_warns_on_stderr_and_keeps_stdout_for_the_protocol(fake_env: dict[str, str]) -> None:
    env = {**os.environ, **fake_env, "MCP_MEMORY_DB_PATHH": "/tmp/typo.db"}
    messages = [
        INITIALIZE,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "list_memories", "arguments": {}},
        },
    ]
    server = subprocess.Popen(
        [sys.executable, "-m", "mcp_memory_server"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write("".join(json.dumps(message) + "\n" for message in messages))
    server.stdin.flush()
    lines = [server.stdout.readline(), server.stdout.readline()]  # both answers, then hang up
    rest, stderr = server.communicate(timeout=60)
    done = subprocess.CompletedProcess(server.args, server.returncode, "".join(lines) + rest, stderr)
    replies = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    assert [reply["id"] for reply in replies] == [1, 2]  # the protocol only on stdout
    assert "error" not in replies[1] and not replies[1]["result"].get("isError")
    assert len(mentions(done.stderr)) == 1, done.stderr


def test_loading_the_plugins_twice_warns_once(
    fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, caplog: Any
) -> None:
    monkeypatch.setattr(variables, "_warned", set())
    monkeypatch.setenv("MCP_MEMORY_EMBEDER", "hash")
    with caplog.at_level(logging.WARNING):
        load_plugins(Settings())
        load_plugins(Settings())
    [record] = [r for r in caplog.records if "MCP_MEMORY_EMBEDER" in r.getMessage()]
    assert "did you mean MCP_MEMORY_EMBEDDER?" in record.getMessage()


def test_known_and_empty_variables_are_not_warned_about(fake_env: dict[str, str]) -> None:
    plugins = load_plugins(Settings())
    known = variables.known_variables(plugins)
    assert {"MCP_MEMORY_DB_PATH", "MCP_MEMORY_VAULT"} <= known
    environ = {"MCP_MEMORY_DB_PATH": "x", "MCP_MEMORY_TYPO": "", "mcp_memory_rankr": "y", "HOME": "/"}
    assert variables.unknown_variables(environ, known) == ["mcp_memory_rankr"]
