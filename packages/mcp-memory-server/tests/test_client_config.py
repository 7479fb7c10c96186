"""``mcp-memory config CLIENT [--install]``: the printed entry and the merge into each client's real
file, against sample files of every client (other servers, other keys, comments)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import stat
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from mcp_memory_server.cli import cli
from mcp_memory_server.integrations.clients import CLIENTS, claude_add_command, install_server, parse_env
from mcp_memory_server.integrations.launch import Launch, detect_launch

SAMPLES = Path(__file__).parent / "client_configs"
SAMPLE_OF = {
    "claude-code": "claude.json",
    "claude-desktop": "claude_desktop_config.json",
    "cursor": "cursor_mcp.json",
    "vscode": "vscode_mcp.json",
    "codex": "codex_config.toml",
}
ALL_CLIENTS = list(SAMPLE_OF)


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def read(client: str, path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    data: dict[str, Any] = tomllib.loads(text) if client == "codex" else json.loads(text)
    return data


def expected_entry(client: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    return CLIENTS[client].entry(detect_launch(), env or {})


def backups(path: Path) -> list[Path]:
    return sorted(path.parent.glob(f"{path.name}.bak-*"))


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private home and working directory: no test can touch the real client files."""
    home = tmp_path / "home"
    work = tmp_path / "work"
    home.mkdir()
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("USERPROFILE", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.chdir(work)
    return home


def sample(client: str, tmp_path: Path) -> Path:
    name = SAMPLE_OF[client]
    target = tmp_path / "configs" / name
    target.parent.mkdir(exist_ok=True)
    shutil.copyfile(SAMPLES / name, target)
    return target


# -- printing ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("client", ALL_CLIENTS)
def test_prints_the_snippet_for_each_client(client: str, home: Path) -> None:
    result = run("config", client, "--env", "MCP_MEMORY_DB_PATH=data/memories.db")
    assert result.exit_code == 0, result.output
    spec = CLIENTS[client]
    printed = tomllib.loads(result.stdout) if client == "codex" else json.loads(result.stdout)
    entry = printed[spec.servers_key]["memory"]
    assert entry == expected_entry(client, {"MCP_MEMORY_DB_PATH": str(Path.cwd() / "data/memories.db")})
    assert os.path.isabs(entry["command"]) or entry["command"] in ("uv", "uvx")
    assert ("type" in entry) == (client in ("claude-code", "vscode"))
    # where it goes is said on stderr; nothing is written anywhere
    assert "--install" in result.stderr
    assert list(home.rglob("*")) == [] and list(Path.cwd().rglob("*")) == []


def test_the_printed_command_is_how_this_checkout_starts_the_server(home: Path) -> None:
    """Run from the uv workspace (as the tests are): `uv run --project <workspace> mcp-memory`."""
    entry = json.loads(run("config", "cursor").stdout)["mcpServers"]["memory"]
    workspace = Path(__file__).resolve().parents[3]
    assert entry["args"] == ["run", "--project", str(workspace), "mcp-memory"]
    assert Path(entry["command"]).name == "uv" and "env" not in entry


def test_claude_code_also_shows_claude_mcp_add(home: Path) -> None:
    result = run("config", "claude-code", "--env", "MCP_MEMORY_STORE=markdown")
    assert "claude mcp add memory --scope user -e MCP_MEMORY_STORE=markdown -- " in result.stderr
    project = run("config", "claude-code", "--project", "--json")
    assert json.loads(project.stdout)["claude_command"].startswith("claude mcp add memory --scope project ")


def test_claude_add_command_quotes_what_needs_it() -> None:
    entry = {"command": "/Applications/My Tools/uv", "args": ["run"], "env": {"MCP_MEMORY_VAULT": "/a b"}}
    assert claude_add_command("memory", entry, "user") == (
        "claude mcp add memory --scope user -e 'MCP_MEMORY_VAULT=/a b' -- '/Applications/My Tools/uv' run"
    )


def test_json_output_without_install(home: Path) -> None:
    data = json.loads(run("config", "vscode", "--json", "--name", "mem").stdout)
    assert data["action"] == "printed" and data["client"] == "vscode" and data["name"] == "mem"
    assert data["file"] == str(Path.cwd() / ".vscode" / "mcp.json")
    assert json.loads(data["snippet"]) == {"servers": {"mem": data["entry"]}}


def test_user_and_project_files(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def file_of(*args: str) -> str:
        result = run("config", *args, "--json")
        assert result.exit_code == 0, result.output
        return str(json.loads(result.stdout)["file"])

    work = Path.cwd()
    assert file_of("claude-code") == str(home / ".claude.json")
    assert file_of("claude-code", "--project") == str(work / ".mcp.json")
    assert file_of("cursor") == str(home / ".cursor" / "mcp.json")
    assert file_of("cursor", "--project") == str(work / ".cursor" / "mcp.json")
    assert file_of("vscode") == file_of("vscode", "--project") == str(work / ".vscode" / "mcp.json")
    assert file_of("codex") == str(home / ".codex" / "config.toml")
    assert file_of("codex", "--project") == str(work / ".codex" / "config.toml")
    monkeypatch.setenv("CODEX_HOME", str(home / "codex-home"))
    assert file_of("codex") == str(home / "codex-home" / "config.toml")
    if sys.platform.startswith("linux"):
        assert file_of("claude-desktop") == str(home / ".config" / "Claude" / "claude_desktop_config.json")
    assert file_of("cursor", "--config-file", "elsewhere/mcp.json") == str(work / "elsewhere" / "mcp.json")


def test_claude_desktop_has_no_project_file(home: Path) -> None:
    result = run("config", "claude-desktop", "--project")
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        "mcp-memory: error: Claude Desktop has no per-project configuration; leave out --project."
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--env", "MCP_MEMORY_DB_PATH"), "--env takes NAME=VALUE"),
        (("--env", "1BAD=x"), "--env takes NAME=VALUE"),
        (("--name", "my memory"), "--name must be letters, digits"),
    ],
)
def test_bad_input_is_one_sentence(home: Path, args: tuple[str, ...], message: str) -> None:
    result = run("config", "cursor", "--install", *args)
    assert result.exit_code == 1
    assert result.stderr.startswith(f"mcp-memory: error: {message}")
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.output
    assert not (home / ".cursor").exists()


def test_unknown_client_is_a_usage_error(home: Path) -> None:
    result = run("config", "windsurf")
    assert result.exit_code == 2 and "'windsurf' is not one of" in result.stderr


def test_env_paths_are_made_absolute(tmp_path: Path) -> None:
    env = parse_env(
        [
            "MCP_MEMORY_DB_PATH=rel/m.db",
            "MCP_MEMORY_VAULT=~/notes",
            "MCP_MEMORY_STORE=markdown",
            "MCP_MEMORY_TOKENS_PATH=:memory:",
            "OTHER_PATH=keep/as/is",
            "MCP_MEMORY_STORE=sqlite-vec",  # the later one wins
        ],
        cwd=tmp_path,
    )
    assert env == {
        "MCP_MEMORY_DB_PATH": str(tmp_path / "rel" / "m.db"),
        "MCP_MEMORY_VAULT": str(Path("~/notes").expanduser()),
        "MCP_MEMORY_STORE": "sqlite-vec",
        "MCP_MEMORY_TOKENS_PATH": ":memory:",
        "OTHER_PATH": "keep/as/is",
    }


# -- how the server is launched ------------------------------------------------------------------------
def test_launch_from_a_uv_workspace(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.uv.workspace]\nmembers = ["packages/*"]\n')
    package = tmp_path / "packages" / "mcp-memory-server" / "src" / "mcp_memory_server"
    package.mkdir(parents=True)
    (package.parent.parent / "pyproject.toml").write_text('[project]\nname = "mcp-memory-app"\n')
    launch = detect_launch(
        argv0=str(tmp_path / ".venv/bin/mcp-memory"), package_dir=package, which=lambda _: "/opt/bin/uv"
    )
    assert launch == Launch("/opt/bin/uv", ("run", "--project", str(tmp_path), "mcp-memory"), launch.how)


def test_launch_from_an_installed_script(tmp_path: Path) -> None:
    script = tmp_path / "venv" / "bin" / "mcp-memory"
    script.parent.mkdir(parents=True)
    script.write_text("#!/usr/bin/env python\n")
    site = tmp_path / "venv" / "lib" / "site-packages" / "mcp_memory_server"
    site.mkdir(parents=True)
    # the venv lies in the user's own uv workspace: that is not a clone of mcp-memory
    (tmp_path / "pyproject.toml").write_text("[tool.uv.workspace]\nmembers = []\n")
    launch = detect_launch(argv0=str(script), package_dir=site, executable=str(tmp_path / "py"))
    assert (launch.command, launch.args) == (str(script), ())
    # run as `python -m mcp_memory_server`: the script beside that Python
    beside = detect_launch(argv0="-m", package_dir=site, executable=str(script.parent / "python"))
    assert (beside.command, beside.args) == (str(script), ())
    # no script at all: this Python with -m
    (tmp_path / "python3").write_text("")
    bare = detect_launch(argv0="-m", package_dir=site, executable=str(tmp_path / "python3"))
    assert (bare.command, bare.args) == (str(tmp_path / "python3"), ("-m", "mcp_memory_server"))


def test_launch_from_uvx_names_the_published_package(tmp_path: Path) -> None:
    script = tmp_path / "cache" / "uv" / "archive-v0" / "AbCd" / "bin" / "mcp-memory"
    launch = detect_launch(argv0=str(script), package_dir=tmp_path, which=lambda _: "/usr/local/bin/uvx")
    assert (launch.command, launch.args) == (
        "/usr/local/bin/uvx",
        ("--from", "mcp-memory-stack", "mcp-memory"),
    )


# -- installing --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("client", ALL_CLIENTS)
def test_install_into_a_missing_file(client: str, home: Path, tmp_path: Path) -> None:
    target = tmp_path / "new" / "dir" / "config"
    result = run("config", client, "--install", "--config-file", str(target))
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"Created {target} with the server 'memory'.")
    spec = CLIENTS[client]
    assert read(client, target) == {spec.servers_key: {"memory": expected_entry(client)}}
    assert backups(target) == []


@pytest.mark.parametrize("client", ALL_CLIENTS)
def test_install_into_an_empty_file(client: str, home: Path, tmp_path: Path) -> None:
    target = tmp_path / "empty"
    target.write_text("\n")
    result = run("config", client, "--install", "--config-file", str(target), "--json")
    data = json.loads(result.stdout)
    assert data["action"] == "added" and Path(data["backup"]).read_text() == "\n"
    assert read(client, target) == {CLIENTS[client].servers_key: {"memory": expected_entry(client)}}


@pytest.mark.parametrize("client", ALL_CLIENTS)
def test_install_keeps_every_other_server_and_key(client: str, home: Path, tmp_path: Path) -> None:
    target = sample(client, tmp_path)
    original = target.read_bytes()
    before = read(client, target)
    result = run(
        "config", client, "--install", "--config-file", str(target), "--env", "MCP_MEMORY_STORE=markdown"
    )
    assert result.exit_code == 0, result.output

    after = read(client, target)
    key = CLIENTS[client].servers_key
    added = after[key].pop("memory")
    assert after == before  # every other server and setting, same values, same order of servers
    assert list(after[key]) == list(before[key])
    assert added == expected_entry(client, {"MCP_MEMORY_STORE": "markdown"})
    # the previous file is kept byte for byte, and the message says where
    [backup] = backups(target)
    assert backup.read_bytes() == original
    assert f"(the previous file is saved as {backup})" in result.stdout


def test_install_keeps_the_files_indentation(home: Path, tmp_path: Path) -> None:
    target = sample("claude-desktop", tmp_path)  # indented with four spaces
    run("config", "claude-desktop", "--install", "--config-file", str(target))
    assert target.read_text().startswith('{\n    "mcpServers": {\n        "filesystem": {')


def test_codex_comments_and_layout_survive(home: Path, tmp_path: Path) -> None:
    target = sample("codex", tmp_path)
    original = target.read_text()
    run("config", "codex", "--install", "--config-file", str(target), "--env", "MCP_MEMORY_STORE=markdown")
    text = target.read_text()
    # every original line is still there, in order: comments, inline tables, the tools' approvals
    lines = iter(text.splitlines())
    assert all(any(line == new for new in lines) for line in original.splitlines())
    # the new table sits with the other servers, before the next one that is not a server
    assert text.index("[mcp_servers.memory]") < text.index("[profiles.fast]")
    assert 'env = {MCP_MEMORY_STORE = "markdown"}' in text


def test_codex_with_dotted_keys_gets_the_table_appended(home: Path, tmp_path: Path) -> None:
    target = tmp_path / "config.toml"
    original = '# dotted\nmcp_servers.docs.command = "npx"\nmodel = "o3"\n'
    target.write_text(original)
    result = run("config", "codex", "--install", "--config-file", str(target))
    assert result.exit_code == 0, result.output
    text = target.read_text()
    assert text.startswith(original) and "[mcp_servers.memory]" in text
    assert tomllib.loads(text) == {
        "mcp_servers": {"docs": {"command": "npx"}, "memory": expected_entry("codex")},
        "model": "o3",
    }


def test_codex_inline_servers_table_is_refused(home: Path, tmp_path: Path) -> None:
    target = tmp_path / "config.toml"
    target.write_text('mcp_servers = { docs = { command = "npx" } }\n')
    result = run("config", "codex", "--install", "--config-file", str(target))
    assert result.exit_code == 1
    assert "without disturbing its layout; left untouched" in result.stderr
    assert target.read_text() == 'mcp_servers = { docs = { command = "npx" } }\n' and backups(target) == []


@pytest.mark.parametrize("client", ALL_CLIENTS)
def test_second_install_changes_nothing(client: str, home: Path, tmp_path: Path) -> None:
    target = sample(client, tmp_path)
    run("config", client, "--install", "--config-file", str(target))
    installed = target.read_bytes()
    [first_backup] = backups(target)
    result = run("config", client, "--install", "--config-file", str(target), "--json")
    assert json.loads(result.stdout)["action"] == "unchanged"
    assert json.loads(result.stdout)["backup"] is None
    assert target.read_bytes() == installed and backups(target) == [first_backup]
    human = run("config", client, "--install", "--config-file", str(target))
    assert "already has this server 'memory': nothing changed." in human.stdout


@pytest.mark.parametrize("client", ALL_CLIENTS)
def test_a_different_entry_is_refused_without_force(client: str, home: Path, tmp_path: Path) -> None:
    target = sample(client, tmp_path)
    run("config", client, "--install", "--config-file", str(target), "--env", "MCP_MEMORY_STORE=markdown")
    installed = target.read_bytes()
    count = len(backups(target))

    result = run(
        "config", client, "--install", "--config-file", str(target), "--env", "MCP_MEMORY_STORE=postgres"
    )
    assert result.exit_code == 1
    assert result.stderr == (
        f"mcp-memory: error: {target} already has a server 'memory' with a different env; "
        "run again with --force to replace it, or choose another --name.\n"
    )
    assert target.read_bytes() == installed and len(backups(target)) == count

    forced = run(
        "config",
        client,
        "--install",
        "--config-file",
        str(target),
        "--env",
        "MCP_MEMORY_STORE=postgres",
        "--force",
    )
    assert forced.exit_code == 0 and forced.stdout.startswith(f"Replaced the server 'memory' in {target}")
    key = CLIENTS[client].servers_key
    assert read(client, target)[key]["memory"] == expected_entry(client, {"MCP_MEMORY_STORE": "postgres"})
    assert len(backups(target)) == count + 1


def test_another_name_sits_beside_the_first(home: Path, tmp_path: Path) -> None:
    target = tmp_path / "mcp.json"
    run("config", "cursor", "--install", "--config-file", str(target))
    run(
        "config", "cursor", "--install", "--config-file", str(target), "--name", "team-memory", "--env", "A=1"
    )
    assert list(read("cursor", target)["mcpServers"]) == ["memory", "team-memory"]


def test_force_keeps_the_entrys_other_settings(home: Path, tmp_path: Path) -> None:
    """Codex keeps tool approvals and a timeout in the server's table; Cursor may say "disabled"."""
    codex = tmp_path / "config.toml"
    codex.write_text(
        "[mcp_servers.memory]\n"
        'command = "/old/mcp-memory"  # an older install\n'
        "startup_timeout_sec = 30\n"
        'env = { MCP_MEMORY_STORE = "markdown" }\n\n'
        "[mcp_servers.memory.tools.search_memories]\n"
        'approval_mode = "approve"\n'
    )
    result = run("config", "codex", "--install", "--config-file", str(codex), "--force")
    assert result.exit_code == 0, result.output
    assert tomllib.loads(codex.read_text())["mcp_servers"]["memory"] == {
        **expected_entry("codex"),
        "startup_timeout_sec": 30,
        "tools": {"search_memories": {"approval_mode": "approve"}},
    }

    cursor = tmp_path / "mcp.json"
    cursor.write_text('{"mcpServers": {"memory": {"command": "/old", "disabled": true}}}')
    run("config", "cursor", "--install", "--config-file", str(cursor), "--force")
    assert read("cursor", cursor)["mcpServers"]["memory"] == {**expected_entry("cursor"), "disabled": True}


def test_an_entry_claude_wrote_without_type_or_env_counts_as_the_same(home: Path, tmp_path: Path) -> None:
    target = tmp_path / ".mcp.json"
    entry = expected_entry("claude-code")
    target.write_text(json.dumps({"mcpServers": {"memory": {**entry, "env": {}}}}))
    assert run("config", "claude-code", "--install", "--config-file", str(target), "--json").exit_code == 0
    assert backups(target) == []


@pytest.mark.parametrize(
    ("client", "content", "why"),
    [
        ("cursor", '{"mcpServers": {"a": {"command": "x"},}}', "is not valid JSON (line 1, column"),
        ("claude-desktop", "[1, 2]", "does not hold a JSON object"),
        ("claude-code", '{"mcpServers": ["a"]}', "'mcpServers' in"),
        ("codex", "[mcp_servers.docs\ncommand = 'x'\n", "is not valid TOML ("),
        ("codex", 'mcp_servers = "none"\n', "'mcp_servers' in"),
    ],
)
def test_a_file_that_cannot_be_parsed_is_left_untouched(
    client: str, content: str, why: str, home: Path, tmp_path: Path
) -> None:
    target = tmp_path / "config"
    target.write_text(content)
    result = run("config", client, "--install", "--config-file", str(target))
    assert result.exit_code == 1
    assert why in result.stderr and "left untouched" in result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.output
    assert target.read_text() == content and backups(target) == []


def test_vscode_comments_are_refused_with_a_hint(home: Path, tmp_path: Path) -> None:
    target = tmp_path / "mcp.json"
    shutil.copyfile(SAMPLES / "vscode_mcp_with_comments.jsonc", target)
    original = target.read_bytes()
    result = run("config", "vscode", "--install", "--config-file", str(target), "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["action"] == "failed"
    assert "VS Code allows comments there; add the snippet by hand" in json.loads(result.stdout)["error"]
    assert target.read_bytes() == original


def test_not_utf8_is_left_untouched(home: Path, tmp_path: Path) -> None:
    target = tmp_path / "mcp.json"
    target.write_bytes(b'{"mcpServers": {"\xff": {}}}')
    result = run("config", "cursor", "--install", "--config-file", str(target))
    assert result.exit_code == 1 and "is not UTF-8 text; left untouched." in result.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes and symlinks")
def test_a_symlinked_file_stays_a_symlink_and_keeps_its_mode(home: Path, tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "claude.json"
    real.parent.mkdir()
    shutil.copyfile(SAMPLES / "claude.json", real)
    real.chmod(0o640)  # not what a fresh temporary file gets (0o600)
    link = home / ".claude.json"
    link.symlink_to(real)
    result = run("config", "claude-code", "--install")
    assert result.exit_code == 0, result.output
    assert link.is_symlink() and "memory" in read("claude-code", real)["mcpServers"]
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert [p.name for p in real.parent.iterdir() if p.name.startswith(".")] == []  # no temp file left


def test_claude_code_user_scope_is_the_top_level_of_claude_json(home: Path) -> None:
    shutil.copyfile(SAMPLES / "claude.json", home / ".claude.json")
    run("config", "claude-code", "--install")
    data = read("claude-code", home / ".claude.json")
    assert set(data["mcpServers"]) == {"context7", "memory"}
    assert set(data["projects"]["/home/ada/src/shop"]["mcpServers"]) == {"sentry"}


def test_project_scope_writes_into_the_current_directory(home: Path) -> None:
    shutil.copyfile(SAMPLES / "dot_mcp.json", Path.cwd() / ".mcp.json")
    assert run("config", "claude-code", "--project", "--install").exit_code == 0
    assert set(read("claude-code", Path.cwd() / ".mcp.json")["mcpServers"]) == {"playwright", "memory"}
    assert run("config", "vscode", "--install").exit_code == 0
    assert read("vscode", Path.cwd() / ".vscode" / "mcp.json")["servers"]["memory"]["type"] == "stdio"


def test_install_server_backup_names_do_not_collide(tmp_path: Path) -> None:
    from datetime import datetime

    target = tmp_path / "mcp.json"
    target.write_text("{}")
    moment = datetime(2026, 5, 1, 12, 0, 0)
    spec = CLIENTS["cursor"]
    first = install_server(spec, target, "a", {"command": "x", "args": []}, now=moment)
    second = install_server(spec, target, "b", {"command": "x", "args": []}, now=moment)
    assert first.backup is not None and first.backup.name == "mcp.json.bak-20260501-120000"
    assert second.backup is not None and second.backup.name == "mcp.json.bak-20260501-120000-2"
    assert first.backup.read_text() == "{}"


# -- the real command ---------------------------------------------------------------------------------------
def test_as_a_real_subprocess(home: Path, tmp_path: Path) -> None:
    target = sample("codex", tmp_path)
    env = {**os.environ, "HOME": str(home)}
    command = [sys.executable, "-m", "mcp_memory_server", "config", "codex"]
    printed = subprocess.run(command, capture_output=True, text=True, env=env, check=True, timeout=60)
    assert "[mcp_servers.memory]" in printed.stdout and "--install" in printed.stderr

    installed = subprocess.run(
        [*command, "--install", "--config-file", str(target), "--json", "--env", "MCP_MEMORY_STORE=markdown"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=60,
    )
    data = json.loads(installed.stdout)
    assert data["action"] == "added" and Path(data["backup"]).is_file()
    assert tomllib.loads(target.read_text())["mcp_servers"]["memory"] == data["entry"]

    refused = subprocess.run(
        [*command, "--install", "--config-file", str(target)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr.startswith("mcp-memory: error: ") and "--force" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_json_is_written_the_way_people_write_it() -> None:
    from mcp_memory_server.integrations.config_files import dump_json

    for name in ("claude.json", "claude_desktop_config.json", "cursor_mcp.json", "vscode_mcp.json"):
        data = json.loads((SAMPLES / name).read_text())
        assert json.loads(dump_json(data)) == data
    entry = {"command": "/bin/uv", "args": ["run", "mcp-memory"], "env": {"A": "ü"}}
    assert dump_json({"mcpServers": {"memory": entry}}, "\t") == (
        '{\n\t"mcpServers": {\n\t\t"memory": {\n\t\t\t"command": "/bin/uv",\n'
        '\t\t\t"args": ["run", "mcp-memory"],\n\t\t\t"env": {\n\t\t\t\t"A": "ü"\n\t\t\t}\n\t\t}\n\t}\n}'
    )
    assert (
        dump_json({"a": [], "b": {}, "c": ["x" * 120]})
        == '{\n  "a": [],\n  "b": {},\n  "c": [\n    "' + "x" * 120 + '"\n  ]\n}'
    )


def test_client_configs_and_hook_settings_share_one_json_object_reader(tmp_path: Path) -> None:
    """Both refuse a file that holds JSON but no object in the same sentence, and write the file
    back in the indentation it had."""
    from mcp_memory_server.integrations.config_files import ConfigFileError, json_text, load_json_object

    path = tmp_path / "settings.json"
    assert load_json_object("", path) == {}
    with pytest.raises(ConfigFileError, match=r"does not hold a JSON object; left untouched\.$"):
        load_json_object("[1, 2]", path)
    assert json_text({"a": {"b": 1}}, '{\n    "x": 1\n}\n') == '{\n    "a": {\n        "b": 1\n    }\n}\n'


def test_launch_from_a_clone_without_uv_is_the_script_not_a_bare_uv(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("UV", raising=False)
    (tmp_path / "pyproject.toml").write_text("[tool.uv.workspace]\nmembers = []\n")
    package = tmp_path / "src" / "mcp_memory_server"
    package.mkdir(parents=True)
    script = tmp_path / ".venv" / "bin" / "mcp-memory"
    script.parent.mkdir(parents=True)
    script.write_text("#!/usr/bin/env python\n")
    launch = detect_launch(argv0=str(script), package_dir=package, which=lambda _: None)
    assert (launch.command, launch.args) == (str(script), ())
    (tmp_path / "python3").write_text("")
    python = detect_launch(
        argv0="-m", package_dir=package, executable=str(tmp_path / "python3"), which=lambda _: None
    )
    assert (python.command, python.args) == (str(tmp_path / "python3"), ("-m", "mcp_memory_server"))


def test_launch_from_uvx_without_uvx_on_path_uses_uv_or_refuses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcp_memory_server.integrations.launch import LaunchError

    script = tmp_path / "cache" / "uv" / "archive-v0" / "AbCd" / "bin" / "mcp-memory"
    uv = tmp_path / "bin" / "uv"
    uv.parent.mkdir(parents=True)
    uv.write_text("")
    monkeypatch.setenv("UV", str(uv))
    launch = detect_launch(argv0=str(script), package_dir=tmp_path, which=lambda _: None)
    assert (launch.command, launch.args) == (
        str(uv),
        ("tool", "run", "--from", "mcp-memory-stack", "mcp-memory"),
    )
    monkeypatch.delenv("UV")
    with pytest.raises(LaunchError, match="uvx"):
        detect_launch(argv0=str(script), package_dir=tmp_path, which=lambda _: None)


def test_no_python_to_start_is_refused_in_one_sentence(tmp_path: Path) -> None:
    from mcp_memory_server.integrations.launch import LaunchError

    site = tmp_path / "venv" / "lib" / "site-packages" / "mcp_memory_server"
    with pytest.raises(LaunchError) as refused:
        detect_launch(argv0="-m", package_dir=site, executable="", which=lambda _: None)
    assert str(refused.value).count(". ") == 0 and str(refused.value).endswith(".")


@pytest.mark.parametrize("command", [["config", "claude-code"], ["hooks", "install", "--print"]])
def test_without_uv_on_path_the_written_command_exists(home: Path, command: list[str]) -> None:
    """A clone run by its venv's python, PATH without uv: the command written must still start."""
    env = {k: v for k, v in os.environ.items() if k != "UV"}
    env |= {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    assert shutil.which("uv", path=env["PATH"]) is None
    done = subprocess.run(
        [sys.executable, "-m", "mcp_memory_server", *command],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=60,
    )
    printed = json.loads(done.stdout)
    if command[0] == "config":
        program = printed["mcpServers"]["memory"]["command"]
    else:
        program = shlex.split(printed["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"])[0]
    assert Path(program).is_absolute() and os.access(program, os.X_OK), program
    assert "not on this PATH" not in done.stderr


@pytest.mark.parametrize("command", [["config", "cursor"], ["hooks", "install", "--print"]])
def test_no_command_to_write_is_one_sentence(
    home: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    from mcp_memory_server.integrations import launch

    def nothing(**_: Any) -> launch.Launch:
        raise launch.LaunchError("Cannot find a command that starts mcp-memory on this machine.")

    monkeypatch.setattr(launch, "detect_launch", nothing)
    monkeypatch.setattr("mcp_memory_server.integrations.claude_code.settings.detect_launch", nothing)
    result = CliRunner().invoke(cli, command)
    assert result.exit_code == 1 and result.stdout == ""
    assert (
        result.stderr == "mcp-memory: error: Cannot find a command that starts mcp-memory on this machine.\n"
    )
