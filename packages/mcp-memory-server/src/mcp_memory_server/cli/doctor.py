"""``mcp-memory doctor``: the checks of :mod:`..doctor` as a table for people (rich, imported here
only: nothing heavy at import time) or as JSON; exit status 1 when any check fails."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from .common import EXIT_ERROR, emit_json, path_option, use_vault

if TYPE_CHECKING:
    from ..doctor import Check

MARKS = {"ok": ("ok", "green"), "warn": ("warn", "yellow"), "fail": ("FAIL", "bold red")}


@click.command("doctor")
@click.option("--json", "as_json", is_flag=True, help="Print the checks as JSON.")
@click.option(
    "--no-handshake",
    is_flag=True,
    help="Skip the self-test that spawns the server over stdio (initialize + tools/list).",
)
@click.option(
    "--timeout",
    type=click.FloatRange(1, 600),
    default=30.0,
    show_default=True,
    help="Seconds the handshake self-test waits for the server.",
)
@path_option
def doctor_command(as_json: bool, no_handshake: bool, timeout: float, path: Path | None) -> None:
    """Check why a client cannot use mcp-memory: versions, settings and where each came from,
    plugins, the database file and its folder, integrity and schema, the embedder (timed) and the
    model of the stored vectors, and a real MCP handshake with this server over stdio.

    Run it with the environment your MCP client gives the server (its "env"). Each check says ok,
    warn or fail, and how to fix a warn or fail. Exit status 1 when a check fails. Nothing is written.
    """
    from ..doctor import failed, run_checks

    use_vault(path)
    results = run_checks(handshake=not no_handshake, timeout=timeout)
    if as_json:
        emit_json({"ok": not failed(results), "checks": [check.to_dict() for check in results]})
    else:
        _print_table(results)
    if failed(results):
        sys.exit(EXIT_ERROR)


def _print_table(results: list[Check]) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    out = sys.stdout
    width = None if out.isatty() else int(os.environ.get("COLUMNS", "") or 120)
    console = Console(file=out, width=width, highlight=False, soft_wrap=False)
    table = Table(show_lines=True, expand=False)
    table.add_column("check", no_wrap=True)
    table.add_column("", no_wrap=True)
    table.add_column("result")
    counts = {"ok": 0, "warn": 0, "fail": 0}
    for check in results:
        counts[check.status] += 1
        label, style = MARKS[check.status]
        text = Text(check.message)
        if check.fix:
            text.append("\nFix: ", style="bold")
            text.append(check.fix, style=style if check.status == "fail" else "yellow")
        table.add_row(check.name, Text(label, style=style), text)
    console.print(table)
    console.print(f"{counts['ok']} ok, {counts['warn']} warning(s), {counts['fail']} failed.")
