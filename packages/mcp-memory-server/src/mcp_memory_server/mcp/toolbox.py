"""What every tool shares: :class:`ToolBox` (the service, the result budget, the tool decorator and
the engine call off the event loop), who is asking (:func:`current_access_token`) and which MCP
session a request belongs to (:func:`session_key`).

Every tool validates its arguments strictly (pydantic, from the signature; see :mod:`.arguments`:
an unknown name or a wrong JSON type is a tool error, one sentence per argument, never a coercion)
and runs the engine call off the event loop. An expected failure (empty content, a bad id, an unknown id, a bad cursor, updating a
superseded memory …) becomes a tool error (``isError: true``) carrying the engine's message.
"""

from __future__ import annotations

import functools
import inspect
import logging
import uuid
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult, TextContent, ToolAnnotations

from ..operations.errors import rule_for
from .arguments import strict_tool
from .budget import estimate_tokens, to_json

if TYPE_CHECKING:
    from mcp_memory_core.engine import MemoryEngine
    from mcp_memory_core.scope import Scope

    from ..runtime.service import MemoryService

log = logging.getLogger(__name__)

T = TypeVar("T")

READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
WRITE = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
DELETE = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
)

_connection_sessions: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
_PROCESS_SESSION = str(uuid.uuid4())


def session_key(ctx: Context[Any, Any] | None) -> str | None:
    """The key of the MCP session a request belongs to, which names the default thread of what a
    client stores (:func:`mcp_memory_core.turns.session_thread_id`), so one chat's memories group
    together. Over HTTP the session is the ``Mcp-Session-Id`` header (hashed: the id itself is never
    stored) and a stateless request has none (None: no thread). Without HTTP one process serves one
    client (stdio): a connection that made the handshake gets its own key, a 2026-era client (no
    handshake, no connection state) the process's. None outside a request. Reads no engine module:
    the engine may still be loading on another thread."""
    try:
        context = ctx.request_context if ctx is not None else None
    except ValueError:  # no request context (a direct call in a test)
        return None
    if context is None:
        return None
    request = context.request
    if request is not None:
        session_id = getattr(request, "headers", {}).get("mcp-session-id")
        if not session_id:
            return None
        return str(uuid.uuid5(uuid.NAMESPACE_URL, "mcp-session:" + session_id))
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    session = context.session
    if session.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return _PROCESS_SESSION
    # The SDK's per-client Connection behind the per-request session proxy has no public accessor;
    # test_server_threads.py holds this in place.
    connection = getattr(session, "_connection", session)
    return _connection_sessions.setdefault(connection, str(uuid.uuid4()))


def current_access_token() -> Any:
    """The bearer token the HTTP request was authenticated with (the MCP SDK's auth context), or
    None (stdio, or an HTTP server run with --no-auth on loopback)."""
    from mcp.server.auth.middleware.auth_context import get_access_token

    return get_access_token()


class ToolBox:
    """The tools of one server: registered with :meth:`tool`, run with :meth:`run`, listed in
    :attr:`tools` for the ``MCPServer`` built from them."""

    def __init__(self, service: MemoryService) -> None:
        self.service = service
        self.tools: list[Tool] = []

    async def run(self, fn: Callable[[MemoryEngine, Scope], T]) -> T:
        """Run ``fn(engine, scope)`` off the event loop. The scope (who is asking) is built here, once
        per request, by the service from the request's credentials: never by a tool."""
        try:
            return await self.service.call_scoped(fn, current_access_token())
        except Exception as exc:
            rule = rule_for(exc)
            if rule is None:
                raise
            if rule.http_status == 503:  # the database down or restarting: worth a line in the log
                log.warning("A tool call failed: %s", exc)
            raise ToolError(rule.mcp_message(exc)) from exc

    def budget(self) -> int:
        """The result token budget (MCP_MEMORY_MAX_RESULT_TOKENS; see :mod:`.budget`)."""
        return self.service.settings.max_result_tokens

    def tool(self, annotations: ToolAnnotations) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Register a tool whose description is its (dedented) docstring, with strict arguments: an
        unknown name or a wrong JSON type is a tool error saying what was expected (see :mod:`.arguments`).

        Its result travels as structured content and as one line of JSON text (the SDK would indent
        it: tokens for nothing), the very text the result budget counts."""

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            description = inspect.cleandoc(fn.__doc__ or "")

            @functools.wraps(fn)  # the SDK reads fn's signature (arguments, output schema) through it
            async def send(*args: Any, **kwargs: Any) -> CallToolResult:
                data = await fn(*args, **kwargs)
                text = to_json(data)
                if fn.__name__ != "get_memory" and estimate_tokens(text) > self.budget():
                    log.warning(
                        "%s result of %d tokens is over the budget", fn.__name__, estimate_tokens(text)
                    )
                return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)

            self.tools.append(strict_tool(send, description=description, annotations=annotations))
            return fn

        return register
