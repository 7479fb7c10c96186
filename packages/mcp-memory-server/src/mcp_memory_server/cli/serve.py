"""``mcp-memory serve`` (the default command): MCP over stdio, or streamable HTTP with the web UI."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import click

from ..operations.errors import EXIT_INTERRUPTED
from ..runtime.logging_setup import configure_logging
from .common import (
    EXIT_CONFIG,
    env_log_level,
    expected_errors,
    fail,
    load_settings,
    path_option,
    require_free_port,
    use_vault,
)

ON_A_TERMINAL = (
    "mcp-memory is an MCP server speaking JSON-RPC on stdin/stdout, meant to be started by an MCP "
    "client: `mcp-memory config` prints the setup for yours, `mcp-memory ui` opens your memories in a "
    "browser. Ctrl-C stops it."
)


def _bind_address(host: str) -> str:
    from ..runtime.http_security import is_host

    if not is_host(host):
        raise click.BadParameter(
            f"{host[:80]!r} is not an IP address or a host name; use e.g. 127.0.0.1, 0.0.0.0 or ::1."
        )
    return host


@click.command()
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http"]),
    default="stdio",
    show_default=True,
    help="stdio for MCP clients that spawn the server; http serves streamable HTTP.",
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    callback=lambda ctx, param, value: _bind_address(value),
    help="HTTP only: the address to bind.",
)
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True, help="HTTP only.")
@click.option(
    "--no-auth",
    is_flag=True,
    help="HTTP only: serve without bearer tokens, as the local user. Allowed on a loopback address only.",
)
@path_option
def serve(
    transport: str = "stdio",
    host: str = "127.0.0.1",
    port: int = 8000,
    no_auth: bool = False,
    path: Path | None = None,
) -> None:
    """Serve MCP (the default command). HTTP serves at http://HOST:PORT/mcp and requires
    ``Authorization: Bearer <token>`` (see ``mcp-memory token create``) unless --no-auth is given
    on a loopback address.

    stdio answers ``initialize`` before reading the settings or importing the engine: a bad setting
    is logged and returned, with its message, by every tool call (the client sees it; a server that
    exits at startup only shows "disconnected").
    """
    configure_logging(env_log_level("INFO"))
    use_vault(path)
    if transport == "http":
        from ..runtime.http_security import is_loopback

        if no_auth and not is_loopback(host):
            fail(
                f"refusing to serve {host} without authentication: --no-auth is only allowed on a "
                "loopback address (127.0.0.1, ::1, localhost); create a token with "
                "`mcp-memory token create USER` and drop --no-auth.",
                EXIT_CONFIG,
            )
        settings = load_settings()  # an HTTP server is started by a human: fail fast, in the terminal
        require_free_port(host, port, "stop what listens there or pass --port N")
        configure_logging(settings.log_level)
        from ..web.server import serve_http

        runner: Callable[[], None] = lambda: serve_http(  # noqa: E731
            settings, host=host, port=port, auth=not no_auth
        )
    else:
        if no_auth:
            raise click.UsageError("--no-auth applies to --transport http only.")
        runner = _serve_stdio
    try:
        with expected_errors():
            runner()
    except KeyboardInterrupt:  # stdio before it serves (serving, it exits on its own); HTTP has stopped
        if transport == "stdio":
            sys.exit(EXIT_INTERRUPTED)


def _serve_stdio() -> None:
    if sys.stdin.isatty():  # a person typed it: no client is speaking on stdin
        click.echo(ON_A_TERMINAL, err=True)
    from ..mcp.stdio_transport import serve_stdio

    serve_stdio()
