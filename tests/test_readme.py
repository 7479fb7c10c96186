"""The README matches the program: every command of ``mcp-memory --help`` and every ``MCP_MEMORY_*``
setting is named in it, or in a page it links (docs/cli.md, a plugin's README …), so a user who reads
it finds everything the program offers; and its quick start's two commands install what it says: the
server alone, then the tests without torch, which CI runs after them."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path

import click

from mcp_memory_server.cli.main import cli
from mcp_memory_server.runtime.assembly import load_plugins
from mcp_memory_server.runtime.settings import ServerSettings
from mcp_memory_server.runtime.variables import OTHER_VARIABLES, known_variables

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
CI = ROOT / ".ci" / "run"
# What only developing mcp-memory needs: none of it belongs in the server's environment.
DEVELOPMENT_TOOLS = {"pytest", "nox", "ruff", "mypy", "playwright", "pgserver", "import-linter", "torch"}
LINK = re.compile(r"\]\(([^)#\s]+\.md)(?:#[^)]*)?\)")
# A full name, or a shorthand for a sibling of the full name before it in the same line:
# "`MCP_MEMORY_TTL_WORKING` / `_EPISODIC`" names MCP_MEMORY_TTL_EPISODIC too.
NAME = re.compile(r"MCP_MEMORY_[A-Z0-9_]*[A-Z0-9]|(?<![A-Za-z0-9])_[A-Z](?:[A-Z0-9_]*[A-Z0-9])?")


def linked_pages() -> list[Path]:
    """The README and the markdown pages of this repository it links."""
    pages = [README]
    for target in LINK.findall(README.read_text(encoding="utf-8")):
        path = (ROOT / target).resolve()
        if path.is_file() and path not in pages:
            pages.append(path)
    return pages


@cache
def documented_text() -> str:
    return "\n".join(page.read_text(encoding="utf-8") for page in linked_pages())


def named_variables(text: str) -> set[str]:
    """The ``MCP_MEMORY_*`` names ``text`` spells, shorthands expanded: ``_SUFFIX`` after
    ``MCP_MEMORY_A_B`` in one line names ``MCP_MEMORY_A_SUFFIX`` and ``MCP_MEMORY_SUFFIX`` alike (the
    reader sees which from the table)."""
    names: set[str] = set()
    for line in text.splitlines():
        full = None
        for match in NAME.findall(line):
            if match.startswith("MCP_MEMORY_"):
                full = match
                names.add(match)
            elif full is not None:
                parts = full.split("_")
                names.update("_".join(parts[:cut]) + match for cut in range(2, len(parts)))
    return names


def commands(group: click.Group, prefix: str = "") -> list[str]:
    """Every command line of the group: ``add``, ``token create`` …"""
    found = []
    for name, command in sorted(group.commands.items()):
        if command.hidden:
            continue
        found.append(prefix + name)
        if isinstance(command, click.Group):
            found.extend(commands(command, f"{prefix}{name} "))
    return found


def test_every_command_is_in_the_readmes_command_list() -> None:
    """The README's CLI section lists each command as ``mcp-memory NAME …`` (a group's subcommands
    may share its line: ``token create … | token list …``)."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("\n## CLI") :]
    section = section[: section.index("\n## ", 1)]
    missing = [
        name
        for name in commands(cli)
        if not re.search(rf"(mcp-memory|\|) {re.escape(name)}(\s|$)", section, flags=re.MULTILINE)
    ]
    assert missing == [], f"commands missing from the README's CLI section: {missing}"


def test_every_option_of_every_command_is_documented() -> None:
    """``--help``'s options, each named in the README or a page it links."""
    text = documented_text()
    missing = []
    for name in commands(cli):
        command: click.Command = cli
        for part in name.split():
            command = command.commands[part]  # type: ignore[attr-defined]
        for param in command.params:
            if isinstance(param, click.Option) and not param.hidden:
                spelled = "|".join(re.escape(opt) for opt in param.opts)
                if not re.search(rf"{name}\b[^\n]*(?<![\w-])({spelled})(?![\w-])", text):
                    missing.append(f"{name} {max(param.opts, key=len)}")
    assert missing == [], f"options missing from the README and the pages it links: {missing}"


def test_every_setting_is_documented() -> None:
    """Core's and the server's settings, and each installed plugin's settings_model."""
    settings = known_variables(load_plugins(ServerSettings())) - OTHER_VARIABLES
    missing = sorted(settings - named_variables(documented_text()))
    assert missing == [], f"settings missing from the README and the pages it links: {missing}"


def test_the_shorthand_is_read_as_the_table_writes_it() -> None:
    assert {"MCP_MEMORY_TTL_EPISODIC", "MCP_MEMORY_HYBRID_K"} <= named_variables(
        "| `MCP_MEMORY_TTL_WORKING` / `_EPISODIC` | x |\n| `MCP_MEMORY_HYBRID_METHOD` / `_K` |"
    )
    assert "MCP_MEMORY_TTL_EPISODIC" not in named_variables("`_EPISODIC` alone\n`MCP_MEMORY_TTL_WORKING`")


def quick_start_commands() -> list[str]:
    """The commands of the README's quick start block, comments dropped."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("\n## Quick start") :]
    start = section.index("```bash\n") + len("```bash\n")
    block = section[start : section.index("```", start)]
    return [line.split("#", 1)[0].strip() for line in block.splitlines() if line.strip()]


def test_the_servers_first_run_installs_no_development_tool() -> None:
    """``uv run mcp-memory`` on a clone installs the root project with uv's default groups: the
    locked set ``uv export`` prints for them (the workspace's own packages left out) holds what the
    server runs on and no test, lint or type tool."""
    uv = shutil.which("uv")
    assert uv is not None, "uv is not on PATH: install it (README, Quick start) to run this test"
    exported = subprocess.run(
        [uv, "export", "--frozen", "--no-hashes", "--no-header", "--no-annotate", "--no-emit-workspace"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    names = {re.split(r"[=<>;\[ ]", line)[0] for line in exported.splitlines()}
    assert {"mcp", "onnxruntime", "sqlite-vec", "uvicorn"} <= names
    assert names & DEVELOPMENT_TOOLS == set()


def test_the_default_test_run_installs_no_torch() -> None:
    """``nox`` without ``-s`` runs the selected sessions; the one that installs torch is not one."""
    listed = subprocess.run(
        [sys.executable, "-m", "nox", "--list", "--json", "--noxfile", str(ROOT / "noxfile.py")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    selected = {session["name"] for session in json.loads(listed)}
    assert {"tests", "conformance", "lint", "typecheck"} <= selected
    assert "sentence_transformers" not in selected


def test_ci_runs_the_readmes_test_command_then_the_torch_session() -> None:
    """.ci/run runs the quick start's test command as written, then the session it leaves out."""
    [test_command] = [command for command in quick_start_commands() if "nox" in command]
    ci_lines = [line.strip() for line in CI.read_text(encoding="utf-8").splitlines()]
    assert test_command in ci_lines
    assert f"{test_command} -s sentence_transformers" in ci_lines
    assert ci_lines.index(test_command) < ci_lines.index(f"{test_command} -s sentence_transformers")
