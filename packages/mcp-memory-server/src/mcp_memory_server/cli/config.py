"""``mcp-memory config CLIENT [--install]``: connect a client. The logic is in
``integrations/clients.py``; this module is the command, added to the group by ``main.py``."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NoReturn

import click

from .common import EXIT_ERROR, emit_json, fail

CLIENT_NAMES = ("claude-code", "claude-desktop", "cursor", "vscode", "codex")


@click.command("config")
@click.argument("client", type=click.Choice(CLIENT_NAMES, case_sensitive=False), metavar="CLIENT")
@click.option("--install", is_flag=True, help="Merge the server into the client's configuration file.")
@click.option(
    "--project",
    is_flag=True,
    help="The project's file in the current directory (.mcp.json, .cursor/mcp.json, .codex/config.toml) "
    "instead of the user's. VS Code has only the project's (.vscode/mcp.json).",
)
@click.option("--name", default="memory", show_default=True, help="The server's key in the client's file.")
@click.option(
    "--env",
    "env_pairs",
    multiple=True,
    metavar="NAME=VALUE",
    help="An environment variable for the server, e.g. MCP_MEMORY_DB_PATH=/data/memories.db (repeatable; "
    "relative paths are made absolute).",
)
@click.option(
    "--config-file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The client's file to edit, instead of its usual place.",
)
@click.option("--force", is_flag=True, help="With --install: replace an entry of the same name that differs.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def config_command(
    client: str,
    install: bool,
    project: bool,
    name: str,
    env_pairs: tuple[str, ...],
    config_file: Path | None,
    force: bool,
    as_json: bool,
) -> None:
    """Print the entry that starts this server for CLIENT (claude-code, claude-desktop, cursor, vscode,
    codex), or with --install add it to the client's configuration file.

    The command is the one that runs this mcp-memory: `uv run --project CLONE mcp-memory` from a
    clone (when uv is found), else the mcp-memory script's absolute path, else this Python with -m;
    refused when none of them exists. --install keeps every other server and setting,
    backs the file up first (<file>.bak-<time>), refuses a file it cannot parse, and changes nothing
    when the entry is already there.
    """
    from ..integrations.clients import (
        CLIENTS,
        ClientConfigError,
        check_server_name,
        claude_add_command,
        install_server,
        parse_env,
        snippet,
    )
    from ..integrations.launch import detect_launch

    spec = CLIENTS[client.lower()]
    try:
        check_server_name(name)
        env = parse_env(env_pairs)
        scope = "project" if project else spec.default_scope()
        path = config_file.expanduser().absolute() if config_file else spec.config_path(scope, Path.cwd())
        launch = detect_launch()
        entry = spec.entry(launch, env)
        text = snippet(spec, name, entry)
        result: dict[str, Any] = {
            "client": spec.key,
            "name": name,
            "file": str(path),
            "launch": launch.how,
            "entry": entry,
            "snippet": text,
        }
        if install:
            outcome = install_server(spec, path, name, entry, force=force)
            result |= {"action": outcome.action, "backup": str(outcome.backup) if outcome.backup else None}
        else:
            result["action"] = "printed"
    except ClientConfigError as exc:
        _fail(str(exc), as_json)

    if spec.key == "claude-code":
        result["claude_command"] = claude_add_command(name, entry, scope)
    if as_json:
        emit_json(result)
        return
    if not install:
        click.echo(text, nl=False)
        click.echo(f"# {spec.title}: merge this into {path} (or run again with --install).", err=True)
        if spec.key == "claude-code":
            click.echo(f"# The same with Claude Code's own command: {result['claude_command']}", err=True)
        return
    click.echo(_install_message(spec.title, name, result))


def _install_message(title: str, name: str, result: dict[str, Any]) -> str:
    file, backup = result["file"], result["backup"]
    saved = f" (the previous file is saved as {backup})" if backup else ""
    messages = {
        "created": f"Created {file} with the server {name!r}.",
        "added": f"Added the server {name!r} to {file}{saved}.",
        "replaced": f"Replaced the server {name!r} in {file}{saved}.",
        "unchanged": f"{file} already has this server {name!r}: nothing changed.",
    }
    restart = "" if result["action"] == "unchanged" else f" Restart {title} to use it."
    return messages[result["action"]] + restart


def _fail(message: str, as_json: bool) -> NoReturn:
    if as_json:
        emit_json({"action": "failed", "error": message})
    fail(message, EXIT_ERROR)
