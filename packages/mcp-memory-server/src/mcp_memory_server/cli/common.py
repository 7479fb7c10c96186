"""What every ``mcp-memory`` command shares: settings, the engine, the local Scope, options, and one way to fail.

Serve mode never prints: stdout is the protocol. The other commands print human-readable text
(tables on a terminal, see :mod:`.display`), or JSON with ``--json``. Expected errors (bad
configuration, bad id …) are one line on stderr and a nonzero exit, without a traceback.

Exit statuses scripts can trust: 0 done; 1 (``EXIT_ERROR``) the command was refused or failed (bad
input, an unknown id, a storage error), nothing changed; 2 (``EXIT_USAGE``) the command line or the
configuration is wrong (click's usage errors, an invalid ``MCP_MEMORY_*`` setting).
"""

from __future__ import annotations

import json
import os
import socket
import sys
import textwrap
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from ..operations.errors import EXIT_ERROR as EXIT_ERROR
from ..operations.errors import EXIT_USAGE as EXIT_USAGE
from ..operations.errors import rule_for

if TYPE_CHECKING:
    from mcp_memory_core.engine import MemoryEngine
    from mcp_memory_core.scope import Scope

    from ..runtime.settings import ServerSettings


T = TypeVar("T")

# Each error's status is in the one table of every surface (operations.errors).
EXIT_CONFIG = EXIT_USAGE  # an invalid setting is a wrong command line too: fix it, run again
DEBUG_ENV = "MCP_MEMORY_DEBUG"  # set: an unexpected error shows its traceback


def fail(message: str, code: int = EXIT_ERROR) -> NoReturn:
    click.echo(f"mcp-memory: error: {message}", err=True)
    sys.exit(code)


def load_settings() -> ServerSettings:
    from ..runtime.config import load_settings as read

    with expected_errors():  # an invalid setting exits with EXIT_USAGE
        return read()


@contextmanager
def expected_errors() -> Iterator[None]:
    """Turn the errors mcp-memory raises on purpose into one clean line on stderr.

    The core is imported only when something went wrong: ``serve`` runs inside this too, and the
    stdio path to the ``initialize`` reply must not import the core (and numpy).
    """
    try:
        yield
    except Exception as exc:
        rule = rule_for(exc)
        if rule is None:
            raise
        fail(rule.command_message(exc), rule.exit_code)


def with_engine(fn: Callable[[MemoryEngine], T], *, create: bool = True) -> T:
    """Run ``fn`` on an engine built from the settings, with every vector of a write embedded before
    it answers (no passage backlog: the command exits right after). ``create=False`` (the read
    commands): a missing database is an error, never a new empty file at a mistyped path."""
    from ..runtime.assembly import build_engine

    # A command exits right after its stores: their sentences are embedded before it answers.
    settings = load_settings().model_copy(update={"defer_passages": False})
    if not create:
        settings = settings.model_copy(update={"create_database": False})
    with expected_errors():
        engine = build_engine(settings)
        try:
            return fn(engine)
        finally:
            engine.close()


def local_scope(engine: MemoryEngine) -> Scope:
    """Who the CLI acts as: the local user (``MCP_MEMORY_USER``) in the current project, the very
    Scope the stdio server's tools run in (built once, by ``runtime.assembly.build_engine``, as the engine's
    default scope). Commands hand it to the engine and never filter by owner themselves."""
    return engine.default_scope


def namespace_option(help: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    return click.option("--namespace", default=None, metavar="NS", help=help)


def limit_option(default: int, high: int, what: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--limit N``, from 1 to ``high``: anything else (a 5,000-digit number too) is refused here, in
    the engine's words, before a store sees it."""

    def check(ctx: click.Context, param: click.Parameter, value: str) -> int:
        text = value.strip()
        number = int(text) if text.isdecimal() and len(text) <= len(str(high)) else None
        if number is None or not 1 <= number <= high:
            shown = text if len(text) <= 20 else f"{text[:8]}…{text[-4:]} ({len(text)} characters)"
            fail(f"limit must be an integer from 1 to {high}; got {shown}.")
        return number

    return click.option(
        "--limit",
        default=str(default),
        metavar="N",
        callback=check,
        show_default=True,
        help=f"{what} (1-{high}).",
    )


READ_NAMESPACE_HELP = (
    "Read this namespace only ('*': every namespace you may read); default: the current project and 'user'."
)


def use_vault(path: Path | None) -> None:
    """``--path DIR``: the markdown vault DIR (MCP_MEMORY_STORE=markdown, MCP_MEMORY_VAULT=DIR), set
    before anything reads the settings."""
    if path is not None:
        folder = path.expanduser().resolve()
        blocking = next((p for p in (folder, *folder.parents) if p.exists() and not p.is_dir()), None)
        if blocking is not None:
            fail(
                f"--path {path}: {blocking} is not a folder; a vault is a folder (an existing one, or a "
                "new one to create with `mcp-memory init --path DIR`).",
                EXIT_USAGE,
            )
        os.environ["MCP_MEMORY_STORE"] = "markdown"
        os.environ["MCP_MEMORY_VAULT"] = str(folder)


def path_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--path",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        help="A markdown vault (mcp-memory-markdown): the same as MCP_MEMORY_STORE=markdown "
        "MCP_MEMORY_VAULT=DIR.",
    )(fn)


def require_free_port(host: str, port: int, hint: str) -> None:
    """Fail in one sentence (ending with ``hint``) when something listens on ``host:port`` already:
    uvicorn would log that it serves, then bury ``[Errno 98]`` among its shutdown lines."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family) as sock:
        if os.name == "posix":  # as uvicorn binds: a port left in TIME_WAIT by the last server is free
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            fail(f"port {port} on {host} is in use: {hint}.", EXIT_CONFIG)


def emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False))


def one_line(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return textwrap.shorten(flat, width=width, placeholder="…") if len(flat) > width else flat


def env_log_level(default: str) -> str:
    """MCP_MEMORY_LOG_LEVEL, read without importing the settings machinery (it is on the startup path)."""
    return os.environ.get("MCP_MEMORY_LOG_LEVEL", default)
