"""The CLI on the real sqlite-vec store: read commands never create a database at a mistyped path and
never write into a file that is not ours; storage failures are one line on stderr, never a traceback."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mcp_memory_server.cli import cli


@pytest.fixture
def sqlite_env(fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.setenv("MCP_MEMORY_STORE", "sqlite-vec")
    return fake_env


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args))


def one_line_error(result: Any) -> str:
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mcp-memory: error: "), result.stderr
    return str(lines[0])


@pytest.mark.parametrize(
    "command",
    [
        ["list"],
        ["search", "anything"],
        ["get", "00000000-0000-4000-8000-000000000000"],
        ["export"],
        ["namespaces"],
    ],
)
def test_read_commands_never_create_a_database(
    sqlite_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path, command: list[str]
) -> None:
    mistyped = tmp_path / "memroies" / "memories.db"
    monkeypatch.setenv("MCP_MEMORY_DB_PATH", str(mistyped))
    assert "There is no memory database at" in one_line_error(run(*command))
    assert not mistyped.exists() and not mistyped.parent.exists()


def test_no_command_writes_into_another_programs_database(
    sqlite_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = tmp_path / "browser-history.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE visits (url TEXT)")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    monkeypatch.setenv("MCP_MEMORY_DB_PATH", str(path))
    for command in (["list"], ["gc"], ["namespaces"]):
        assert "another program's SQLite database (tables: visits)" in one_line_error(run(*command))
    assert path.read_bytes() == before


def test_the_write_commands_create_the_database_privately(
    sqlite_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = tmp_path / "data" / "memories.db"
    monkeypatch.setenv("MCP_MEMORY_DB_PATH", str(path))
    assert run("gc").exit_code == 0
    assert path.exists() and oct(path.stat().st_mode & 0o777) == "0o600"
    assert run("list").exit_code == 0  # now it exists: reading it is fine
