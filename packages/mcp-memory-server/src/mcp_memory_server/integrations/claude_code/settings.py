"""``mcp-memory hooks install|uninstall``: our entries in Claude Code's ``settings.json`` (issue 16).

Claude Code reads hooks from ``~/.claude/settings.json`` (user), ``.claude/settings.json`` (project,
usually committed) and ``.claude/settings.local.json`` (project, personal), all of the shape
``{"hooks": {"<Event>": [{"matcher": "...", "hooks": [{"type": "command", "command": "...",
"timeout": <seconds>}]}]}}``; ``matcher`` may be left out for events that have none
(UserPromptSubmit, Stop) and then matches everything (code.claude.com/docs/en/hooks, "Configuration";
the sources of the whole contract are in :mod:`.hooks`).

What this module promises about the user's file: every other key, event, group and handler stays
as it was; the file is copied into the user's state folder (``backups/``, never the repository)
before it changes, unless it held nothing but our hooks, and replaced atomically (its mode kept); a file that is not a JSON object (or whose ``hooks`` is not one) is
refused in one sentence and left untouched; installing what is already there changes nothing.
A handler is ours when its command runs ``mcp-memory hook <name>`` (whatever the path before it), so
``uninstall`` removes exactly those and a reinstall from another path replaces them.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from ..config_files import ConfigFileError, json_text, load_json_object, read_config, replace_config
from ..launch import SERVER_SCRIPT, detect_launch

# event -> (our command's name, Claude Code's timeout for it in seconds). A hook that times out is a
# non-blocking error for Claude Code: the prompt goes on without the context.
READ_EVENTS = {"SessionStart": ("session-start", 15), "UserPromptSubmit": ("user-prompt-submit", 15)}
WRITE_EVENTS = {"Stop": ("stop", 30), "PreCompact": ("pre-compact", 30)}
HOOK_NAMES = tuple(name for name, _ in (*READ_EVENTS.values(), *WRITE_EVENTS.values()))
DEFAULT_BUDGET = 800

_OURS = re.compile(
    r"(?:^|[\s/\\'\"])"
    + re.escape(SERVER_SCRIPT)
    + r"(?:\.exe)?['\"]?\s+hook\s+(?:"
    + "|".join(re.escape(name) for name in HOOK_NAMES)
    + r")(?:\s|$)"
)


HookSettingsError = ConfigFileError  # the name callers catch


# -- the command Claude Code runs -------------------------------------------------------------------
def launch_command(**how: Any) -> list[str]:
    """The absolute command that starts this machine's mcp-memory, as ``mcp-memory config`` chooses
    it (:func:`..launch.detect_launch`; ``--project`` keeps Claude Code's working directory, hence the
    project's namespace), as one list of words."""
    launch = detect_launch(**how)
    return [launch.command, *launch.args]


def hook_entries(
    launch: list[str], *, budget: int = DEFAULT_BUDGET, store_decisions: bool = False
) -> dict[str, dict[str, Any]]:
    """Event -> our handler (``{"type": "command", "command": ..., "timeout": ...}``). The Stop and
    PreCompact handlers only with ``store_decisions`` (they exist only to store decisions)."""
    events = {**READ_EVENTS, **(WRITE_EVENTS if store_decisions else {})}
    entries = {}
    for event, (name, timeout) in events.items():
        words = [*launch, "hook", name]
        if event in READ_EVENTS and budget != DEFAULT_BUDGET:
            words += ["--budget", str(budget)]
        if event in WRITE_EVENTS:
            words.append("--store-decisions")
        # `|| true`: a command that cannot even start (uv exits with 2 when the clone has moved) must
        # not block the prompt; Claude Code runs the command through a shell.
        entries[event] = {"type": "command", "command": f"{shlex.join(words)} || true", "timeout": timeout}
    return entries


def is_ours(handler: Any) -> bool:
    return (
        isinstance(handler, dict)
        and isinstance(handler.get("command"), str)
        and bool(_OURS.search(handler["command"]))
    )


# -- where the file is -------------------------------------------------------------------------------
Level = Literal["local", "shared", "user"]
# level -> (its option, what it is). Claude Code runs the hooks of every level, so ours live in one.
LEVELS: dict[Level, tuple[str, str]] = {
    "local": ("--local", "this project's personal settings, not committed"),
    "shared": ("--shared", "this project's shared settings, usually committed"),
    "user": ("--user", "your user settings, for every project"),
}


def settings_path(level: Level, project: Path | None = None) -> Path:
    if level == "user":
        return Path.home() / ".claude" / "settings.json"
    folder = (project or Path.cwd()).expanduser().absolute()
    return folder / ".claude" / ("settings.local.json" if level == "local" else "settings.json")


def installed_at(level: Level, project: Path | None = None) -> list[tuple[Level, Path]]:
    """The levels other than ``level`` whose settings file (for ``project``) has hooks of ours. A
    file that cannot be read does not count: Claude Code runs no hook from it either."""
    here = settings_path(level, project)
    found: list[tuple[Level, Path]] = []
    for other in LEVELS:
        path = settings_path(other, project)
        if other != level and path != here and _has_ours(path):
            found.append((other, path))
    return found


def refuse_a_second_level(level: Level, project: Path | None = None) -> None:
    """Raise HookSettingsError when our hooks are installed at another level: Claude Code would run
    both, and every memory would be injected twice."""
    for other, path in installed_at(level, project):
        flag = LEVELS[other][0] + (
            f" --project {shlex.quote(str(project))}" if project and other != "user" else ""
        )
        raise HookSettingsError(
            f"mcp-memory's hooks are already installed in {path} ({LEVELS[other][1]}), and Claude Code "
            f"runs the hooks of every settings file, so each memory would be injected twice: keep those, "
            f"or remove them first with `mcp-memory hooks uninstall {flag}`; nothing changed."
        )


def _has_ours(path: Path) -> bool:
    try:
        data = _parse(read_config(path)[2], path)
    except ConfigFileError:
        return False
    hooks = data.get("hooks") or {}
    return any(
        is_ours(handler)
        for groups in hooks.values()
        if isinstance(groups, list)
        for group in groups
        if isinstance(group, dict) and isinstance(group.get("hooks"), list)
        for handler in group["hooks"]
    )


def backup_folder() -> Path:
    """Where a settings file is backed up: the user's state folder, never the repository."""
    import platformdirs

    return Path(platformdirs.user_state_dir("mcp-memory", appauthor=False)) / "backups"


# -- merging -----------------------------------------------------------------------------------------
Action = Literal["created", "updated", "unchanged", "removed", "absent"]


@dataclass(frozen=True)
class SettingsResult:
    action: Action
    file: Path
    backup: Path | None
    events: tuple[str, ...]  # the events whose handlers were added, replaced or removed
    deleted: bool = False  # uninstall left nothing else in the file, so the file is gone


def install_hooks(
    path: Path, entries: Mapping[str, dict[str, Any]], *, now: datetime | None = None
) -> SettingsResult:
    """Merge ``entries`` into the settings file at ``path``: each event gets our handler, as a group
    of its own appended to the event's list; a handler of ours that differs (another path, budget or
    option) is removed first, wherever it is; one that is already right stays where it is. Our Stop
    and PreCompact handlers go when ``entries`` has none (installed again without --store-decisions)."""
    return _edit(path, lambda data: _install(data, entries), now, "updated")


def uninstall_hooks(path: Path, *, now: datetime | None = None) -> SettingsResult:
    """Remove every handler of ours (and the groups, events and ``hooks`` key left empty by it)."""
    if not path.expanduser().exists():
        return SettingsResult("absent", path, None, ())
    return _edit(path, _uninstall, now, "removed")


def _install(data: dict[str, Any], entries: Mapping[str, dict[str, Any]]) -> tuple[str, ...]:
    hooks = data.setdefault("hooks", {})
    changed: list[str] = []
    for event in (*READ_EVENTS, *WRITE_EVENTS):
        wanted = entries.get(event)
        groups = hooks.get(event, [])
        present = (
            any(isinstance(group, dict) and wanted in group.get("hooks", []) for group in groups)
            if wanted is not None
            else False
        )
        removed = _remove_ours(hooks, event, keep=wanted if present else None)
        if wanted is not None and not present:
            hooks.setdefault(event, []).append({"hooks": [wanted]})
        if removed or (wanted is not None and not present):
            changed.append(event)
    if not hooks:
        del data["hooks"]
    return tuple(changed)


def _uninstall(data: dict[str, Any]) -> tuple[str, ...]:
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return ()
    changed = tuple(event for event in list(hooks) if _remove_ours(hooks, event, keep=None))
    if not hooks:
        del data["hooks"]
    return changed


def _remove_ours(hooks: dict[str, Any], event: str, *, keep: dict[str, Any] | None) -> bool:
    """Drop our handlers of ``event`` except one equal to ``keep``; drop groups and the event when
    that leaves them empty. True if anything was dropped."""
    groups = hooks.get(event)
    if not isinstance(groups, list):
        return False
    removed = False
    kept_groups = []
    for group in groups:
        handlers = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(handlers, list):
            kept_groups.append(group)
            continue
        remaining = [h for h in handlers if not is_ours(h) or (keep is not None and h == keep)]
        if len(remaining) != len(handlers):
            removed = True
            if not remaining:
                continue
            group = {**group, "hooks": remaining}
        kept_groups.append(group)
    if kept_groups:
        hooks[event] = kept_groups
    else:
        del hooks[event]
    return removed


def _edit(
    path: Path,
    change: Callable[[dict[str, Any]], tuple[str, ...]],
    now: datetime | None,
    action: Action,
) -> SettingsResult:
    path = path.expanduser()
    target, raw, text = read_config(path)
    data = _parse(text, path)
    before = json.loads(json.dumps(data))
    events = change(data)
    if data == before:
        return SettingsResult("unchanged", path, None, ())
    theirs = json.loads(json.dumps(before))
    _uninstall(theirs)
    if not data and action == "removed" and not path.is_symlink():  # it held nothing but ours
        try:
            target.unlink()
        except OSError as exc:
            raise HookSettingsError(f"Cannot delete {path}: {exc.strerror or exc}.") from None
        return SettingsResult(action, path, None, events, deleted=True)
    # Nothing but our hooks in it: nothing of the user's to back up.
    previous = raw if theirs else None
    saved = replace_config(target, previous, json_text(data, text), now, backup_folder())
    return SettingsResult("created" if raw is None else action, path, saved, events)


def _parse(text: str, path: Path) -> dict[str, Any]:
    data = load_json_object(text, path)
    hooks = data.get("hooks")
    if hooks is not None and not isinstance(hooks, dict):
        raise HookSettingsError(f"'hooks' in {path} is not a JSON object; left untouched.")
    for event in (*READ_EVENTS, *WRITE_EVENTS):
        if hooks is not None and event in hooks and not isinstance(hooks[event], list):
            raise HookSettingsError(f"hooks.{event} in {path} is not a JSON array; left untouched.")
    return data
