"""Check 7: a real stdio handshake with this same server (initialize + tools/list, timed)."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    pass


from .report import (
    EXPECTED_TOOL,
    HANDSHAKE_TIMEOUT_S,
    REPORT_BUG,
    SLOW_HANDSHAKE_S,
    STDERR_LINES,
    Check,
    Context,
    fail,
    ok,
    warn,
)


# -- 7. the stdio handshake -----------------------------------------------------------------------
@contextlib.contextmanager
def _quiet_sdk() -> Iterator[None]:
    """The SDK logs every unparsable stdout line with a traceback: the check reports them instead."""
    sdk = logging.getLogger("mcp")
    level = sdk.level
    sdk.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        sdk.setLevel(level)


def _stray(exc: Exception) -> str:
    """The stdout line behind a parse error of the SDK's reader."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        with contextlib.suppress(Exception):
            value = errors()[0].get("input")
            if isinstance(value, str | bytes):
                text = value.decode(errors="replace") if isinstance(value, bytes) else value
                return text[:200]
    return f"{type(exc).__name__}: {exc}"[:200]


def _leaf(exc: BaseException) -> BaseException:
    """The first real error inside (nested) exception groups of the SDK's task groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _tail(text: str, lines: int = STDERR_LINES) -> str:
    kept = [line for line in text.splitlines() if line.strip()][-lines:]
    return "\n".join(kept)


def server_command() -> list[str]:
    """This same server, as the ``mcp-memory`` script runs it."""
    return [sys.executable, "-m", "mcp_memory_server"]


async def _talk(environ: Mapping[str, str], errlog: Any, stray: list[str], timeout: float) -> dict[str, Any]:
    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client

    async def on_message(message: Any) -> None:
        if isinstance(message, Exception):
            stray.append(_stray(message))

    command = server_command()
    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(environ), cwd=os.getcwd())
    times: dict[str, Any] = {}
    with anyio.fail_after(timeout):
        started = time.perf_counter()
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write, message_handler=on_message) as session,
        ):
            init = await session.initialize()
            times["initialize_ms"] = round((time.perf_counter() - started) * 1000, 1)
            listed = await session.list_tools()
            times["tools_list_ms"] = round((time.perf_counter() - started) * 1000 - times["initialize_ms"], 1)
            times["server"] = f"{init.server_info.name} {init.server_info.version}"
            times["protocol_version"] = str(init.protocol_version)
            times["tools"] = [tool.name for tool in listed.tools]
    return times


def check_handshake(ctx: Context, timeout: float = HANDSHAKE_TIMEOUT_S) -> Check:
    import anyio

    command = " ".join(server_command())
    stray: list[str] = []
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog, _quiet_sdk():
        error: BaseException | None = None
        result: dict[str, Any] = {}
        try:
            result = anyio.run(_talk, ctx.environ, errlog, stray, timeout)
        except TimeoutError:
            error = TimeoutError(f"no answer within {timeout:.0f} s")
        except Exception as exc:
            error = _leaf(exc)
        errlog.seek(0)
        stderr = _tail(errlog.read())
    details: dict[str, Any] = {"command": command, **result}
    quoted = f" Its stderr ends with:\n{stderr}" if stderr else " It wrote nothing to stderr."
    if stray:
        return fail(
            "handshake",
            f"`{command}` wrote to stdout what is not MCP: {stray[0]!r}"
            + (f" (and {len(stray) - 1} more lines)" if len(stray) > 1 else "")
            + ": clients fail or disconnect.",
            "Something prints to stdout when the server starts (a plugin, a sitecustomize or .pth file, "
            "a shell profile): run the command in a terminal to see it, and remove the print (logs belong "
            "on stderr).",
            stdout=stray,
            stderr=stderr,
            **details,
        )
    if error is not None:
        message = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        return fail(
            "handshake",
            f"`{command}` did not complete initialize + tools/list ({message}).{quoted}",
            "Run the command in a terminal with the same environment and read its error; the checks above "
            "usually name the cause.",
            stderr=stderr,
            **details,
        )
    if EXPECTED_TOOL not in result.get("tools", []):
        return fail(
            "handshake",
            f"`{command}` answered, but lists no {EXPECTED_TOOL} tool (tools: {', '.join(result.get('tools', []))}).",
            REPORT_BUG,
            stderr=stderr,
            **details,
        )
    message = (
        f"{result['server']} answered initialize in {result['initialize_ms']:.0f} ms and tools/list "
        f"({len(result['tools'])} tools) in {result['tools_list_ms']:.0f} ms (protocol {result['protocol_version']})."
    )
    if result["initialize_ms"] > SLOW_HANDSHAKE_S * 1000:
        return warn(
            "handshake",
            message + " Slow: some clients give up.",
            "Something slows the start (a slow disk, an antivirus scanning the environment, a heavy plugin "
            "import): run the command in a terminal with MCP_MEMORY_LOG_LEVEL=DEBUG.",
            **details,
        )
    return ok("handshake", message, **details)
