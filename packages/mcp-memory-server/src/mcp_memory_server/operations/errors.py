"""One table for every surface: each error mcp-memory raises on purpose, as an MCP error (JSON-RPC code
and message), an HTTP status and a CLI exit status.

Surfaces look an error up with :func:`rule_for` and only encode the answer: a tool call returns the
message as its error result, a resource or prompt raises the JSON-RPC code, a web page answers the
status, a command exits with the status. An exception that is not mcp-memory's own gets no rule: it
is a bug, and each surface reports it as one.

The core is imported on the first lookup, never at import: the stdio path to the ``initialize``
reply must not import it (and numpy), nor may a command that fails before it needs the MCP SDK.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

EXIT_ERROR = 1  # refused or failed, nothing changed
EXIT_USAGE = 2  # the command line or the configuration is wrong: fix it, run again (click's own status)
EXIT_INTERRUPTED = 130  # stopped by Ctrl-C (SIGINT): the shell's convention


def _same(exc: BaseException) -> str:
    return str(exc)


@dataclass(frozen=True)
class ErrorRule:
    """How every surface answers one kind of error."""

    mcp_code: int  # JSON-RPC code of a resource read or prompt that fails with it
    http_status: int
    exit_code: int
    message: Callable[[BaseException], str] = _same  # the MCP and HTTP message
    cli_message: Callable[[BaseException], str] | None = None  # when the CLI says it in its own words

    def mcp_message(self, exc: BaseException) -> str:
        return self.message(exc)

    def command_message(self, exc: BaseException) -> str:
        return (self.cli_message or self.message)(exc)


def _unavailable(exc: BaseException) -> str:
    from mcp_memory_core.errors import DATABASE_UNAVAILABLE

    return f"{DATABASE_UNAVAILABLE} {exc}"  # say first that trying again shortly may work


def _no_such_memory(exc: BaseException) -> str:
    memory_id = getattr(exc, "memory_id", "")  # the engine's words name the MCP tools
    return f"No memory with id {memory_id!r}: `mcp-memory list` and `mcp-memory search` show ids."


@cache
def error_table() -> tuple[tuple[type[BaseException], ErrorRule], ...]:
    """Every rule, the most specific error class first (the first match wins)."""
    from mcp.types import INTERNAL_ERROR, INVALID_PARAMS

    from mcp_memory_core.errors import (
        InvalidInputError,
        MemoryNotFoundError,
        MemoryServerError,
        MemoryStateError,
        NotOwnerError,
        StorageError,
        UnavailableError,
    )

    from ..runtime.config import ConfigurationError
    from .transfer import ImportOptionError

    return (
        (MemoryNotFoundError, ErrorRule(INVALID_PARAMS, 404, EXIT_ERROR, cli_message=_no_such_memory)),
        (NotOwnerError, ErrorRule(INVALID_PARAMS, 403, EXIT_ERROR)),
        (MemoryStateError, ErrorRule(INVALID_PARAMS, 409, EXIT_ERROR)),
        (InvalidInputError, ErrorRule(INVALID_PARAMS, 400, EXIT_ERROR)),
        (
            UnavailableError,
            ErrorRule(INTERNAL_ERROR, 503, EXIT_ERROR, message=_unavailable, cli_message=_same),
        ),
        (StorageError, ErrorRule(INTERNAL_ERROR, 503, EXIT_ERROR)),
        (ConfigurationError, ErrorRule(INTERNAL_ERROR, 500, EXIT_USAGE)),
        (ImportOptionError, ErrorRule(INVALID_PARAMS, 400, EXIT_USAGE)),
        (MemoryServerError, ErrorRule(INTERNAL_ERROR, 400, EXIT_ERROR)),
    )


def rule_for(exc: BaseException) -> ErrorRule | None:
    """The rule for ``exc``, or None for an exception mcp-memory did not raise on purpose (a bug)."""
    return next((rule for kind, rule in error_table() if isinstance(exc, kind)), None)


def http_status(exc: BaseException) -> int:
    """The HTTP status of ``exc``: its rule's, or 500 for an exception without one (a bug)."""
    rule = rule_for(exc)
    return rule.http_status if rule is not None else 500
