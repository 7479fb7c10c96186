"""The MCP server: its instructions, its tools (:mod:`.tools_write`, :mod:`.tools_read`, sharing
:mod:`.toolbox`), its resources and prompt (:mod:`.resources`), and the warm-up after the handshake.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from mcp.server import MCPServer
from mcp.server.context import ServerRequestContext

from .. import __version__
from ..runtime.service import EngineFactory, MemoryService
from . import tools_read, tools_write
from .resources import add_memory_injection, add_memory_resource, add_stats_resource
from .toolbox import ToolBox

if TYPE_CHECKING:
    from mcp_memory_core.settings import Settings

    from ..runtime.http_security import HttpSecurity

log = logging.getLogger(__name__)

SERVER_NAME = "mcp-memory"

INSTRUCTIONS = """\
mcp-memory is your long-term memory: it persists across conversations and is searched by meaning, \
not by exact words.

Search (search_memories):
- at the start of a task, search for what you may already know about the user, the project and the \
topic at hand;
- before asking the user something they may have told you before (a preference, a path, a name, a \
decision), search first.

Store (store_memory) durable information worth knowing next time: facts about the user and their \
projects, preferences, decisions and their reasons, conventions, names of people and tools, \
important dates. Store one self-contained fact per memory, written so it makes sense without this \
conversation (say who and what, not "he" or "this"). Do not store secrets, passwords or transient \
chatter.

Where: preferences and facts about the person (their name, habits, tools they like) go to \
namespace "user", which every project sees; facts about the current project (its stack, conventions, \
decisions) go to the default, the project's namespace. Searches cover both unless you pass a \
namespace. Memories are private to their owner unless stored with privacy_scope "team" or "public".

Update (update_memory) when a fact changed: call update_memory on the old memory's id with the new \
wording instead of storing a second, contradicting memory. The old version stays in history and a \
search with its wording returns the current version.

Delete (delete_memory) a memory that is wrong or that the user asks you to forget.

get_memory shows one memory by id as it is (with status current, superseded or deleted, and head_id: \
the id of its current version). list_memories pages through everything stored, newest first.\
"""

# The tools in the order tools/list shows them, then the resources and the prompt.
TOOLS: tuple[Callable[[ToolBox], None], ...] = (
    tools_write.add_store_memory,
    tools_read.add_search_memories,
    tools_read.add_get_memory,
    tools_write.add_update_memory,
    tools_write.add_delete_memory,
    tools_write.add_pin_memory,
    tools_read.add_list_memories,
    tools_read.add_list_namespaces,
    tools_write.add_clear_memories,
)
RESOURCES_AND_PROMPTS: tuple[Callable[[MCPServer[Any], MemoryService], None], ...] = (
    add_memory_resource,
    add_stats_resource,
    add_memory_injection,
)


@contextmanager
def _sdk_logging_without_rich() -> Iterator[None]:
    """Build the MCP server as if rich were not installed.

    ``MCPServer()`` configures logging with rich's handler whenever rich can be imported, and rich is
    a dependency of the CLI's tables and progress bars: importing it took 80-100 ms here, on the way
    to the ``initialize`` reply (logging is ours anyway: see logging_setup). While the server is
    built, ``import rich`` fails, so the SDK falls back to its plain handler, as before; a process
    that imported rich already (the CLI's commands, tests) keeps it."""
    if "rich" in sys.modules:
        yield
        return
    sys.modules["rich"] = None  # type: ignore[assignment]  # the import system's "not importable"
    try:
        yield
    finally:
        if sys.modules.get("rich", False) is None:
            del sys.modules["rich"]


def build_app(
    settings: Settings | None = None,
    *,
    service: MemoryService | None = None,
    engine_factory: EngineFactory | None = None,
    security: HttpSecurity | None = None,
) -> MCPServer[Any]:
    """The MCP server. Cheap: no store is opened and no model loaded until after the handshake.

    ``security`` (HTTP only) adds the MCP SDK's bearer-token auth when it carries a verifier: every
    request then needs a valid token, and the service builds each request's Scope from it."""
    if service is None:
        service = MemoryService(settings, engine_factory)
    box = ToolBox(service)
    for add in TOOLS:
        add(box)
    with _sdk_logging_without_rich():
        mcp: MCPServer[Any] = MCPServer(
            SERVER_NAME,
            title="mcp-memory",
            description="Persistent, semantically searchable memory for AI assistants",
            instructions=INSTRUCTIONS,
            version=__version__,
            tools=box.tools,
            middleware=[warm_after_handshake(service)],
            token_verifier=security.verifier if security is not None else None,
            auth=security.auth if security is not None else None,
        )
    mcp.memory_service = service  # type: ignore[attr-defined]  # handy for tests and the CLI
    for add_to in RESOURCES_AND_PROMPTS:
        add_to(mcp, service)
    return mcp


def warm_after_handshake(service: MemoryService) -> Callable[..., Any]:
    """The middleware that starts loading the model once the client has its ``initialize`` answer.

    ``notifications/initialized`` is the client's acknowledgement of that answer; a 2026-era
    connection has no handshake, so its first request of any other kind serves the same role.
    Warming only starts after ``call_next`` returns, so it never delays the reply itself.
    """

    async def middleware(ctx: ServerRequestContext[Any, Any], call_next: Any) -> Any:
        result = await call_next(ctx)
        if ctx.method != "initialize" and not service.warmup_started:
            log.debug("Handshake done (%s): warming up in the background", ctx.method)
            service.start_warmup()
        return result

    return middleware
