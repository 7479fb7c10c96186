"""A misconfiguration or a bad argument ends the command in one line on stderr that says what to do,
with a nonzero exit status, never a traceback: one test per way the CLI used to crash."""

from __future__ import annotations

import errno
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mcp_memory_server.cli import cli, main

DEEP_JSON = '{"a": ' * 100_000 + "1" + "}" * 100_000
ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
needs_root = pytest.mark.skipif(not ROOT, reason="creating a device node needs root")


def run(*args: str, input: str | None = None) -> Any:
    return CliRunner().invoke(cli, list(args), input=input)


def last_line(result: Any, code: int | None = None) -> str:
    """The one line the command ended with: nonzero exit, no traceback, the error as its last line."""
    assert result.exit_code != 0, result.output
    if code is not None:
        assert result.exit_code == code, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert lines and (lines[-1].startswith("mcp-memory: error: ") or lines[-1].startswith("Error: ")), lines
    if lines[-1].startswith("mcp-memory: error: "):
        assert len(lines) == 1, lines  # ours: exactly one line (click's usage errors end in theirs)
    return str(lines[-1])


def device(path: Path, major: int, minor: int) -> Path:
    os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(major, minor))
    return path


@pytest.fixture
def sqlite_env(fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.setenv("MCP_MEMORY_STORE", "sqlite-vec")
    return fake_env


# -- settings ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("lifetime", ["1" + "0" * 30 + "d", "1" + "0" * 5000 + "d", "99999999999999999999h"])
def test_a_lifetime_beyond_1000_years_is_refused(
    fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, lifetime: str
) -> None:
    monkeypatch.setenv("MCP_MEMORY_TTL_WORKING", lifetime)
    line = last_line(run("list"), 2)
    assert "MCP_MEMORY_TTL_WORKING" in line and "longer than 1000 years: use never" in line
    assert len(line) < 400  # a 5,000-digit value is not echoed whole


@pytest.mark.parametrize("url", ["garbage", "postgresql://u:pw-s3cret@[::1/x"])
def test_a_malformed_database_url_is_refused(
    fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, url: str
) -> None:
    monkeypatch.setenv("MCP_MEMORY_STORE", "postgres")
    monkeypatch.setenv("MCP_MEMORY_DATABASE_URL", url)
    for command in (["list"], ["add", "a memory"], ["gc"], ["reindex"]):
        line = last_line(run(*command), 1)
        assert line == (
            "mcp-memory: error: MCP_MEMORY_DATABASE_URL is not a valid PostgreSQL URL or connection "
            "string: use e.g. postgresql://mcp@db.internal/memory."
        )


def test_an_unknown_sqlite_binding_is_refused(
    sqlite_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_MEMORY_SQLITE_BINDING", "sqlite3x")
    line = last_line(run("add", "a memory"), 1)
    assert "MCP_MEMORY_SQLITE_BINDING" in line and "choose one of stdlib, sqlean, pysqlite3" in line


@pytest.mark.parametrize("url", ["garbage", "ftp://example.com", "http://", "http://[::1"])
def test_a_public_url_that_is_no_http_url_is_refused(
    fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, url: str
) -> None:
    monkeypatch.setenv("MCP_MEMORY_PUBLIC_URL", url)
    line = last_line(run("serve", "--transport", "http", "--port", "0"), 2)
    assert "MCP_MEMORY_PUBLIC_URL" in line and "is not an http(s) URL" in line


@pytest.mark.parametrize("host", ["not a host", "999.1.1.1", "[::1", "a..b"])
def test_a_bind_address_that_is_no_host_is_refused(fake_env: dict[str, str], host: str) -> None:
    line = last_line(run("serve", "--transport", "http", "--host", host, "--port", "0"), 2)
    assert "--host" in line and "is not an IP address or a host name" in line


# -- the database path ------------------------------------------------------------------------------
def test_a_database_path_below_a_file_is_refused(
    sqlite_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("x")
    monkeypatch.setenv("MCP_MEMORY_DB_PATH", str(tmp_path / "notes.txt" / "memories.db"))
    for command in (["add", "a memory"], ["gc"], ["list"]):
        line = last_line(run(*command), 1)
        assert f"{tmp_path / 'notes.txt'} is a file, not a folder" in line
        assert "Set MCP_MEMORY_DB_PATH" in line


@pytest.mark.anyio
async def test_an_mcp_tool_says_the_same_sentence(
    sqlite_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from mcp import Client

    from mcp_memory_core.settings import Settings
    from mcp_memory_server.mcp.app import build_app

    (tmp_path / "notes.txt").write_text("x")
    monkeypatch.setenv("MCP_MEMORY_DB_PATH", str(tmp_path / "notes.txt" / "memories.db"))
    app = build_app(Settings())
    try:
        async with Client(app) as client:
            result = await client.call_tool("store_memory", {"content": "a memory"})
    finally:
        app.memory_service.close()  # type: ignore[attr-defined]
    assert result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert text.endswith(
        f"{tmp_path / 'notes.txt'} is a file, not a folder. Set MCP_MEMORY_DB_PATH to a file path in a "
        "folder you can write (e.g. …/memories.db)."
    )


@needs_root
def test_a_database_path_that_is_a_device_is_refused_and_doctor_fails_it(
    sqlite_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    null = device(tmp_path / "null", 1, 3)  # what /dev/null is
    monkeypatch.setenv("MCP_MEMORY_DB_PATH", str(null))
    for command in (["add", "a memory"], ["list"]):
        line = last_line(run(*command), 1)
        assert "is a device or other special file, not a database file" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["null"]  # no journal beside it
    doctor = run("doctor", "--no-handshake")
    assert doctor.exit_code != 0
    storage = next(line for line in doctor.output.splitlines() if "storage" in line)
    assert "FAIL" in storage
    assert "not a database file" in doctor.output and "Set MCP_MEMORY_DB_PATH" in doctor.output


def test_a_token_file_below_a_file_is_refused(
    fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("x")
    monkeypatch.setenv("MCP_MEMORY_TOKENS_PATH", str(tmp_path / "notes.txt" / "tokens.db"))
    line = last_line(run("token", "create", "alice"), 1)
    assert f"{tmp_path / 'notes.txt'} is a file, not a folder: set MCP_MEMORY_TOKENS_PATH" in line


@needs_root
def test_a_token_file_that_is_a_device_is_refused(
    fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    null = device(tmp_path / "null", 1, 3)
    monkeypatch.setenv("MCP_MEMORY_TOKENS_PATH", str(null))
    for command in (["token", "create", "alice"], ["token", "list"]):
        line = last_line(run(*command), 1)
        assert "is a device or other special file, not a database file: set MCP_MEMORY_TOKENS_PATH" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["null"]  # no journal beside it


# -- vaults -----------------------------------------------------------------------------------------
def test_a_vault_path_below_a_file_is_refused(fake_env: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x")
    line = last_line(run("init", "--path", str(tmp_path / "notes.txt" / "vault")), 2)
    assert f"{tmp_path / 'notes.txt'} is not a folder; a vault is a folder" in line


@pytest.mark.parametrize("command", [["init"], ["reindex"], ["doctor", "--no-handshake"], ["serve"], ["ui"]])
def test_a_vault_path_that_is_a_file_is_a_usage_error(
    fake_env: dict[str, str], tmp_path: Path, command: list[str]
) -> None:
    (tmp_path / "notes.txt").write_text("x")
    line = last_line(run(*command, "--path", str(tmp_path / "notes.txt")), 2)
    assert line == f"Error: Invalid value for '--path': Directory '{tmp_path / 'notes.txt'}' is a file."


def test_a_vault_that_is_a_file_cannot_be_initialized(
    fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("x")
    monkeypatch.setenv("MCP_MEMORY_STORE", "markdown")
    monkeypatch.setenv("MCP_MEMORY_VAULT", str(tmp_path / "notes.txt"))
    line = last_line(run("init"), 1)
    assert "cannot create the store's layout in" in line and "choose a folder you can write" in line


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs /proc")
def test_init_in_proc_is_refused(fake_env: dict[str, str]) -> None:
    line = last_line(run("init", "--path", "/proc"), 1)
    assert "cannot create the store's layout in /proc" in line


# -- arguments --------------------------------------------------------------------------------------
@pytest.mark.parametrize("digits", [30, 5000])
@pytest.mark.parametrize("command", [["list"], ["search", "tea"]])
def test_a_huge_limit_is_refused(fake_env: dict[str, str], command: list[str], digits: int) -> None:
    line = last_line(run(*command, "--limit", "1" + "0" * digits), 1)
    assert "limit must be an integer from 1 to" in line
    assert len(line) < 200


def test_a_deeply_nested_client_config_is_refused(fake_env: dict[str, str], tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(DEEP_JSON)
    line = last_line(run("config", "cursor", "--install", "--config-file", str(config)), 1)
    assert "nests JSON too deeply" in line and "left untouched" in line
    assert config.read_text() == DEEP_JSON


def test_a_deeply_nested_hook_input_is_one_line(fake_env: dict[str, str]) -> None:
    result = run("hook", "session-start", input=DEEP_JSON)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    assert "nests JSON too deeply" in result.stderr


@needs_root
def test_a_client_config_that_is_a_device_is_never_read(
    fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    zero = device(tmp_path / "zero", 1, 5)  # what /dev/zero is: reading it never ends
    real_read = Path.read_bytes

    def read_bytes(self: Path) -> bytes:
        assert self != zero, "read a device"
        return real_read(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    line = last_line(run("config", "cursor", "--install", "--config-file", str(zero)), 1)
    assert "is not a regular file" in line and "left untouched" in line
    assert stat.S_ISCHR(zero.stat().st_mode)


# -- export -----------------------------------------------------------------------------------------
def test_a_full_disk_during_export_is_one_line_and_keeps_the_file(
    fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import mcp_memory_core.transfer as transfer

    def full(*args: Any, **kwargs: Any) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(transfer, "export_memories", full)
    target = tmp_path / "export.jsonl"
    target.write_text("the previous export\n")
    line = last_line(run("export", "-o", str(target)), 1)
    assert f"cannot write {target}: No space left on device" in line and "unchanged" in line
    assert target.read_text() == "the previous export\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export.jsonl"]  # no temporary file left


def test_a_full_disk_behind_stdout_is_one_line(sqlite_env: dict[str, str]) -> None:
    import subprocess

    if not Path("/dev/full").exists():
        pytest.skip("needs /dev/full")
    assert run("add", "a memory to export").exit_code == 0
    env = dict(os.environ)  # the test's settings: sqlite-vec in tmp_path
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "mcp_memory_server", "export"],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            timeout=120,
        )
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        "mcp-memory: error: cannot write the export to stdout: No space left on device."
    ]


def _symlink(tmp_path: Path) -> Path:
    (tmp_path / "target.txt").write_text("kept")
    link = tmp_path / "link.jsonl"
    link.symlink_to(tmp_path / "target.txt")
    return link


def _fifo(tmp_path: Path) -> Path:
    os.mkfifo(tmp_path / "pipe")
    return tmp_path / "pipe"


@pytest.mark.parametrize(
    ("make", "kind"),
    [
        (_symlink, "a symbolic link"),
        (_fifo, "a device, pipe or socket"),
        pytest.param(lambda p: device(p / "null", 1, 3), "a device, pipe or socket", marks=needs_root),
    ],
)
def test_export_never_replaces_what_is_not_a_regular_file(
    fake_env: dict[str, str], tmp_path: Path, make: Any, kind: str
) -> None:
    target = make(tmp_path)
    before = target.lstat()
    line = last_line(run("export", "-o", str(target)), 1)
    assert f"refusing to export to {target}: it is {kind}, not a regular file" in line
    after = target.lstat()
    assert (after.st_ino, after.st_mode) == (before.st_ino, before.st_mode)
    if target.is_symlink():
        assert (tmp_path / "target.txt").read_text() == "kept"


def test_export_replaces_a_regular_file(fake_env: dict[str, str], tmp_path: Path) -> None:
    target = tmp_path / "export.jsonl"
    target.write_text("old\n")
    result = run("export", "-o", str(target))
    assert result.exit_code == 0, result.output
    assert '"format":"mcp-memory"' in target.read_text()


# -- the last resort ---------------------------------------------------------------------------------
def test_an_unexpected_error_is_one_line_asking_for_a_report(
    fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import mcp_memory_server.runtime.assembly as assembly

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise KeyError("a bug")

    monkeypatch.setattr(assembly, "build_engine", broken)
    monkeypatch.delenv("MCP_MEMORY_DEBUG", raising=False)
    with pytest.raises(SystemExit) as exit:
        main(["list"])
    assert exit.value.code == 1
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [
        "mcp-memory: internal error: KeyError: 'a bug' — rerun with MCP_MEMORY_DEBUG=1 for the "
        "traceback, and please report it."
    ]
    monkeypatch.setenv("MCP_MEMORY_DEBUG", "1")
    with pytest.raises(KeyError):
        main(["list"])
