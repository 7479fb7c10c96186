"""``mcp-memory hooks install|uninstall`` and ``mcp-memory hook NAME``: automatic recall for Claude
Code. The logic is in ``integrations/claude_code/``: ``hooks.py`` (what a hook does) and
``settings.py`` (the settings file); this module is the commands, added to the group by ``main.py``.

``hook NAME`` is run by Claude Code on every prompt, so it imports nothing until it runs, and it never
exits with click's usage-error status 2: for UserPromptSubmit, exit 2 would block and erase the
user's prompt. Unknown names and options, and a bad ``--budget``, are ignored with a line on stderr.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from .common import EXIT_ERROR, emit_json, fail


def _where(user: bool, shared: bool, local: bool, project: Path | None) -> tuple[Any, Path]:
    """The level (``local`` unless told) and its settings file."""
    from ..integrations.claude_code.settings import Level, settings_path

    if user and (project is not None or local or shared):
        raise click.UsageError("--user and --project/--local/--shared exclude each other.")
    if local and shared:
        raise click.UsageError("--local and --shared exclude each other.")
    level: Level = "user" if user else "shared" if shared else "local"
    return level, settings_path(level, project)


def _location_options(fn: Any) -> Any:
    fn = click.option(
        "--shared",
        is_flag=True,
        help="The project's .claude/settings.json, usually committed: only if everyone on the project has "
        "mcp-memory at the same path.",
    )(fn)
    fn = click.option(
        "--local",
        is_flag=True,
        help="The project's personal .claude/settings.local.json, not committed (the default).",
    )(fn)
    fn = click.option("--user", is_flag=True, help="Your ~/.claude/settings.json: every project.")(fn)
    return click.option(
        "--project",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        help="The project whose .claude/ settings to edit (default: the current directory).",
    )(fn)


@click.group("hooks")
def hooks_group() -> None:
    """Claude Code hooks: memories injected at session start and with every prompt (and, if you
    choose, explicit decisions stored when a reply ends). See docs/hooks.md."""


@hooks_group.command("install")
@_location_options
@click.option("--print", "print_only", is_flag=True, help="Print the hooks instead of writing the file.")
@click.option(
    "--budget",
    type=click.IntRange(1, 100_000),
    default=800,
    show_default=True,
    help="Tokens of memories each injection may add (counted with the embedding model's tokenizer).",
)
@click.option(
    "--store-decisions",
    is_flag=True,
    help="Also install Stop and PreCompact hooks that store lines of Claude's replies starting with "
    "'Decision:' or 'Remember:' (nothing else; off by default).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def install_command(
    project: Path | None,
    user: bool,
    local: bool,
    shared: bool,
    print_only: bool,
    budget: int,
    store_decisions: bool,
    as_json: bool,
) -> None:
    """Add mcp-memory's hooks to Claude Code's settings: the project's personal
    .claude/settings.local.json (default, not committed: the hooks name this machine's absolute
    paths), its shared .claude/settings.json (--shared) or your ~/.claude/settings.json (--user).

    Refused when the hooks are already installed at another of these levels (Claude Code would run
    both). Every other setting and hook stays; the file is backed up first into the user's state
    folder (never the repository); an invalid file is refused and left untouched; running it again
    changes nothing.
    """
    from ..integrations.claude_code.settings import (
        LEVELS,
        HookSettingsError,
        hook_entries,
        install_hooks,
        launch_command,
        refuse_a_second_level,
    )

    level, path = _where(user, shared, local, project)
    try:
        entries = hook_entries(launch_command(), budget=budget, store_decisions=store_decisions)
    except HookSettingsError as exc:  # no command on this machine would start mcp-memory
        fail(str(exc), EXIT_ERROR)
    snippet = {"hooks": {event: [{"hooks": [handler]}] for event, handler in entries.items()}}
    if print_only:
        if as_json:
            emit_json({"file": str(path), "action": "printed", "settings": snippet})
            return
        emit_json(snippet)
        click.echo(f"# Merge this into {path} (or run again without --print).", err=True)
        return
    try:
        refuse_a_second_level(level, project)
        result = install_hooks(path, entries)
    except HookSettingsError as exc:
        fail(str(exc), EXIT_ERROR)
    if as_json:
        emit_json(_result_dict(result) | {"level": level, "settings": snippet})
        return
    events = ", ".join(result.events)
    if result.action == "unchanged":
        click.echo(f"{path} ({LEVELS[level][1]}) already has mcp-memory's hooks: nothing changed.")
    else:
        verb = "Created" if result.action == "created" else "Updated"
        click.echo(f"{verb} {path} ({LEVELS[level][1]}){_saved(result)}: mcp-memory hooks for {events}.")
    for event, handler in entries.items():
        click.echo(f"  {event}: {handler['command']}")
    if not store_decisions:
        click.echo("Decisions are not stored (install with --store-decisions to store 'Decision:' lines).")
    if result.action != "unchanged":
        click.echo("Claude Code reads them at its next start (or see /hooks).")


@hooks_group.command("uninstall")
@_location_options
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def uninstall_command(project: Path | None, user: bool, local: bool, shared: bool, as_json: bool) -> None:
    """Remove mcp-memory's hooks from the same file as install (only ours: every other hook and
    setting stays; backed up first into the user's state folder, and a file left with nothing else in
    it is deleted)."""
    from ..integrations.claude_code.settings import LEVELS, HookSettingsError, installed_at, uninstall_hooks

    level, path = _where(user, shared, local, project)
    try:
        result = uninstall_hooks(path)
    except HookSettingsError as exc:
        fail(str(exc), EXIT_ERROR)
    if as_json:
        emit_json(_result_dict(result) | {"level": level})
        return
    if result.action in ("absent", "unchanged"):
        elsewhere = "".join(
            f" They are in {other_path} ({LEVELS[other][0]})."
            for other, other_path in installed_at(level, project)
        )
        click.echo(f"{path} has no mcp-memory hooks: nothing changed.{elsewhere}")
        return
    if result.deleted:
        click.echo(
            f"Removed mcp-memory's hooks for {', '.join(result.events)} and deleted {path}: "
            "it held nothing else (no backup: nothing to keep)."
        )
        return
    click.echo(f"Removed mcp-memory's hooks for {', '.join(result.events)} from {path}{_saved(result)}.")


def _saved(result: Any) -> str:
    if result.backup:
        return f" (the previous file is saved as {result.backup})"
    if result.action == "updated":
        return " (no backup: it held nothing but mcp-memory's hooks)"
    return ""


def _result_dict(result: Any) -> dict[str, Any]:
    return {
        "file": str(result.file),
        "action": result.action,
        "backup": str(result.backup) if result.backup else None,
        "events": list(result.events),
        "deleted": result.deleted,
    }


class _NeverExit2(click.Command):
    """A command whose usage errors (an option without its value …) are a line on stderr and exit 0."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as exc:
            click.echo(f"mcp-memory hook: {exc.format_message()}", err=True)
            ctx.exit(0)


@click.command(
    "hook",
    cls=_NeverExit2,
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
)
@click.argument("name", required=False, default="", metavar="NAME")
@click.option("--budget", default=None, help="Token budget of the injected memories (default 800).")
@click.option("--store-decisions", is_flag=True, help="stop/pre-compact: store 'Decision:' lines.")
@click.pass_context
def hook_command(ctx: click.Context, name: str, budget: str | None, store_decisions: bool) -> None:
    """Run by Claude Code, not by you: NAME is session-start, user-prompt-submit, stop or
    pre-compact. Reads the hook's JSON on stdin and prints what Claude Code should add to the context.
    Never fails: any error is exit 0 with no output (logged to stderr and hooks.log)."""
    from ..integrations.claude_code.hooks import (
        BUDGET_SETTING,
        DEFAULT_BUDGET,
        HOOKS,
        STORE_DECISIONS_SETTING,
        run_failing_open,
    )

    if ctx.args:
        click.echo(f"mcp-memory hook: ignoring {' '.join(ctx.args)}", err=True)
    if name not in HOOKS:
        click.echo(f"mcp-memory hook: unknown hook {name!r}; expected one of {', '.join(HOOKS)}.", err=True)
        return
    tokens = _budget(budget if budget is not None else os.environ.get(BUDGET_SETTING), DEFAULT_BUDGET)
    enabled = store_decisions or os.environ.get(STORE_DECISIONS_SETTING, "").strip().lower() in (
        "1",
        "true",
        "yes",
        "on",
    )
    raw = b"" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.buffer.read()
    out = run_failing_open(name, raw, budget=tokens, store_decisions=enabled)
    if out:
        sys.stdout.write(out + "\n")
        sys.stdout.flush()


def _budget(raw: str | None, default: int) -> int:
    if raw is None or not str(raw).strip():
        return default
    try:
        value = int(str(raw).strip())
    except ValueError:
        value = 0
    if not 1 <= value <= 100_000:
        click.echo(
            f"mcp-memory hook: budget must be an integer from 1 to 100000; got {raw!r}; using {default}.",
            err=True,
        )
        return default
    return value
