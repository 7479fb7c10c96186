"""``mcp-memory config CLIENT``: the server's entry for an MCP client's configuration file, printed or
merged into the real file (issue 16).

The pure part lives here (how this machine launches the server, each client's file and format, the
merge); ``cli/config.py`` is the command. Nothing here runs at server start-up: ``tomlkit`` is imported
only when a Codex file is edited.

Where each client keeps its servers, checked against its documentation (2026):

- Claude Code: project scope ``.mcp.json`` at the project root, user scope ``~/.claude.json``, both
  with a top-level ``mcpServers`` object; ``claude mcp add`` writes ``"type": "stdio"`` for a local
  server (code.claude.com/docs/en/mcp, "Configuration scopes").
- Claude Desktop: ``claude_desktop_config.json`` in ``~/Library/Application Support/Claude/`` (macOS),
  ``%APPDATA%\\Claude\\`` (Windows), ``~/.config/Claude/`` (Linux, the unofficial builds),
  ``mcpServers`` (the app's Settings > Developer > Edit Config; claudecodeguides.com and
  automatelab.tech guides to claude_desktop_config.json; one other guide says ~/.config/claude-desktop/).
- Cursor: ``~/.cursor/mcp.json`` (global) or ``.cursor/mcp.json`` in the project, ``mcpServers``
  (cursor.com/docs/mcp).
- VS Code: ``.vscode/mcp.json`` in the workspace; the top-level key is ``servers`` (not
  ``mcpServers``) and a local server needs ``"type": "stdio"``; the file may hold ``inputs`` too, and
  VS Code accepts comments in it (code.visualstudio.com/docs/copilot/reference/mcp-configuration).
- Codex: ``~/.codex/config.toml`` (``$CODEX_HOME/config.toml``), or ``.codex/config.toml`` in a
  trusted project; one ``[mcp_servers.<name>]`` table per server with ``command``, ``args`` and
  ``env`` (an inline table or a ``[mcp_servers.<name>.env]`` table); Codex keeps per-tool approvals in
  ``[mcp_servers.<name>.tools.<tool>]`` (developers.openai.com/codex/config-reference; openai/codex
  docs/config.md).
"""

from __future__ import annotations

import os
import re
import sys
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from .config_files import ConfigFileError, dump_json, json_text, load_json_object, read_config, replace_config
from .launch import Launch

ClientConfigError = ConfigFileError  # the name callers catch


# -- environment for the server ----------------------------------------------------------------------
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def parse_env(pairs: Sequence[str], *, cwd: Path | None = None) -> dict[str, str]:
    """``KEY=VALUE`` pairs as a dict (a later pair wins). A path in ``MCP_MEMORY_*_PATH``,
    ``*_DIR`` or ``MCP_MEMORY_VAULT`` is made absolute: the client starts the server elsewhere."""
    env: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not _ENV_NAME.fullmatch(name):
            raise ClientConfigError(
                f"--env takes NAME=VALUE (for example MCP_MEMORY_DB_PATH=/data/memories.db); got {pair!r}."
            )
        if _is_path_setting(name) and value and value != ":memory:":
            value = os.path.abspath(Path(cwd or Path.cwd(), Path(value).expanduser()))
        env[name] = value
    return env


def _is_path_setting(name: str) -> bool:
    upper = name.upper()
    return upper.startswith("MCP_MEMORY_") and (
        upper.endswith(("_PATH", "_DIR")) or upper == "MCP_MEMORY_VAULT"
    )


_SERVER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")


def check_server_name(name: str) -> str:
    if not _SERVER_NAME.fullmatch(name):
        raise ClientConfigError(
            f"--name must be letters, digits, '-' or '_' (at most 64, starting with a letter or digit); "
            f"got {name!r}."
        )
    return name


# -- the clients ---------------------------------------------------------------------------------------
Scope = Literal["user", "project"]


@dataclass(frozen=True)
class Client:
    key: str
    title: str
    file_format: Literal["json", "toml"]
    servers_key: str
    stdio_type: bool  # the entry says "type": "stdio"
    user_file: Callable[[], Path] | None
    project_file: str | None  # relative to the project directory

    def config_path(self, scope: Scope, project_dir: Path) -> Path:
        if scope == "project":
            if self.project_file is None:
                raise ClientConfigError(
                    f"{self.title} has no per-project configuration; leave out --project."
                )
            return project_dir / self.project_file
        if self.user_file is None:
            raise ClientConfigError(f"{self.title} has no user configuration file here.")
        return self.user_file()

    def default_scope(self) -> Scope:
        return "user" if self.user_file is not None else "project"

    def entry(self, launch: Launch, env: Mapping[str, str]) -> dict[str, Any]:
        """The server's entry, in the order the client's documentation shows its fields."""
        entry: dict[str, Any] = {"type": "stdio"} if self.stdio_type else {}
        entry["command"] = launch.command
        entry["args"] = list(launch.args)
        if env:
            entry["env"] = dict(env)
        return entry


def _claude_desktop_file() -> Path:
    if sys.platform == "darwin":
        folder = Path.home() / "Library" / "Application Support" / "Claude"
    elif sys.platform == "win32":
        folder = Path(os.environ.get("APPDATA") or Path.home() / "AppData" / "Roaming") / "Claude"
    else:
        folder = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "Claude"
    return folder / "claude_desktop_config.json"


def _codex_file() -> Path:
    home = os.environ.get("CODEX_HOME")
    return (Path(home).expanduser() if home else Path.home() / ".codex") / "config.toml"


CLIENTS: dict[str, Client] = {
    client.key: client
    for client in (
        Client(
            "claude-code",
            "Claude Code",
            "json",
            "mcpServers",
            stdio_type=True,
            user_file=lambda: Path.home() / ".claude.json",
            project_file=".mcp.json",
        ),
        Client(
            "claude-desktop",
            "Claude Desktop",
            "json",
            "mcpServers",
            stdio_type=False,
            user_file=_claude_desktop_file,
            project_file=None,
        ),
        Client(
            "cursor",
            "Cursor",
            "json",
            "mcpServers",
            stdio_type=False,
            user_file=lambda: Path.home() / ".cursor" / "mcp.json",
            project_file=".cursor/mcp.json",
        ),
        Client(
            "vscode",
            "VS Code",
            "json",
            "servers",
            stdio_type=True,
            user_file=None,  # the user profile's mcp.json moves with VS Code profiles: --config-file
            project_file=".vscode/mcp.json",
        ),
        Client(
            "codex",
            "Codex",
            "toml",
            "mcp_servers",
            stdio_type=False,
            user_file=_codex_file,
            project_file=".codex/config.toml",
        ),
    )
}


# -- printing --------------------------------------------------------------------------------------------
def snippet(client: Client, name: str, entry: Mapping[str, Any]) -> str:
    """The text to paste into an empty configuration file (or merge into an existing one)."""
    if client.file_format == "json":
        return dump_json({client.servers_key: {name: entry}}) + "\n"
    import tomlkit

    document = tomlkit.document()
    servers = tomlkit.table(is_super_table=True)
    servers[name] = _toml_table(entry)
    document[client.servers_key] = servers
    return tomlkit.dumps(document).rstrip("\n") + "\n"


def claude_add_command(name: str, entry: Mapping[str, Any], scope: Scope) -> str:
    """The same entry through Claude Code's own command. The name comes first: ``-e`` takes
    several values and would swallow it."""
    import shlex

    words = ["claude", "mcp", "add", name, "--scope", scope]
    for key, value in entry.get("env", {}).items():
        words += ["-e", f"{key}={value}"]
    return shlex.join([*words, "--", entry["command"], *entry["args"]])


# -- merging into a real file ------------------------------------------------------------------------
Action = Literal["created", "added", "unchanged", "replaced"]


@dataclass(frozen=True)
class InstallResult:
    action: Action
    file: Path
    backup: Path | None


def install_server(
    client: Client,
    path: Path,
    name: str,
    entry: Mapping[str, Any],
    *,
    force: bool = False,
    now: datetime | None = None,
) -> InstallResult:
    """Merge ``entry`` as server ``name`` into the client's file at ``path``.

    Never rewrites a file it cannot parse; keeps every other server and key (for Codex, the comments
    and layout too); an entry of the same name that differs is replaced only with ``force``, and
    then only the fields mcp-memory writes (command, args, env, type) change, the rest of the entry
    (Codex tool approvals, a timeout) stays. A changed file is first copied to
    ``<file>.bak-<YYYYmmdd-HHMMSS>``; the new one replaces it atomically.
    """
    path = path.expanduser()
    target, raw, text = read_config(path)
    merge = _merge_json if client.file_format == "json" else _merge_toml
    new_text, action = merge(client, text, path, name, dict(entry), force)
    if action == "unchanged":
        return InstallResult("unchanged", path, None)
    saved = replace_config(target, raw, new_text, now)
    return InstallResult("created" if raw is None else action, path, saved)


def _action(
    client: Client, path: Path, found: tuple[Any, str], name: str, entry: Mapping[str, Any], force: bool
) -> Action:
    """What merging ``entry`` as server ``name`` into the file's servers does: "added" (a new name),
    "unchanged" (the same entry is there), "replaced" (a different one, with ``force``; refused without
    it). ``found`` is what the file holds under the servers key and what it must be (a JSON object, a
    TOML table): anything else is refused."""
    servers, kind = found
    if not isinstance(servers, dict):
        raise ClientConfigError(f"{client.servers_key!r} in {path} is not {kind}; left untouched.")
    if name not in servers:
        return "added"
    differ = _same(client, servers[name], entry)
    if not differ:
        return "unchanged"
    if not force:
        raise _conflict(client, path, name, differ)
    return "replaced"


def _same(client: Client, existing: Any, wanted: Mapping[str, Any]) -> list[str]:
    """The fields of ``wanted`` that ``existing`` does not match (a missing env is an empty one)."""
    if not isinstance(existing, Mapping):
        return ["the whole entry"]
    defaults: dict[str, Any] = {"env": {}, "args": []}
    if client.stdio_type:
        defaults["type"] = "stdio"
    differ = [key for key in wanted if existing.get(key, defaults.get(key)) != wanted[key]]
    if "env" not in wanted and existing.get("env"):
        differ.append("env")
    return differ


def _conflict(client: Client, path: Path, name: str, fields: list[str]) -> ClientConfigError:
    return ClientConfigError(
        f"{path} already has a server {name!r} with a different {', '.join(fields)}; "
        f"run again with --force to replace it, or choose another --name."
    )


def _merge_json(
    client: Client, text: str, path: Path, name: str, entry: dict[str, Any], force: bool
) -> tuple[str, Action]:
    hint = " (VS Code allows comments there; add the snippet by hand)" if client.key == "vscode" else ""
    data = load_json_object(text, path, hint)
    servers = data.setdefault(client.servers_key, {})
    action = _action(client, path, (servers, "a JSON object"), name, entry, force)
    if action == "unchanged":
        return text, action
    if action == "replaced":
        kept = servers[name] if isinstance(servers[name], dict) else {}
        if "env" not in entry:
            kept.pop("env", None)
        servers[name] = {**kept, **entry}
    else:
        servers[name] = entry
    return json_text(data, text), action


def _merge_toml(
    client: Client, text: str, path: Path, name: str, entry: dict[str, Any], force: bool
) -> tuple[str, Action]:
    try:
        before = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ClientConfigError(f"{path} is not valid TOML ({exc}); left untouched.") from None
    servers = before.get(client.servers_key, {})
    action = _action(client, path, (servers, "a table"), name, entry, force)
    if action == "unchanged":
        return text, action
    if action == "replaced":
        candidates: list[Callable[[], str]] = [lambda: _toml_replaced(text, client.servers_key, name, entry)]
    else:
        # Second choice: the file as it was with the table appended (valid beside dotted keys and
        # tables defined out of order, where tomlkit may put it in the wrong place). The check
        # below decides which is right.
        appended = text.rstrip("\n") + ("\n\n" if text.strip() else "") + snippet(client, name, entry)
        candidates = [lambda: _toml_added(text, client.servers_key, name, entry), lambda: appended]

    expected = {**before, client.servers_key: {**servers, name: _expected_entry(servers.get(name), entry)}}
    for make in candidates:
        try:
            candidate = make().rstrip("\n") + "\n"
            if tomllib.loads(candidate) == expected:
                return candidate, action
        except Exception:  # tomlkit refusing an edit, or a result that does not parse: try the next
            continue
    raise ClientConfigError(
        f"Cannot add the server to {path} without disturbing its layout; left untouched: add the "
        "snippet from `mcp-memory config codex` by hand."
    )


def _toml_added(text: str, servers_key: str, name: str, entry: Mapping[str, Any]) -> str:
    import tomlkit

    document = tomlkit.parse(text)
    if servers_key in document:
        document[servers_key][name] = _toml_table(entry, trailing_newline=True)
    else:
        holder = tomlkit.table(is_super_table=True)
        holder[name] = _toml_table(entry)
        document[servers_key] = holder
    return tomlkit.dumps(document)


def _toml_replaced(text: str, servers_key: str, name: str, entry: Mapping[str, Any]) -> str:
    """Only the fields mcp-memory writes change; comments and the entry's other keys stay."""
    import tomlkit

    document = tomlkit.parse(text)
    table = document[servers_key][name]
    for key, value in _toml_table(entry).items():
        table[key] = value
    if "env" not in entry and "env" in table:
        del table["env"]
    return tomlkit.dumps(document)


def _expected_entry(existing: Any, entry: Mapping[str, Any]) -> dict[str, Any]:
    kept = {k: v for k, v in (existing or {}).items() if k != "env"} if isinstance(existing, dict) else {}
    return {**kept, **entry}


def _toml_table(entry: Mapping[str, Any], *, trailing_newline: bool = False) -> Any:
    import tomlkit

    table = tomlkit.table()
    for key, value in entry.items():
        if isinstance(value, Mapping):
            inline = tomlkit.inline_table()
            inline.update(value)
            table[key] = inline
        else:
            table[key] = value
    if trailing_newline:
        table.add(tomlkit.nl())
    return table
