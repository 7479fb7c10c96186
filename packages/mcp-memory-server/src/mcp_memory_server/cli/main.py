"""The ``mcp-memory`` click group: it adds each command module's commands. With no subcommand it
serves MCP over stdio (so ``uvx --from mcp-memory-stack mcp-memory`` works).

A command module imports the helpers below it (:mod:`.common`, :mod:`.display`), never this group.
"""

from __future__ import annotations

import logging
import os
import sys

import click

from .. import __version__
from ..runtime.logging_setup import configure_logging, parse_level
from ..runtime.process_tuning import tune_process
from . import (
    config,
    doctor,
    hooks,
    lifecycle,
    plugins,
    read,
    reindex,
    tidy,
    tokens,
    transfer,
    ui,
    vault,
    write,
)
from .common import DEBUG_ENV, EXIT_ERROR, env_log_level, one_line
from .serve import serve


# -- the command group -------------------------------------------------------------------------------
@click.group(invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="mcp-memory")
@click.option("-v", "--verbose", is_flag=True, help="Show INFO logs (on stderr) for the debugging commands.")
@click.pass_context
def cli(ctx: click.Context, verbose: bool) -> None:
    """mcp-memory: persistent, semantically searchable memory for AI assistants (an MCP server).

    Without a command, serves MCP over stdio. Configure with MCP_MEMORY_* environment variables
    (MCP_MEMORY_DB_PATH, MCP_MEMORY_STORE, MCP_MEMORY_EMBEDDER, MCP_MEMORY_RANKER, MCP_MEMORY_LOG_LEVEL …).
    Every command but serve takes --json.

    Exit status: 0 done; 1 refused or failed (bad input, an unknown id, a storage error: nothing
    changed, one line on stderr); 2 the command line or the configuration is wrong.
    """
    ctx.ensure_object(dict)
    ctx.obj["verbose"] = verbose
    if ctx.invoked_subcommand is None:
        ctx.invoke(serve)
    elif ctx.invoked_subcommand != "serve":
        # Debugging commands: keep stderr quiet unless asked; stdout carries their output.
        settings_level = parse_level(env_log_level("WARNING"))
        configure_logging(logging.INFO if verbose else max(settings_level, logging.WARNING))


# Every command, by module: the group imports its commands, a command never imports the group.
COMMANDS: tuple[click.Command, ...] = (
    serve,
    read.list_command,
    read.search,
    read.get_command,
    read.namespaces,
    write.add_command,
    write.update_command,
    write.forget_command,
    write.pin_command,
    write.unpin_command,
    transfer.export_command,
    transfer.import_command,
    lifecycle.gc,
    lifecycle.clear,
    tidy.tidy_command,
    plugins.plugins,
    tokens.token,
    config.config_command,
    doctor.doctor_command,
    hooks.hooks_group,
    hooks.hook_command,
    reindex.reindex_command,
    reindex.build_index_command,
    ui.ui_command,
    vault.init_command,
)
for command in COMMANDS:
    cli.add_command(command)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    tune_process()  # single-threaded BLAS, fixed mmap threshold: before numpy is imported
    try:
        cli.main(args=argv, prog_name="mcp-memory")
    except Exception as exc:  # a bug: every expected error has its own sentence before this
        if os.environ.get(DEBUG_ENV, "").strip() not in ("", "0"):
            raise
        click.echo(
            f"mcp-memory: internal error: {type(exc).__name__}: {one_line(str(exc), 300)} — rerun with "
            f"{DEBUG_ENV}=1 for the traceback, and please report it.",
            err=True,
        )
        sys.exit(EXIT_ERROR)


if __name__ == "__main__":
    main()
