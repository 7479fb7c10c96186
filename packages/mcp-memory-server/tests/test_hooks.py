"""Claude Code hooks (issue 16): `mcp-memory hooks install|uninstall` against real settings files,
and `mcp-memory hook NAME` run as Claude Code runs it (a subprocess, the hook's JSON on stdin, stdout
read back) against a real sqlite-vec database, on the hash embedder (fast); one end-to-end test on
the real all-MiniLM-L6-v2 is marked `model`."""

from __future__ import annotations

import json
import os
import shlex
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mcp_memory_server.cli import cli
from mcp_memory_server.integrations.claude_code.hooks import decision_lines
from mcp_memory_server.integrations.claude_code.settings import hook_entries, is_ours, launch_command

SCRIPT = str(Path(sys.executable).parent / "mcp-memory")

# The hash embedder has no calibrated relevance floor: give it one, so an off-topic prompt injects nothing.
HASH_ENV = {
    "MCP_MEMORY_STORE": "sqlite-vec",
    "MCP_MEMORY_EMBEDDER": "hash",
    "MCP_MEMORY_RANKER": "similarity",
    "MCP_MEMORY_FLOOR_SIMILARITY": "0.3",
    "MCP_MEMORY_FLOOR_STANDOUT": "2.0",
    "MCP_MEMORY_FLOOR_KEYWORD_SIMILARITY": "0.3",
    "MCP_MEMORY_LOG_LEVEL": "WARNING",
}

SAMPLE_SETTINGS = {
    "permissions": {"allow": ["Bash(npm run test:*)"], "deny": ["Read(./.env)"]},
    "env": {"FOO": "bar"},
    "hooks": {
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [{"type": "command", "command": "~/bin/check-bash.sh", "timeout": 5}],
            }
        ],
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo 'Today is Monday'"}]}],
    },
}


# -- helpers ---------------------------------------------------------------------------------------------
def base_env(**extra: str) -> dict[str, str]:
    """The environment of a hook process: this one without any MCP_MEMORY_* setting, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCP_MEMORY_")}
    return {**env, **extra}


@pytest.fixture
def hook_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    env = {**HASH_ENV, "MCP_MEMORY_DB_PATH": str(tmp_path / "data" / "memories.db")}
    for key in [k for k in os.environ if k.startswith("MCP_MEMORY_")]:
        monkeypatch.delenv(key)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return env


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "shop-backend"
    (folder / ".git").mkdir(parents=True)
    return folder


def seed(
    project: Path, monkeypatch: pytest.MonkeyPatch, memories: list[dict[str, Any]], user: str = "local"
) -> None:
    """Store ``memories`` as ``user`` working in ``project`` (the namespace the server would use there)."""
    from mcp_memory_core.settings import Settings
    from mcp_memory_server.runtime.assembly import build_engine

    monkeypatch.setenv("MCP_MEMORY_USER", user)
    with monkeypatch.context() as patch:
        patch.chdir(project)
        engine = build_engine(Settings())
        try:
            for memory in memories:
                engine.store_memory(**memory)
        finally:
            engine.close()
    monkeypatch.delenv("MCP_MEMORY_USER")


def run_hook(
    name: str, payload: Any, env: dict[str, str], *args: str, raw: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    """Run the hook as Claude Code does: a process, the JSON on stdin, stdout and the exit code read."""
    data = raw if raw is not None else json.dumps(payload).encode()
    return subprocess.run(
        [SCRIPT, "hook", name, *args], input=data, capture_output=True, env=base_env(**env), timeout=120
    )


def injected(result: subprocess.CompletedProcess[bytes], event: str) -> str:
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout.strip(), f"nothing injected; stderr: {result.stderr.decode()}"
    output = json.loads(result.stdout)
    assert set(output) == {"hookSpecificOutput"}
    assert output["hookSpecificOutput"]["hookEventName"] == event
    text = output["hookSpecificOutput"]["additionalContext"]
    assert isinstance(text, str)
    return text


def prompt_payload(prompt: str, cwd: Path) -> dict[str, Any]:
    return {
        "session_id": "3f1c2a9e-0000-4000-8000-000000000001",
        "transcript_path": str(cwd / "transcript.jsonl"),
        "cwd": str(cwd),
        "permission_mode": "default",
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }


def failed_open(result: subprocess.CompletedProcess[bytes]) -> None:
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout == b"", result.stdout


# -- hooks install / uninstall ----------------------------------------------------------------------------
def install(*args: str) -> Any:
    return CliRunner().invoke(cli, ["hooks", "install", *args])


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home of its own (the user level's settings) and a state folder of its own (the backups)."""
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.setenv("XDG_STATE_HOME", str(folder / ".local" / "state"))
    return folder


@pytest.fixture
def sample(tmp_path: Path, home: Path) -> Path:
    path = tmp_path / "repo" / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(SAMPLE_SETTINGS, indent=4) + "\n", encoding="utf-8")
    return path


def backups(path: Path) -> list[Path]:
    """The backups of the settings file at ``path``: in the user's state folder, never beside it."""
    assert list(path.parent.glob("*.bak*")) == []
    folder = Path(os.environ["XDG_STATE_HOME"]) / "mcp-memory" / "backups"
    return sorted(folder.glob(f"*{path.name}.bak-*"))


def test_install_keeps_other_hooks_permissions_and_keys(sample: Path) -> None:
    result = install("--shared", "--project", str(sample.parent.parent))
    assert result.exit_code == 0, result.output
    data = json.loads(sample.read_text())
    assert data["permissions"] == SAMPLE_SETTINGS["permissions"] and data["env"] == {"FOO": "bar"}
    assert data["hooks"]["PreToolUse"] == SAMPLE_SETTINGS["hooks"]["PreToolUse"]
    prompt_groups = data["hooks"]["UserPromptSubmit"]
    assert prompt_groups[0] == SAMPLE_SETTINGS["hooks"]["UserPromptSubmit"][0]  # theirs first, untouched
    ours = prompt_groups[1]["hooks"][0]
    assert ours["type"] == "command" and ours["timeout"] == 15
    words = shlex.split(ours["command"])
    assert words[-4:] == ["hook", "user-prompt-submit", "||", "true"]
    assert Path(words[0]).is_absolute()
    assert [g["hooks"][0]["command"] for g in data["hooks"]["SessionStart"]] == [
        hook_entries(launch_command())["SessionStart"]["command"]
    ]
    assert "Stop" not in data["hooks"] and "PreCompact" not in data["hooks"]  # off by default
    assert sample.read_text().startswith('{\n    "permissions"')  # the file's own indentation
    [backup] = backups(sample)
    assert json.loads(backup.read_text()) == SAMPLE_SETTINGS
    assert "Updated" in result.output and f"saved as {backup}" in result.output


def test_install_twice_changes_nothing(sample: Path) -> None:
    assert install("--shared", "--project", str(sample.parent.parent)).exit_code == 0
    before = sample.read_bytes()
    again = install("--shared", "--project", str(sample.parent.parent))
    assert again.exit_code == 0 and "nothing changed" in again.output
    assert sample.read_bytes() == before
    assert len(backups(sample)) == 1


def test_install_refuses_invalid_json_and_leaves_it_untouched(sample: Path) -> None:
    sample.write_text('{"permissions": {"allow": ["Bash(ls)"],}\n', encoding="utf-8")
    before = sample.read_bytes()
    result = install("--shared", "--project", str(sample.parent.parent))
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "is not valid JSON (line 1" in lines[0] and "left untouched" in lines[0]
    assert sample.read_bytes() == before and backups(sample) == []


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('["a"]', "does not hold a JSON object"),
        ('{"hooks": []}', "'hooks' in"),
        ('{"hooks": {"Stop": {}}}', "hooks.Stop"),
    ],
)
def test_install_refuses_settings_of_the_wrong_shape(sample: Path, text: str, problem: str) -> None:
    sample.write_text(text, encoding="utf-8")
    result = install("--shared", "--project", str(sample.parent.parent))
    assert result.exit_code == 1 and problem in result.stderr
    assert sample.read_text() == text


def test_uninstall_removes_only_ours(sample: Path) -> None:
    project = str(sample.parent.parent)
    assert install("--shared", "--project", project, "--store-decisions").exit_code == 0
    result = CliRunner().invoke(cli, ["hooks", "uninstall", "--shared", "--project", project])
    assert result.exit_code == 0 and "Removed" in result.output
    assert json.loads(sample.read_text()) == SAMPLE_SETTINGS
    again = CliRunner().invoke(cli, ["hooks", "uninstall", "--shared", "--project", project])
    assert again.exit_code == 0 and "nothing changed" in again.output


def test_reinstall_replaces_our_handler_instead_of_adding_one(sample: Path) -> None:
    project = str(sample.parent.parent)
    assert install("--shared", "--project", project).exit_code == 0
    assert install("--shared", "--project", project, "--budget", "1200", "--store-decisions").exit_code == 0
    hooks = json.loads(sample.read_text())["hooks"]
    ours = [h["command"] for g in hooks["UserPromptSubmit"] for h in g["hooks"] if is_ours(h)]
    assert len(ours) == 1 and "--budget 1200" in ours[0]
    assert "--store-decisions" in hooks["Stop"][0]["hooks"][0]["command"]
    assert "hook pre-compact" in hooks["PreCompact"][0]["hooks"][0]["command"]
    assert (
        install("--shared", "--project", project).exit_code == 0
    )  # without --store-decisions: Stop goes again
    hooks = json.loads(sample.read_text())["hooks"]
    assert "Stop" not in hooks and "PreCompact" not in hooks


def test_install_creates_a_missing_file_and_print_writes_nothing(tmp_path: Path, home: Path) -> None:
    folder = tmp_path / "fresh"
    printed = install("--project", str(folder), "--print")
    assert printed.exit_code == 0 and not (folder / ".claude").exists()
    assert set(json.loads(printed.stdout)["hooks"]) == {"SessionStart", "UserPromptSubmit"}
    created = install("--project", str(folder), "--local")
    assert created.exit_code == 0 and "Created" in created.output
    assert set(json.loads((folder / ".claude" / "settings.local.json").read_text())["hooks"]) == {
        "SessionStart",
        "UserPromptSubmit",
    }


def test_install_user_writes_the_home_settings(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert install("--user").exit_code == 0
    assert "UserPromptSubmit" in json.loads((home / ".claude" / "settings.json").read_text())["hooks"]
    assert install("--user", "--project", str(tmp_path)).exit_code == 2
    assert install("--shared", "--local").exit_code == 2


def test_install_defaults_to_the_personal_settings_that_are_not_committed(tmp_path: Path, home: Path) -> None:
    folder = tmp_path / "proj"
    result = install("--project", str(folder))
    local = folder / ".claude" / "settings.local.json"
    assert result.exit_code == 0 and local.is_file() and not (folder / ".claude" / "settings.json").exists()
    assert result.output.startswith(f"Created {local} (this project's personal settings, not committed)")
    help_text = CliRunner().invoke(cli, ["hooks", "install", "--help"]).output
    assert "settings.local.json (default" in " ".join(help_text.split())


@pytest.mark.parametrize(
    ("first", "second", "where"),
    [
        ((), ("--user",), ".claude/settings.local.json"),
        (("--user",), (), "home/.claude/settings.json"),
        (("--shared",), ("--local",), "proj/.claude/settings.json"),
        (("--local",), ("--shared",), ".claude/settings.local.json"),
    ],
)
def test_a_second_level_is_refused_instead_of_injecting_twice(
    tmp_path: Path,
    home: Path,
    monkeypatch: pytest.MonkeyPatch,
    first: tuple[str, ...],
    second: tuple[str, ...],
    where: str,
) -> None:
    folder = tmp_path / "proj"
    folder.mkdir()
    monkeypatch.chdir(folder)
    assert install(*first).exit_code == 0
    files = sorted(p for p in tmp_path.rglob("settings*.json"))
    before = {p: p.read_bytes() for p in files}
    refused = install(*second)
    assert refused.exit_code == 1 and refused.stdout == ""
    [line] = refused.stderr.splitlines()
    assert where in line and "twice" in line and "hooks uninstall" in line and "nothing changed" in line
    assert sorted(tmp_path.rglob("settings*.json")) == files
    assert {p: p.read_bytes() for p in files} == before
    # the same level again is not a second level: it changes nothing
    assert install(*first).exit_code == 0


def test_backups_are_kept_out_of_the_repository(sample: Path) -> None:
    project = str(sample.parent.parent)
    assert install("--shared", "--project", project).exit_code == 0
    removed = CliRunner().invoke(cli, ["hooks", "uninstall", "--shared", "--project", project])
    assert removed.exit_code == 0, removed.output
    first, second = backups(sample)
    assert json.loads(first.read_text()) == SAMPLE_SETTINGS
    assert f"saved as {second}" in removed.output
    assert sorted(p.name for p in sample.parent.iterdir()) == ["settings.json"]


def test_uninstalling_the_only_settings_deletes_the_file_with_no_backup(tmp_path: Path, home: Path) -> None:
    folder = tmp_path / "proj"
    assert install("--project", str(folder)).exit_code == 0
    local = folder / ".claude" / "settings.local.json"
    removed = CliRunner().invoke(cli, ["hooks", "uninstall", "--project", str(folder)])
    assert removed.exit_code == 0 and not local.exists()
    assert "deleted" in removed.output and "no backup" in removed.output
    assert backups(local) == []


def test_uninstall_where_there_are_none_names_where_they_are(tmp_path: Path, home: Path) -> None:
    folder = tmp_path / "proj"
    assert install("--shared", "--project", str(folder)).exit_code == 0
    nothing = CliRunner().invoke(cli, ["hooks", "uninstall", "--project", str(folder)])
    assert nothing.exit_code == 0 and "nothing changed" in nothing.output
    assert str(folder / ".claude" / "settings.json") in nothing.output and "--shared" in nothing.output


@pytest.mark.parametrize(
    ("command", "ours"),
    [
        ("/home/me/.local/bin/mcp-memory hook user-prompt-submit || true", True),
        (
            "/usr/bin/uv run --project /src/mcp-memory mcp-memory hook session-start --budget 900 || true",
            True,
        ),
        ("'/path with space/mcp-memory' hook stop --store-decisions", True),
        ("mcp-memory hook pre-compact", True),
        ("echo mcp-memory", False),
        ("my-mcp-memory hook user-prompt-submit", False),
        ("mcp-memory hooks install", False),
        ("mcp-memory-other hook stop", False),
    ],
)
def test_which_handlers_are_ours(command: str, ours: bool) -> None:
    assert is_ours({"type": "command", "command": command}) is ours


def test_launch_command_from_a_clone_is_uv_run_and_else_the_script(tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    (clone / "pkg").mkdir(parents=True)
    (clone / "pyproject.toml").write_text("[tool.uv.workspace]\nmembers = []\n")
    assert launch_command(package_dir=clone / "pkg", which=lambda _: "/usr/bin/uv") == [
        "/usr/bin/uv",
        "run",
        "--project",
        str(clone),
        "mcp-memory",
    ]
    script = tmp_path / "venv" / "bin" / "mcp-memory"
    script.parent.mkdir(parents=True)
    script.write_text("")
    installed = tmp_path / "venv" / "lib" / "site-packages" / "mcp_memory_server"
    assert launch_command(argv0=str(script), package_dir=installed) == [str(script)]


# -- the hooks, run as Claude Code runs them ---------------------------------------------------------------
MEMORIES = [
    {"content": "The team server stores memories in PostgreSQL with pgvector", "importance": 0.6},
    {"content": "Alice prefers tabs over spaces when writing Go code", "importance": 0.4},
    {"content": "Release builds are signed with the hardware key in the safe", "pinned": True},
]


def test_user_prompt_submit_injects_the_relevant_memory_only(
    hook_env: dict[str, str], project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed(project, monkeypatch, MEMORIES)
    result = run_hook(
        "user-prompt-submit", prompt_payload("Which database does the team server use?", project), hook_env
    )
    text = injected(result, "UserPromptSubmit")
    assert text.startswith("Relevant memories (most relevant first):\n")
    assert "PostgreSQL with pgvector" in text
    assert "tabs over spaces" not in text and "hardware key" not in text


def test_user_prompt_submit_injects_nothing_for_an_off_topic_prompt(
    hook_env: dict[str, str], project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed(project, monkeypatch, MEMORIES)
    failed_open(run_hook("user-prompt-submit", prompt_payload("Capital of Australia?", project), hook_env))


def test_the_budget_bounds_the_injection(
    hook_env: dict[str, str], project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed(
        project,
        monkeypatch,
        [{"content": f"Team server fact {i}: the team server runs job {i}"} for i in range(8)],
    )
    payload = prompt_payload("team server fact", project)
    # the hash embedder counts words: the header is 4, each line about 14
    small = injected(run_hook("user-prompt-submit", payload, hook_env, "--budget", "25"), "UserPromptSubmit")
    large = injected(
        run_hook("user-prompt-submit", payload, {**hook_env, "MCP_MEMORY_HOOK_BUDGET": "2000"}),
        "UserPromptSubmit",
    )
    assert len(small.splitlines()) == 2  # the header and one memory
    assert len(large.splitlines()) == 9


def test_the_namespace_comes_from_the_payloads_cwd(
    hook_env: dict[str, str], project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed(project, monkeypatch, MEMORIES)
    other = tmp_path / "other-project"
    (other / ".git").mkdir(parents=True)
    failed_open(
        run_hook(
            "user-prompt-submit", prompt_payload("Which database does the team server use?", other), hook_env
        )
    )
    subdir = project / "src" / "api"
    subdir.mkdir(parents=True)
    text = injected(
        run_hook(
            "user-prompt-submit", prompt_payload("Which database does the team server use?", subdir), hook_env
        ),
        "UserPromptSubmit",
    )
    assert "PostgreSQL" in text


def test_session_start_injects_the_projects_memories_pinned_first(
    hook_env: dict[str, str], project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed(project, monkeypatch, MEMORIES)
    payload = {
        "session_id": "s",
        "transcript_path": "",
        "cwd": str(project),
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
    text = injected(run_hook("session-start", payload, hook_env), "SessionStart")
    lines = text.splitlines()
    assert lines[0] == "Relevant memories (most relevant first):"
    assert "hardware key" in lines[1] and "PostgreSQL" in lines[2] and "tabs over spaces" in lines[3]


def test_a_hook_run_as_another_user_injects_no_private_memory_of_the_first(
    hook_env: dict[str, str], project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed(
        project,
        monkeypatch,
        [
            {"content": "The team server admin password hint is the old office name"},
            {"content": "The team server runs behind Caddy on port 443", "privacy_scope": "public"},
        ],
        user="alice",
    )
    payload = prompt_payload("How is the team server set up?", project)
    alice = injected(
        run_hook("user-prompt-submit", payload, {**hook_env, "MCP_MEMORY_USER": "alice"}), "UserPromptSubmit"
    )
    assert "password hint" in alice and "Caddy" in alice
    bob = injected(
        run_hook("user-prompt-submit", payload, {**hook_env, "MCP_MEMORY_USER": "bob"}), "UserPromptSubmit"
    )
    assert "Caddy" in bob and "password" not in bob
    start = {"cwd": str(project), "hook_event_name": "SessionStart", "source": "startup"}
    assert (
        "password"
        not in run_hook("session-start", start, {**hook_env, "MCP_MEMORY_USER": "bob"}).stdout.decode()
    )


@pytest.mark.parametrize(
    "raw",
    [b"", b"not json", b"[1, 2]", b'{"prompt": 42}', b"\xff\xfe", json.dumps({"cwd": "/"}).encode()],
    ids=["empty", "text", "array", "prompt-not-a-string", "not-utf8", "no-prompt"],
)
def test_bad_stdin_fails_open(hook_env: dict[str, str], raw: bytes) -> None:
    failed_open(run_hook("user-prompt-submit", None, hook_env, raw=raw))


def test_a_broken_database_fails_open_and_is_logged(hook_env: dict[str, str], project: Path) -> None:
    db = Path(hook_env["MCP_MEMORY_DB_PATH"])
    db.parent.mkdir(parents=True)
    db.write_bytes(b"this is not a database" * 100)
    for name in ("user-prompt-submit", "session-start"):
        result = run_hook(name, prompt_payload("team server", project), hook_env)
        failed_open(result)
        assert b"skipped" in result.stderr
    log = (db.parent / "hooks.log").read_text()
    assert "hook user-prompt-submit failed open" in log and "Traceback" in log


def test_another_programs_database_fails_open_untouched(hook_env: dict[str, str], project: Path) -> None:
    db = Path(hook_env["MCP_MEMORY_DB_PATH"])
    db.parent.mkdir(parents=True)
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE visits (url TEXT)")
    before = db.read_bytes()
    failed_open(run_hook("user-prompt-submit", prompt_payload("team server", project), hook_env))
    assert db.read_bytes() == before


def test_a_stale_plugin_cache_is_rebuilt(
    hook_env: dict[str, str], project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed(project, monkeypatch, MEMORIES)
    payload = prompt_payload("Which database does the team server use?", project)
    assert "PostgreSQL" in injected(run_hook("user-prompt-submit", payload, hook_env), "UserPromptSubmit")
    cache = Path(hook_env["MCP_MEMORY_DB_PATH"]).parent / "hook-plugins.json"
    data = json.loads(cache.read_text())
    assert data["providers"]["embedder:hash"] == "mcp-memory-testing"
    data["providers"]["embedder:hash"] = "mcp-memory-minilm"  # as if the backend had moved
    cache.write_text(json.dumps(data))
    assert "PostgreSQL" in injected(run_hook("user-prompt-submit", payload, hook_env), "UserPromptSubmit")
    assert json.loads(cache.read_text())["providers"]["embedder:hash"] == "mcp-memory-testing"


def test_no_database_yet_is_silence_and_creates_nothing(hook_env: dict[str, str], project: Path) -> None:
    result = run_hook("user-prompt-submit", prompt_payload("team server", project), hook_env)
    failed_open(result)
    assert result.stderr == b""
    assert not Path(hook_env["MCP_MEMORY_DB_PATH"]).exists()


@pytest.mark.parametrize(
    ("args", "env", "injects"),
    [
        (["no-such-hook"], {}, False),
        (["user-prompt-submit", "--future-option", "x"], {}, True),
        (["user-prompt-submit", "--budget", "lots"], {}, True),
        (["user-prompt-submit", "--budget"], {}, False),
        (["user-prompt-submit"], {"MCP_MEMORY_STORE": "no-such-store"}, False),
        (["user-prompt-submit"], {"MCP_MEMORY_DEDUP_THRESHOLD": "two"}, False),
    ],
    ids=[
        "unknown-hook",
        "unknown-option",
        "bad-budget",
        "budget-without-value",
        "unknown-store",
        "bad-setting",
    ],
)
def test_usage_and_configuration_errors_never_exit_2(
    hook_env: dict[str, str],
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    env: dict[str, str],
    injects: bool,
) -> None:
    """Click's usage errors exit with 2, which for UserPromptSubmit blocks and erases the prompt."""
    seed(project, monkeypatch, MEMORIES)
    result = subprocess.run(
        [SCRIPT, "hook", *args],
        input=json.dumps(prompt_payload("Which database does the team server use?", project)).encode(),
        capture_output=True,
        env=base_env(**{**hook_env, **env}),
        timeout=120,
    )
    if injects:  # an option it does not know is ignored, the hook still works
        assert "PostgreSQL" in injected(result, "UserPromptSubmit")
    else:
        failed_open(result)
    assert result.stderr  # said why on stderr


def test_an_installed_command_that_cannot_start_still_exits_0(tmp_path: Path) -> None:
    """uv exits with 2 (Claude Code: block the prompt) when the clone has moved: `|| true` saves it."""
    entry = hook_entries(["/usr/bin/env", "uv", "run", "--project", str(tmp_path / "gone"), "mcp-memory"])[
        "UserPromptSubmit"
    ]
    result = subprocess.run(["bash", "-c", entry["command"]], input=b"{}", capture_output=True, timeout=60)
    assert result.returncode == 0 and result.stdout == b""


# -- storing decisions -------------------------------------------------------------------------------------
def stop_payload(project: Path, message: str | None, transcript: Path | None = None) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "session_id": "3f1c2a9e-0000-4000-8000-000000000002",
        "transcript_path": str(transcript or project / "none.jsonl"),
        "cwd": str(project),
        "permission_mode": "default",
        "hook_event_name": "Stop",
        "stop_hook_active": False,
    }
    if message is not None:
        payload["last_assistant_message"] = message
    return payload


def stored_contents(project: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    from mcp_memory_core.settings import Settings
    from mcp_memory_server.runtime.assembly import build_engine

    with monkeypatch.context() as patch:
        patch.chdir(project)
        engine = build_engine(Settings(create_database=False))
        try:
            return sorted(m.content for m in engine.list_memories(1000).memories)
        finally:
            engine.close()


REPLY = """I compared the options.

Decision: use PostgreSQL 16 with pgvector for the team server.
- **Remember:** the staging database is reset every Sunday night
```python
# Decision: this is code, not a decision
```
Everything else in this reply is ordinary text and must not be stored.
"""


def test_stop_stores_nothing_unless_enabled(hook_env: dict[str, str], project: Path) -> None:
    failed_open(run_hook("stop", stop_payload(project, REPLY), hook_env))
    assert not Path(hook_env["MCP_MEMORY_DB_PATH"]).exists()


def test_stop_stores_only_the_explicit_lines(
    hook_env: dict[str, str], project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = run_hook("stop", stop_payload(project, REPLY), hook_env, "--store-decisions")
    assert result.returncode == 0, result.stderr.decode()
    assert json.loads(result.stdout) == {
        "systemMessage": "mcp-memory remembered 2 decisions from this session."
    }
    assert stored_contents(project, monkeypatch) == [
        "Decision: use PostgreSQL 16 with pgvector for the team server.",
        "Remember: the staging database is reset every Sunday night",
    ]
    again = run_hook(
        "stop", stop_payload(project, REPLY), {**hook_env, "MCP_MEMORY_HOOK_STORE_DECISIONS": "true"}
    )
    failed_open(again)  # the same lines again: duplicates, nothing new, nothing said
    assert len(stored_contents(project, monkeypatch)) == 2


def write_transcript(path: Path, assistant_texts: list[str]) -> Path:
    lines = [{"type": "user", "message": {"role": "user", "content": "Decision: a user line is not stored"}}]
    for text in assistant_texts:
        lines.append(
            {
                "type": "assistant",
                "message": {"role": "assistant", "content": [{"type": "text", "text": text}]},
            }
        )
        lines.append(
            {
                "type": "assistant",
                "message": {"role": "assistant", "content": [{"type": "tool_use", "name": "Bash"}]},
            }
        )
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return path


def test_stop_reads_the_transcript_without_last_assistant_message_and_pre_compact_reads_all(
    hook_env: dict[str, str], project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    transcript = write_transcript(
        project / "t.jsonl",
        ["Decision: deploy on Tuesdays only", "Nothing to keep here.", "Remember: the VPN needs 2FA"],
    )
    result = run_hook("stop", stop_payload(project, None, transcript), hook_env, "--store-decisions")
    assert result.returncode == 0, result.stderr.decode()
    assert stored_contents(project, monkeypatch) == ["Remember: the VPN needs 2FA"]
    compact = {**stop_payload(project, None, transcript), "hook_event_name": "PreCompact", "trigger": "auto"}
    result = run_hook("pre-compact", compact, hook_env, "--store-decisions")
    assert result.returncode == 0, result.stderr.decode()
    assert stored_contents(project, monkeypatch) == [
        "Decision: deploy on Tuesdays only",
        "Remember: the VPN needs 2FA",
    ]


def test_stop_with_a_missing_transcript_fails_open(hook_env: dict[str, str], project: Path) -> None:
    failed_open(
        run_hook(
            "stop", stop_payload(project, None, project / "missing.jsonl"), hook_env, "--store-decisions"
        )
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Decision: use uv", [("decision", "Decision: use uv")]),
        ("  * **Decision**: keep the API stable", [("decision", "Decision: keep the API stable")]),
        ("1. remember: rotate keys monthly", [("remember", "Remember: rotate keys monthly")]),
        ("__Remember:__ tests run in CI", [("remember", "Remember: tests run in CI")]),
        ("We made a decision: none", []),
        ("Decision:", []),
        ("Decision: " + "x" * 1001, []),
        ("~~~\nDecision: fenced\n~~~\nDecision: after", [("decision", "Decision: after")]),
    ],
)
def test_decision_lines(text: str, expected: list[tuple[str, str]]) -> None:
    assert decision_lines([text]) == expected


def test_decision_lines_are_capped_per_message() -> None:
    found = decision_lines(["\n".join(f"Decision: number {i}" for i in range(25))])
    assert len(found) == 10


# -- the real model ----------------------------------------------------------------------------------------
@pytest.fixture
def minilm_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    yield {"MCP_MEMORY_DB_PATH": str(tmp_path / "data" / "memories.db"), "MCP_MEMORY_LOG_LEVEL": "WARNING"}


@pytest.mark.model
def test_end_to_end_with_minilm(
    minilm_env: dict[str, str], project: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Install into a settings file, then run the installed command line itself through bash, as
    Claude Code would, on the default stack (sqlite-vec, all-MiniLM-L6-v2, hybrid ranker)."""
    for key in [k for k in os.environ if k.startswith("MCP_MEMORY_")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("MCP_MEMORY_DB_PATH", minilm_env["MCP_MEMORY_DB_PATH"])
    seed(
        project,
        monkeypatch,
        [
            {"content": "We deploy the shop backend to Fly.io from the main branch"},
            {"content": "Grandma's birthday is on the 3rd of March"},
        ],
    )
    assert install("--project", str(project)).exit_code == 0
    hooks = json.loads((project / ".claude" / "settings.local.json").read_text())["hooks"]
    command = hooks["UserPromptSubmit"][0]["hooks"][0]["command"]
    payload = json.dumps(prompt_payload("how do we ship the backend to production?", project)).encode()
    result = subprocess.run(
        ["bash", "-c", command],
        input=payload,
        capture_output=True,
        env=base_env(**minilm_env),
        cwd=project,
        timeout=120,
    )
    text = injected(result, "UserPromptSubmit")
    assert "Fly.io" in text and "birthday" not in text
