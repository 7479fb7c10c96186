"""Serving over stdio (:func:`serve_stdio`): the MCP SDK's transport, plus an answer to every line it
cannot read.

The SDK's stdio transport turns a line that is not JSON, or is JSON but not a JSON-RPC message, into
an exception on its read stream, and the server only logs that (at debug level): the client hears
nothing and may wait forever. :class:`AnsweringReadStream` sits between the transport and the server
and answers such a line on the write stream (the transport's one stdout writer, so replies never
interleave) with the error JSON-RPC 2.0 prescribes: -32700 Parse error for a line that is not JSON,
-32600 Invalid Request for JSON that is not a message. The reply's id is the request's when the line
is an object with a method and a usable id, else null; a request that is JSON but that the SDK's
parser refuses (a lone surrogate, nesting too deep) is answered by its id with what to change
(:mod:`.jsonrpc_recovery`). The server then carries on with the next line.
"""

from __future__ import annotations

import logging
import os
import signal
from types import FrameType, TracebackType
from typing import TYPE_CHECKING, Any

import anyio
from mcp.shared.message import SessionMessage
from mcp.types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from pydantic import ValidationError

from ..operations.errors import EXIT_INTERRUPTED
from .jsonrpc_recovery import unreadable_request_reply

if TYPE_CHECKING:
    from mcp.server import MCPServer
    from mcp.shared._stream_protocols import ReadStream, WriteStream

    from mcp_memory_core.settings import Settings

log = logging.getLogger(__name__)


def error_reply(exc: Exception) -> JSONRPCError:
    """The JSON-RPC error answering a line the transport could not read as a message."""
    errors = exc.errors(include_url=False) if isinstance(exc, ValidationError) else []
    invalid_json = next((e for e in errors if e["type"] == "json_invalid"), None)
    if invalid_json is not None:
        unreadable = unreadable_request_reply(invalid_json["input"])
        if unreadable is not None:  # JSON the SDK's parser refuses: answered by the request's id
            return unreadable
        error = ErrorData(code=PARSE_ERROR, message="Parse error", data=str(invalid_json["msg"]))
    else:
        error = ErrorData(
            code=INVALID_REQUEST,
            message="Invalid Request",
            data="not a JSON-RPC 2.0 request, notification or response",
        )
    return JSONRPCError(jsonrpc="2.0", id=_request_id(errors), error=error)


def _request_id(errors: list[Any]) -> int | str | None:
    """The id of a malformed request, if one can be read: a "missing field" error of one of the message
    types carries the whole object as its input. Only an object with a method is a request (answering a
    broken response by its id would resolve one of the client's own requests)."""
    for error in errors:
        found = error["input"]
        if (
            error["type"] == "missing"
            and len(error["loc"]) == 2
            and isinstance(found, dict)
            and "method" in found
        ):
            request_id = found.get("id")
            if isinstance(request_id, str) or (
                isinstance(request_id, int) and not isinstance(request_id, bool)
            ):
                return request_id
    return None


class AnsweringReadStream:
    """The transport's read stream, minus its exceptions: each is answered on ``write`` instead."""

    def __init__(
        self, inner: ReadStream[SessionMessage | Exception], write: WriteStream[SessionMessage]
    ) -> None:
        self._inner = inner
        self._write = write

    @property
    def last_context(self) -> Any:
        """The sender's context of the last item (the server restores it around each handler)."""
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        while True:
            item = await self._inner.receive()
            if not isinstance(item, Exception):
                return item
            reply = error_reply(item)
            log.warning(
                "Answered a malformed JSON-RPC line with %s %s", reply.error.code, reply.error.message
            )
            try:
                await self._write.send(SessionMessage(reply))
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                log.debug("The client is gone: the error reply was not sent")

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> AnsweringReadStream:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> AnsweringReadStream:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        await self.aclose()
        return None


async def run_stdio(app: MCPServer[Any]) -> None:
    """``app.run_stdio_async()``, with malformed lines answered. The SDK has no public accessor for
    the low-level server yet; its own in-process client reads ``_lowlevel_server`` the same way."""
    from mcp.server.stdio import stdio_server

    server = app._lowlevel_server
    async with stdio_server() as (read_stream, write_stream):
        await server.run(
            AnsweringReadStream(read_stream, write_stream),
            write_stream,
            server.create_initialization_options(),
        )


def serve_stdio(settings: Settings | None = None) -> None:
    """Serve one client over stdin/stdout until it disconnects (a malformed line gets a JSON-RPC error).

    With ``settings=None`` the settings are read by the warm-up thread after the handshake, so the
    path to the ``initialize`` reply imports neither the core nor numpy.
    """
    from .app import build_app

    app = build_app(settings)
    service = app.memory_service  # type: ignore[attr-defined]
    _stop_on_ctrl_c(service)
    log.info("mcp-memory serving over stdio")
    try:
        anyio.run(run_stdio, app)
    finally:
        signal.signal(signal.SIGINT, _exit_interrupted)  # closing already: Ctrl-C only ends it now
        service.close()


def _stop_on_ctrl_c(service: Any) -> None:
    """Ctrl-C (SIGINT, which MCP clients also send to stop a server) closes the store and ends the
    process at once with status 130. Cancelling the event loop cannot do it: the SDK reads stdin in a
    worker thread that no cancellation reaches, and leaving the loop (or the interpreter) waits for that
    read until the client writes or closes stdin. While the model is still loading nothing is closed
    (closing would wait for the load; no call has run, so nothing is being written); a second Ctrl-C
    ends it without closing."""

    def stop(signum: int, frame: FrameType | None) -> None:
        signal.signal(signal.SIGINT, _exit_interrupted)
        if service.warmup_started and not service.warm:
            log.info("Interrupted (Ctrl-C) while the model loads")
        else:
            log.info("Interrupted (Ctrl-C): closing the store")
            service.close()
        logging.shutdown()
        os._exit(EXIT_INTERRUPTED)

    signal.signal(signal.SIGINT, stop)


def _exit_interrupted(signum: int, frame: FrameType | None) -> None:
    os._exit(EXIT_INTERRUPTED)
