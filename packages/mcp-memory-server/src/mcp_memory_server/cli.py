"""The ``mcp-memory`` command. With no subcommand it serves MCP over stdio (so ``uvx mcp-memory`` works).

Serve mode never prints: stdout is the protocol. The debugging commands print human-readable text,
or JSON with ``--json``. Expected errors (bad configuration, bad id …) are one line on stderr and a
nonzero exit, without a traceback.
"""

from __future__ import annotations

import json
import logging
import sys
import textwrap
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from . import __version__
from .logging_setup import configure_logging, parse_level

if TYPE_CHECKING:
    from mcp_memory_core.engine import MemoryEngine
    from mcp_memory_core.settings import Settings

log = logging.getLogger(__name__)

T = TypeVar("T")

EXIT_ERROR = 1
EXIT_CONFIG = 2


def fail(message: str, code: int = EXIT_ERROR) -> NoReturn:
    click.echo(f"mcp-memory: error: {message}", err=True)
    sys.exit(code)


def load_settings() -> Settings:
    from .config import ConfigurationError
    from .config import load_settings as read

    try:
        return read()
    except ConfigurationError as exc:
        fail(str(exc), EXIT_CONFIG)


@contextmanager
def expected_errors() -> Iterator[None]:
    """Turn the errors mcp-memory raises on purpose into one clean line on stderr.

    The core is imported only when something went wrong: ``serve`` runs inside this too, and the
    stdio path to the ``initialize`` reply must not import the core (and numpy).
    """
    try:
        yield
    except Exception as exc:
        from mcp_memory_core.errors import MemoryServerError

        if isinstance(exc, MemoryServerError):
            fail(str(exc))
        raise


def with_engine(fn: Callable[[MemoryEngine], T]) -> T:
    from .assembly import build_engine

    settings = load_settings()
    with expected_errors():
        engine = build_engine(settings)
        try:
            return fn(engine)
        finally:
            engine.close()


def emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False))


def one_line(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return textwrap.shorten(flat, width=width, placeholder="…") if len(flat) > width else flat


# -- the command group -------------------------------------------------------------------------------
@click.group(invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="mcp-memory")
@click.option("-v", "--verbose", is_flag=True, help="Show INFO logs (on stderr) for the debugging commands.")
@click.pass_context
def cli(ctx: click.Context, verbose: bool) -> None:
    """mcp-memory: persistent, semantically searchable memory for AI assistants (an MCP server).

    Without a command, serves MCP over stdio. Configure with MCP_MEMORY_* environment variables
    (MCP_MEMORY_DB_PATH, MCP_MEMORY_STORE, MCP_MEMORY_EMBEDDER, MCP_MEMORY_RANKER, MCP_MEMORY_LOG_LEVEL …).
    """
    ctx.ensure_object(dict)
    ctx.obj["verbose"] = verbose
    if ctx.invoked_subcommand is None:
        ctx.invoke(serve)
    elif ctx.invoked_subcommand != "serve":
        # Debugging commands: keep stderr quiet unless asked; stdout carries their output.
        settings_level = parse_level(_env_log_level("WARNING"))
        configure_logging(logging.INFO if verbose else max(settings_level, logging.WARNING))


def _env_log_level(default: str) -> str:
    """MCP_MEMORY_LOG_LEVEL, read without importing the settings machinery (it is on the startup path)."""
    import os

    return os.environ.get("MCP_MEMORY_LOG_LEVEL", default)


@cli.command()
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http"]),
    default="stdio",
    show_default=True,
    help="stdio for MCP clients that spawn the server; http serves streamable HTTP.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP only: the address to bind.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True, help="HTTP only.")
def serve(transport: str = "stdio", host: str = "127.0.0.1", port: int = 8000) -> None:
    """Serve MCP (the default command). HTTP serves at http://HOST:PORT/mcp.

    stdio answers ``initialize`` before reading the settings or importing the engine: a bad setting
    is logged and returned, with its message, by every tool call (the client sees it; a server that
    exits at startup only shows "disconnected").
    """
    configure_logging(_env_log_level("INFO"))
    if transport == "http":
        settings = load_settings()  # an HTTP server is started by a human: fail fast, in the terminal
        configure_logging(settings.log_level)
        from .server import serve_http

        runner: Callable[[], None] = lambda: serve_http(settings, host=host, port=port)  # noqa: E731
    else:
        from .server import serve_stdio

        runner = serve_stdio
    with suppress(KeyboardInterrupt), expected_errors():
        runner()


@cli.command("list")
@click.option("--limit", type=int, default=50, show_default=True, help="Page size (1-1000).")
@click.option("--cursor", default=None, help="next_cursor of the previous page.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def list_command(limit: int, cursor: str | None, as_json: bool) -> None:
    """List current memories, newest first."""
    from .serialize import page_to_dict

    page = with_engine(lambda engine: page_to_dict(engine.list_memories(limit, cursor)))
    if as_json:
        emit_json(page)
        return
    if not page["memories"]:
        click.echo("No memories." if not cursor else "No more memories.")
        return
    for memory in page["memories"]:
        created = memory["created_at"][:19].replace("T", " ")
        click.echo(f"{memory['id']}  {created}  {one_line(memory['content'], 80)}")
    shown = len(page["memories"])
    footer = f"{shown} shown, {page['total']} in total."
    if page["next_cursor"]:
        footer += f" Next page: mcp-memory list --limit {limit} --cursor {page['next_cursor']}"
    click.echo(footer)


@cli.command()
@click.argument("query")
@click.option("--limit", type=int, default=10, show_default=True, help="Maximum results (1-100).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def search(query: str, limit: int, as_json: bool) -> None:
    """Search memories by meaning."""
    from .serialize import hit_to_dict

    results = with_engine(lambda engine: [hit_to_dict(h) for h in engine.search_memories(query, limit)])
    if as_json:
        emit_json({"results": results, "count": len(results)})
        return
    if not results:
        click.echo("No matching memories.")
        return
    for rank, hit in enumerate(results, start=1):
        via = f"  (matched older version {hit['matched_id']})" if hit["matched_id"] else ""
        click.echo(f"{rank:>2}. {hit['score']:.3f}  {hit['id']}  {one_line(hit['content'], 70)}{via}")


@cli.command()
@click.argument("memory_id", metavar="ID")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def get(memory_id: str, as_json: bool) -> None:
    """Show one memory, as stored (with its status and the head of its chain)."""
    from .serialize import view_to_dict

    view = with_engine(lambda engine: view_to_dict(engine.get_memory(memory_id)))
    if as_json:
        emit_json(view)
        return
    click.echo(f"id:            {view['id']}")
    click.echo(f"status:        {view['status']}")
    if view["head_id"] and view["head_id"] != view["id"]:
        click.echo(f"current:       {view['head_id']}")
    click.echo(f"created_at:    {view['created_at']}")
    click.echo(f"updated_at:    {view['updated_at']}")
    if view["superseded_by"]:
        click.echo(f"superseded_by: {view['superseded_by']}")
    if view["deleted_at"]:
        click.echo(f"deleted_at:    {view['deleted_at']}")
    if view["metadata"]:
        click.echo(f"metadata:      {json.dumps(view['metadata'], ensure_ascii=False)}")
    click.echo("")
    click.echo(view["content"])


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def plugins(as_json: bool) -> None:
    """List installed plugins: every store, embedder and ranker, and plugins that failed to load."""
    from .assembly import load_plugins

    settings = load_settings()
    with expected_errors():
        manager = load_plugins(settings)
        rows = manager.backends()
    selected = {"store": settings.store, "embedder": settings.embedder, "ranker": settings.ranker}
    backends = [
        {
            "name": row.name,
            "kind": row.kind,
            "package": row.package,
            "version": row.version,
            "description": row.description,
            "selected": selected.get(row.kind) == row.name,
        }
        for row in rows
    ]
    failures = [
        {"entry_point": f.entry_point, "package": f.package, "error": f.error} for f in manager.failures
    ]
    if as_json:
        emit_json({"backends": backends, "failed": failures, "selected": selected})
        return
    headers = ("", "NAME", "KIND", "PACKAGE", "VERSION", "DESCRIPTION")
    table = [
        ("*" if b["selected"] else "", b["name"], b["kind"], b["package"], b["version"], b["description"])
        for b in backends
    ]
    widths = [max(len(str(r[i])) for r in [headers, *table]) for i in range(len(headers) - 1)]
    for row in [headers, *table]:
        cells = [str(cell).ljust(width) for cell, width in zip(row[:-1], widths, strict=True)]
        click.echo("  ".join([*cells, str(row[-1])]).rstrip())
    if not table:
        click.echo("No backends installed.")
    click.echo("(* = selected by the current settings)")
    for failure in failures:
        click.echo(f"FAILED  {failure['entry_point']} ({failure['package']}): {failure['error']}")


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    cli.main(args=argv, prog_name="mcp-memory")


if __name__ == "__main__":
    main()
