"""How this machine starts the server: the command an MCP client (``mcp-memory config``) or a
Claude Code hook (``mcp-memory hooks install``) should run, absolute, chosen from how the running
command was started."""

from __future__ import annotations

import os
import shutil
import sys
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .config_files import ConfigFileError

SERVER_SCRIPT = "mcp-memory"
PUBLISHED_DISTRIBUTION = "mcp-memory-stack"  # see docs/names.md: never `uvx mcp-memory`


@dataclass(frozen=True)
class Launch:
    """The command a client runs to start the server over stdio, and why it was chosen."""

    command: str
    args: tuple[str, ...]
    how: str


def find_uv_workspace(start: Path) -> Path | None:
    """The uv workspace whose sources ``start`` lies in (a clone of mcp-memory), or None."""
    for folder in [start, *start.parents]:
        pyproject = folder / "pyproject.toml"
        if not pyproject.is_file():
            continue
        try:
            data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            continue
        if isinstance(data.get("tool", {}).get("uv", {}).get("workspace"), dict):
            return folder
    return None


class LaunchError(ConfigFileError):
    """No command on this machine would start the server: one sentence, nothing written."""


def _program(path: str | None) -> str | None:
    """``path`` made absolute if it is a file, else None."""
    if not path:
        return None
    absolute = os.path.abspath(path)
    return absolute if os.path.isfile(absolute) else None


def detect_launch(
    *,
    argv0: str | None = None,
    package_dir: Path | None = None,
    executable: str | None = None,
    which: Callable[[str], str | None] = shutil.which,
) -> Launch:
    """How a client should start the server that is running this command.

    In order: an ephemeral ``uvx`` environment (its path would vanish with uv's cache) → ``uvx --from
    mcp-memory-stack mcp-memory`` (``uv tool run`` when only uv is found); the sources of a uv workspace
    (a clone) → ``uv run --project CLONE mcp-memory`` (``--project`` keeps the client's working
    directory, so each project keeps its own namespace; ``--directory`` would put every project into
    one), when uv is found; the ``mcp-memory`` script that is running; the script beside this Python;
    else ``python -m mcp_memory_server``. Only a program that exists is named, by its absolute path
    (Claude Desktop on macOS does not start servers with the login shell's PATH); symlinks are kept (a
    ``uv tool``/pipx link survives an upgrade, its target may not). Raises :class:`LaunchError` when
    nothing would start.
    """
    argv0 = sys.argv[0] if argv0 is None else argv0
    package_dir = Path(__file__).resolve().parent if package_dir is None else package_dir
    executable = sys.executable if executable is None else executable
    script = Path(os.path.abspath(argv0)) if argv0 else None
    is_script = script is not None and script.name.lower() in (SERVER_SCRIPT, f"{SERVER_SCRIPT}.exe")
    found = which("uv")  # shutil.which answers only with a program that exists
    uv = os.path.abspath(found) if found else _program(os.environ.get("UV"))  # `uv run` sets $UV

    if is_script and script is not None and any(part.startswith("archive-v") for part in script.parts):
        uvx = which("uvx")
        return _from_uv_cache(os.path.abspath(uvx) if uvx else None, uv)
    # Installed (not a clone's sources): a project's own uv workspace around its .venv is not ours.
    installed = "site-packages" in package_dir.parts
    workspace = None if installed else find_uv_workspace(package_dir)
    if workspace is not None and uv is not None:
        return Launch(
            uv, ("run", "--project", str(workspace), SERVER_SCRIPT), f"uv run from the workspace {workspace}"
        )
    if is_script and script is not None and _program(str(script)):
        return Launch(str(script), (), "the mcp-memory script running this command")
    if executable:
        beside = Path(executable).parent / SERVER_SCRIPT
        for candidate in (beside, beside.with_suffix(".exe")):
            if _program(str(candidate)):
                return Launch(str(candidate), (), "the mcp-memory script beside this Python")
    python = _program(executable)
    if python is None:
        raise LaunchError(
            "Cannot find a command that starts mcp-memory on this machine (no uv, no mcp-memory script, "
            "no Python path); install it with `uv tool install mcp-memory-stack` and run this again."
        )
    return Launch(python, ("-m", "mcp_memory_server"), "this Python (no mcp-memory script found)")


def _from_uv_cache(uvx: str | None, uv: str | None) -> Launch:
    how = "uvx (this command runs from uv's cache)"
    if uvx is not None:
        return Launch(uvx, ("--from", PUBLISHED_DISTRIBUTION, SERVER_SCRIPT), how)
    if uv is not None:  # `uvx` is `uv tool run`
        return Launch(uv, ("tool", "run", "--from", PUBLISHED_DISTRIBUTION, SERVER_SCRIPT), how)
    raise LaunchError(
        "This mcp-memory runs from uv's cache, and neither uvx nor uv is on this PATH: install it with "
        "`uv tool install mcp-memory-stack` (its script stays) and run this again."
    )
