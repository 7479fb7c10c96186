"""``mcp-memory ui``: the web UI for the local user, on loopback, in your browser.

The same server as ``mcp-memory serve --transport http --no-auth`` (``/mcp`` is served too): no
token, because a loopback server without auth is the local user's own, and only on a loopback
address, exactly as ``--no-auth`` is. A team server's UI is ``serve --transport http`` with tokens
(docs/ui.md).
"""

from __future__ import annotations

import os
import socket
import sys
import threading
import time
from contextlib import suppress
from pathlib import Path

import click

from ..runtime.logging_setup import configure_logging
from .common import (
    EXIT_CONFIG,
    expected_errors,
    fail,
    load_settings,
    path_option,
    require_free_port,
    use_vault,
)

DEFAULT_PORT = 8765


def _url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/ui/"


def _free_port(host: str) -> int:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _open_when_listening(host: str, port: int, url: str, timeout: float = 60.0) -> None:
    """Open the browser once the server accepts connections (a page opened earlier would fail)."""
    import webbrowser

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with suppress(OSError), socket.create_connection((host, port), timeout=0.2):
            if not webbrowser.open(url):
                click.echo(f"Could not open a browser: open {url} yourself.", err=True)
            return
        time.sleep(0.1)


@click.command("ui")
@click.option("--host", default="127.0.0.1", show_default=True, help="A loopback address only.")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=DEFAULT_PORT,
    show_default=True,
    help="0 picks a free port.",
)
@click.option("--no-browser", is_flag=True, help="Do not open a browser; just print the address.")
@path_option
def ui_command(host: str, port: int, no_browser: bool, path: Path | None) -> None:
    """Open the web UI: browse, search, edit, pin, delete and restore, import, export and statistics,
    as the local user (no token), on a loopback address. Ctrl-C stops it."""
    from ..runtime.http_security import is_loopback

    configure_logging("WARNING")
    use_vault(path)
    if not is_loopback(host):
        fail(
            f"refusing to serve the UI on {host}: `mcp-memory ui` is the local user's, without a token, "
            "so it only listens on a loopback address (127.0.0.1, ::1, localhost). For a team, run "
            "`mcp-memory serve --transport http` with tokens: its UI is at /ui/.",
            EXIT_CONFIG,
        )
    settings = load_settings()
    # quiet unless asked (MCP_MEMORY_LOG_LEVEL): the terminal shows the address and errors
    configure_logging(settings.log_level if "MCP_MEMORY_LOG_LEVEL" in os.environ else "WARNING")
    if port == 0:
        port = _free_port(host)
    else:
        require_free_port(host, port, "pass --port N (or --port 0 for any free port)")
    url = _url(host, port)
    click.echo(f"mcp-memory UI at {url} (Ctrl-C stops it)", err=True)
    if not no_browser:
        threading.Thread(
            target=_open_when_listening, args=(host, port, url), name="mcp-memory-open-browser", daemon=True
        ).start()
    from ..web.server import serve_http

    with suppress(KeyboardInterrupt), expected_errors():
        serve_http(settings, host=host, port=port, auth=False)
    sys.stderr.flush()
