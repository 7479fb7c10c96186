"""The ``mcp-memory`` command: every subcommand, human and --json output, clean errors."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from click.testing import CliRunner

import mcp_memory_server.assembly as assembly
from mcp_memory_core.engine import MemoryEngine
from mcp_memory_core.settings import Settings
from mcp_memory_server.cli import cli


@pytest.fixture
def engine(fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> MemoryEngine:
    """One engine shared by every CLI invocation of a test (the in-memory store does not persist)."""
    shared = assembly.build_engine(Settings())
    real_build = assembly.build_engine

    def build(settings: Settings | None = None, plugins: Any = None) -> MemoryEngine:
        real_build(settings, plugins)  # still resolve the names, as the real command does
        return shared

    monkeypatch.setattr(assembly, "build_engine", build)
    return shared


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_help_lists_commands() -> None:
    result = run("--help")
    assert result.exit_code == 0
    for command in ("serve", "list", "search", "get", "plugins"):
        assert command in result.output


def test_version() -> None:
    result = run("--version")
    assert result.exit_code == 0 and "0.1.0" in result.output


def test_list_empty(engine: MemoryEngine) -> None:
    result = run("list")
    assert result.exit_code == 0 and "No memories." in result.output


def test_list_human_and_json_with_paging(engine: MemoryEngine) -> None:
    ids = [engine.store_memory(f"memory number {i}").memory.id for i in range(3)]
    human = run("list", "--limit", "2")
    assert human.exit_code == 0
    assert ids[2] in human.output and ids[1] in human.output and ids[0] not in human.output
    assert "3 in total" in human.output and "--cursor" in human.output
    data = json.loads(run("list", "--limit", "2", "--json").output)
    assert data["total"] == 3 and len(data["memories"]) == 2 and data["next_cursor"]
    rest = json.loads(run("list", "--limit", "2", "--cursor", data["next_cursor"], "--json").output)
    assert [m["id"] for m in rest["memories"]] == [ids[0]] and rest["next_cursor"] is None


def test_search_human_and_json(engine: MemoryEngine) -> None:
    tea = engine.store_memory("The user likes oolong tea").memory.id
    engine.store_memory("Deploys happen on Fridays")
    human = run("search", "oolong tea")
    assert human.exit_code == 0
    first_line = human.output.splitlines()[0]
    assert tea in first_line and first_line.lstrip().startswith("1.")
    data = json.loads(run("search", "oolong tea", "--limit", "1", "--json").output)
    assert data["count"] == 1 and data["results"][0]["id"] == tea and "score" in data["results"][0]


def test_search_shows_the_matched_older_version(engine: MemoryEngine) -> None:
    old = engine.store_memory("The build uses make").memory.id
    new = engine.update_memory(old, "The build now uses just").memory.id
    data = json.loads(run("search", "build uses make", "--json").output)
    assert data["results"][0]["id"] == new and data["results"][0]["matched_id"] == old
    assert f"matched older version {old}" in run("search", "build uses make").output


def test_search_nothing(engine: MemoryEngine) -> None:
    result = run("search", "anything")
    assert result.exit_code == 0 and "No matching memories." in result.output


def test_get_human_and_json(engine: MemoryEngine) -> None:
    old = engine.store_memory("Line one", {"project": "atlas"}).memory.id
    new = engine.update_memory(old, "Line two").memory.id
    human = run("get", old)
    assert human.exit_code == 0
    assert "superseded" in human.output and new in human.output and "Line one" in human.output
    assert "atlas" in human.output
    data = json.loads(run("get", old, "--json").output)
    assert data["status"] == "superseded" and data["head_id"] == new and data["content"] == "Line one"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("get", "not-a-uuid"), "is not a memory id"),
        (("get", "00000000-0000-4000-8000-000000000000"), "No memory with id"),
        (("list", "--limit", "0"), "limit must be an integer"),
        (("list", "--cursor", "zzz"), "cursor is not valid"),
        (("search", "  "), "query must be a non-empty string"),
        (("search", "x", "--limit", "500"), "limit must be an integer from 1 to 100"),
    ],
)
def test_expected_errors_are_one_line_without_traceback(
    engine: MemoryEngine, args: tuple[str, ...], message: str
) -> None:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 1
    assert message in result.stderr
    assert "Traceback" not in result.output
    assert result.stderr.startswith("mcp-memory: error: ") and len(result.stderr.strip().splitlines()) == 1
    assert result.stdout == ""


def test_unknown_backend_is_a_clean_error(fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_MEMORY_STORE", "postgres-of-dreams")
    result = CliRunner().invoke(cli, ["list"])
    assert result.exit_code == 1
    assert "postgres-of-dreams" in result.stderr and "Choose one of" in result.stderr
    assert "Traceback" not in result.output


def test_invalid_settings_are_a_clean_error(
    fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_MEMORY_STRICT_PLUGINS", "perhaps")
    result = CliRunner().invoke(cli, ["list"])
    assert result.exit_code == 2
    assert "MCP_MEMORY_STRICT_PLUGINS" in result.stderr


def test_plugins_table_and_json(fake_env: dict[str, str]) -> None:
    human = run("plugins")
    assert human.exit_code == 0
    lines = human.output.splitlines()
    assert lines[0].split() == ["NAME", "KIND", "PACKAGE", "VERSION", "DESCRIPTION"]
    assert any(line.split()[:4] == ["*", "hash", "embedder", "mcp-memory-testing"] for line in lines)
    assert any(line.split()[:3] == ["*", "memory", "store"] for line in lines)
    assert any(line.split()[:3] == ["*", "similarity", "ranker"] for line in lines)
    data = json.loads(run("plugins", "--json").output)
    rows = {(b["kind"], b["name"]): b for b in data["backends"]}
    assert rows[("embedder", "hash")]["package"] == "mcp-memory-testing"
    assert rows[("store", "memory")]["selected"] is True
    assert rows[("ranker", "similarity")]["version"]
    assert data["failed"] == []
    assert data["selected"] == {"store": "memory", "embedder": "hash", "ranker": "similarity"}


def test_plugins_shows_failed_plugins(fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    from mcp_memory_core.plugins import PluginLoadFailure, PluginManager

    real = assembly.load_plugins

    def load(settings: Settings) -> PluginManager:
        manager = real(settings)
        manager.failures.append(PluginLoadFailure("broken", "mcp-memory-broken", "ImportError: no module x"))
        return manager

    monkeypatch.setattr(assembly, "load_plugins", load)
    human = run("plugins")
    assert "FAILED  broken (mcp-memory-broken): ImportError: no module x" in human.output
    data = json.loads(run("plugins", "--json").output)
    assert data["failed"] == [
        {"entry_point": "broken", "package": "mcp-memory-broken", "error": "ImportError: no module x"}
    ]


def test_plugins_honours_disable(fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_MEMORY_DISABLE_PLUGINS", "*")
    data = json.loads(run("plugins", "--json").output)
    assert data["backends"] == []


def test_serve_rejects_an_unknown_transport() -> None:
    result = CliRunner().invoke(cli, ["serve", "--transport", "carrier-pigeon"])
    assert result.exit_code == 2 and "carrier-pigeon" in result.stderr


def test_no_subcommand_serves_stdio(fake_env: dict[str, str], tmp_path: Any) -> None:
    """``mcp-memory`` with no arguments is a stdio server: it answers initialize on stdout, logs on stderr."""
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        },
    }
    proc = subprocess.run(
        [sys.executable, "-c", "from mcp_memory_server.cli import main; main()"],
        input=json.dumps(init) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
        env={**__import__("os").environ, "MCP_MEMORY_LOG_LEVEL": "INFO"},
    )
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stdout  # nothing but the protocol on stdout
    reply = json.loads(lines[0])
    assert reply["id"] == 1 and reply["result"]["serverInfo"]["name"] == "mcp-memory"
    assert "serving over stdio" in proc.stderr


def test_http_serve_fails_fast_on_a_bad_backend(
    fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_MEMORY_EMBEDDER", "no-such-model")
    result = CliRunner().invoke(cli, ["serve", "--transport", "http", "--port", "0"])
    assert result.exit_code == 1
    assert "no-such-model" in result.stderr and "Choose one of" in result.stderr
    assert "Traceback" not in result.output
