"""The MCP surface: tools, the ``memory://{id}`` resource and the server instructions.

Every tool validates its arguments strictly (pydantic, from the signature; see :mod:`.arguments`:
an unknown name or a wrong JSON type is a tool error, one sentence per argument, never a coercion)
and runs the engine call off the event loop. An expected failure (empty content, a bad id, an unknown id, a bad cursor, updating a
superseded memory …) becomes a tool error (``isError: true``) carrying the engine's message.
"""

from __future__ import annotations

import functools
import inspect
import json
import logging
import sys
import uuid
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from mcp.server import MCPServer
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from .. import __version__
from ..operations.serialize import (
    compact_hit,
    compact_memory,
    delete_receipt,
    floor_report,
    hit_to_dict,
    memory_to_dict,
    next_page_hint,
    pin_receipt,
    store_receipt,
    update_receipt,
    view_to_dict,
)
from ..runtime.service import EngineFactory, MemoryService
from .arguments import strict_tool
from .budget import budget_bytes, estimate_tokens, fit_entries, json_bytes, listing, shorten, to_json

if TYPE_CHECKING:
    from mcp_memory_core.engine import MemoryEngine
    from mcp_memory_core.models import Memory
    from mcp_memory_core.scope import Scope
    from mcp_memory_core.settings import Settings

    from ..runtime.http_security import HttpSecurity

# The core (and numpy, pydantic-settings …) is imported by the warm-up thread, after the handshake:
# nothing on the path to the ``initialize`` reply imports it. Tools import it lazily, once warm.
# These mirror mcp_memory_core.engine.MAX_SEARCH_LIMIT / MAX_LIST_LIMIT (a unit test checks it).
MAX_SEARCH_LIMIT = 100
MAX_LIST_LIMIT = 1000
MAX_TOKEN_BUDGET = 100_000  # memory_injection's token_budget (the engine checks it too)
# What a list page needs besides its memories, at most: the keys, a cursor, a total and the hint.
PAGE_ENVELOPE = {
    "memories": [],
    "next_cursor": "c" * 160,
    "total": 10**12,
    "hint": "h" * 400,
}

log = logging.getLogger(__name__)

T = TypeVar("T")

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

READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
WRITE = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
DELETE = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
)

MemoryId = Annotated[
    str, Field(description="A memory id (UUID), as returned by store_memory or search_memories.")
]
Content = Annotated[
    str,
    Field(
        description=(
            "The text to remember: one self-contained fact, preference or decision, understandable "
            "without the current conversation."
        )
    ),
]
Metadata = Annotated[
    dict[str, Any] | None,
    Field(
        description='Optional key/value pairs about the memory, e.g. {"project": "atlas", "topic": "deploy"}.'
    ),
]
NamespaceArg = Annotated[
    str | None,
    Field(
        description=(
            '"user" for preferences and facts about the person (seen from every project); default: the '
            "current project's namespace, for facts about the project."
        )
    ),
]
ReadNamespaceArg = Annotated[
    str | None,
    Field(
        description=(
            'Namespace to read; default: the current project and "user" together; "*": every namespace '
            "you may read."
        )
    ),
]
PrivacyArg = Annotated[
    Literal["private", "team", "public"] | None,
    Field(
        description=(
            "Who else may read it: private (only you: the default), team (members of your teams), "
            "public (every user of this server). Only you can ever change or delete it."
        )
    ),
]
MemoryTypeName = Literal["working", "episodic", "semantic", "procedural"]
TypeArg = Annotated[
    MemoryTypeName | None,
    Field(
        description=(
            "semantic (facts, preferences: the default), procedural (how to do things), episodic "
            "(what happened when), working (short-lived task state)."
        )
    ),
]
TagsArg = Annotated[list[str] | None, Field(description='Optional labels, e.g. ["python", "deploy"].')]
ImportanceArg = Annotated[
    float | None, Field(description="How much this matters, 0 to 1 (default 0.5).", ge=0, le=1)
]
# Filters shared by search_memories and list_memories: they apply before the top-k, so a filtered
# search returns as many results as match.
FilterTypes = Annotated[list[MemoryTypeName] | None, Field(description="Only memories of these types.")]
FilterTags = Annotated[list[str] | None, Field(description="Only memories with these tags (see tags_match).")]
TagsMatch = Annotated[
    Literal["any", "all"], Field(description="any: at least one of the tags; all: every one of them.")
]
CreatedAfter = Annotated[
    str | None, Field(description="Only memories created at or after this ISO 8601 date/time.")
]
CreatedBefore = Annotated[
    str | None, Field(description="Only memories created before this ISO 8601 date/time.")
]
OccurredAt = Annotated[
    str | None,
    Field(
        description=(
            "When the remembered thing happened or was said, ISO 8601 (e.g. 2023-05-08 or "
            "2023-05-08T13:56:00Z); default: now. Give it when storing something from an earlier date."
        )
    ),
]
ThreadArg = Annotated[
    str | None,
    Field(
        description=(
            "An id for the conversation this memory comes from; default: this MCP session, so one "
            "chat's memories group together. Reuse one id to group memories across sessions."
        )
    ),
]
OccurredAfter = Annotated[
    str | None, Field(description="Only memories that happened at or after this ISO 8601 date/time.")
]
OccurredBefore = Annotated[
    str | None, Field(description="Only memories that happened before this ISO 8601 date/time.")
]
ThreadFilter = Annotated[str | None, Field(description="Only memories of this conversation thread.")]
MetadataFilter = Annotated[
    dict[str, str | int | float | bool | None] | None,
    Field(
        description='Only memories whose metadata has all these key = value pairs, e.g. {"project": "atlas"}.'
    ),
]


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

    async def run(fn: Callable[[MemoryEngine, Scope], T]) -> T:
        """Run ``fn(engine, scope)`` off the event loop. The scope (who is asking) is built here, once
        per request, by the service from the request's credentials: never by a tool."""
        try:
            return await service.call_scoped(fn, current_access_token())
        except Exception as exc:
            from mcp_memory_core.errors import DATABASE_UNAVAILABLE, MemoryServerError, UnavailableError

            if isinstance(exc, UnavailableError):  # the database down or restarting: say so first
                log.warning("A tool call failed: %s", exc)
                raise ToolError(f"{DATABASE_UNAVAILABLE} {exc}") from exc
            if isinstance(exc, MemoryServerError):
                raise ToolError(str(exc)) from exc
            raise

    async def warm_after_handshake(ctx: ServerRequestContext[Any, Any], call_next: Any) -> Any:
        """Start loading the model once the client has its ``initialize`` answer.

        ``notifications/initialized`` is the client's acknowledgement of that answer; a 2026-era
        connection has no handshake, so its first request of any other kind serves the same role.
        Warming only starts after ``call_next`` returns, so it never delays the reply itself.
        """
        result = await call_next(ctx)
        if ctx.method != "initialize" and not service.warmup_started:
            log.debug("Handshake done (%s): warming up in the background", ctx.method)
            service.start_warmup()
        return result

    tools: list[Tool] = []

    def budget() -> int:
        """The result token budget (MCP_MEMORY_MAX_RESULT_TOKENS; see budget.py)."""
        return service.settings.max_result_tokens

    def tool(annotations: ToolAnnotations) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Register a tool whose description is its (dedented) docstring, with strict arguments: an
        unknown name or a wrong JSON type is a tool error saying what was expected (see arguments.py).

        Its result travels as structured content and as one line of JSON text (the SDK would indent
        it: tokens for nothing), the very text the result budget counts."""

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            description = inspect.cleandoc(fn.__doc__ or "")

            @functools.wraps(fn)  # the SDK reads fn's signature (arguments, output schema) through it
            async def send(*args: Any, **kwargs: Any) -> CallToolResult:
                data = await fn(*args, **kwargs)
                text = to_json(data)
                if fn.__name__ != "get_memory" and estimate_tokens(text) > budget():
                    log.warning(
                        "%s result of %d tokens is over the budget", fn.__name__, estimate_tokens(text)
                    )
                return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)

            tools.append(strict_tool(send, description=description, annotations=annotations))
            return fn

        return register

    def parse_filters(**given: Any) -> Any:
        from mcp_memory_core.filters import Filters

        return Filters.parse(**given)

    @tool(WRITE)
    async def store_memory(
        content: Content,
        metadata: Metadata = None,
        type: TypeArg = None,
        tags: TagsArg = None,
        importance: ImportanceArg = None,
        pinned: Annotated[bool, Field(description="Pinned memories never expire.")] = False,
        namespace: NamespaceArg = None,
        privacy_scope: PrivacyArg = None,
        occurred_at: OccurredAt = None,
        thread: ThreadArg = None,
        ctx: Context[Any, Any] | None = None,
    ) -> dict[str, Any]:
        """Store a new memory: a durable fact, preference or decision worth recalling in later conversations.

        occurred_at says when it happened or was said (default now); thread groups one conversation's
        memories (default: this session).
        Returns id, namespace and status: "stored"; "duplicate" (the same content was already stored: its
        id is returned, nothing was written); or "superseded" (server policy replaced a near-duplicate).
        similar lists close existing memories, each with a relation: "duplicate" (very close: most likely
        this memory restates it or gives it a new value) or "related" (the same thing or a neighbouring
        fact: check). If one says the same thing in an older form, call update_memory on it instead.
        If the memory replaces something stored before, use update_memory.
        """

        session = session_key(ctx)  # read here, on the request's task

        def do(engine: MemoryEngine, scope: Scope) -> dict[str, Any]:
            from mcp_memory_core.turns import session_thread_id

            default_thread = session_thread_id(session) if session is not None else None
            outcome = engine.store_memory(
                content,
                metadata,
                type=type,
                tags=tags,
                importance=importance,
                pinned=pinned,
                namespace=namespace,
                privacy_scope=privacy_scope,
                occurred_at=occurred_at,
                thread=thread if thread is not None else default_thread,
                scope=scope,
            )
            receipt = store_receipt(outcome)
            build = listing(
                receipt,
                "similar",
                budget=budget(),
                noun="similar memory",
                plural="similar memories",
                how="get_memory returns any of them in full",
            )
            return fit_entries(receipt["similar"], build, budget(), name=lambda s: s["id"])

        return await run(do)

    @tool(READ_ONLY)
    async def search_memories(
        query: Annotated[str, Field(description="What you are looking for, in natural language.")],
        limit: Annotated[int, Field(description=f"Maximum number of results, 1 to {MAX_SEARCH_LIMIT}.")] = 10,
        types: FilterTypes = None,
        tags: FilterTags = None,
        tags_match: TagsMatch = "any",
        created_after: CreatedAfter = None,
        created_before: CreatedBefore = None,
        occurred_after: OccurredAfter = None,
        occurred_before: OccurredBefore = None,
        thread: ThreadFilter = None,
        metadata: MetadataFilter = None,
        namespace: ReadNamespaceArg = None,
        explain: Annotated[bool, Field(description="Include each result's score_parts.")] = False,
        verbose: Annotated[
            bool,
            Field(
                description="Every field of each result (metadata, type, created_at, owner …), not the compact form."
            ),
        ] = False,
    ) -> dict[str, Any]:
        """Search memories by meaning and keywords; results are the current versions, best match first.

        Use it at the start of a task and before asking the user something they may have said before.
        Optional filters (types, tags, created_after/before, occurred_after/before, thread, metadata)
        narrow the search before ranking.
        Each result has its id, content, namespace, occurred_at (when it happened), tags (if any) and
        score; matched_id names an older version when that version's wording is what matched (the
        result is its current version). get_memory or verbose=true give every field.
        Only memories relevant enough to the query come back: an empty result with a note means nothing
        stored answers it (explain=true shows the relevance floor). Results that do not fit the
        server's result size are named by id in omitted, and hint says so.
        """

        def do(engine: MemoryEngine, scope: Scope) -> dict[str, Any]:
            filters = parse_filters(
                types=types,
                tags=tags,
                tags_match=tags_match,
                created_after=created_after,
                created_before=created_before,
                occurred_after=occurred_after,
                occurred_before=occurred_before,
                thread=thread,
                metadata=metadata,
            )
            found = engine.search(query, limit, filters, namespace=namespace, scope=scope)
            now = engine.clock()
            results = [
                hit_to_dict(hit, explain=explain, ttl=engine.ttl, now=now)
                if verbose
                else compact_hit(hit, explain=explain)
                for hit in found.hits
            ]
            build = listing(
                {
                    "results": [],
                    "count": 0,
                    **floor_report(found, explain=explain),
                    # a reranker was skipped: the results are the ranker's order there
                    **({"warnings": list(found.warnings)} if found.warnings else {}),
                },
                "results",
                count="count",
                budget=budget(),
                noun="result",
                plural="results",
                how="get_memory returns any of them in full; a lower limit gives fewer, whole results",
            )
            return fit_entries(results, build, budget(), name=lambda r: r["id"])

        return await run(do)

    @tool(READ_ONLY)
    async def get_memory(
        id: MemoryId,
        history: Annotated[
            bool, Field(description="Also return every version of this memory's chain, oldest first.")
        ] = False,
    ) -> dict[str, Any]:
        """Get one memory by id, exactly as stored.

        status is "current", "superseded" (a newer version exists: head_id is its id), "deleted" or
        "expired". A superseded memory is returned as it is, never silently replaced by its newer version.
        With history=true, history lists the chain in order with the current version marked.
        The memory asked for always comes whole; versions of its history that do not fit the
        server's result size are named by id in omitted.
        """

        def do(engine: MemoryEngine, scope: Scope) -> dict[str, Any]:
            view = view_to_dict(
                engine.get_memory(id, history=history, scope=scope), engine.ttl, engine.clock()
            )
            if "history" not in view:
                return view  # whole, whatever its size (bounded by the content and metadata limits)
            versions = view.pop("history")
            build = listing(
                view,
                "history",
                budget=budget(),
                noun="version",
                plural="versions",
                how="get_memory returns each of them",
            )
            return fit_entries(versions, build, budget(), name=lambda v: v["id"])

        return await run(do)

    @tool(WRITE)
    async def update_memory(
        id: MemoryId,
        content: Content,
        metadata: Metadata = None,
        type: TypeArg = None,
        tags: TagsArg = None,
        importance: ImportanceArg = None,
        privacy_scope: PrivacyArg = None,
        occurred_at: OccurredAt = None,
    ) -> dict[str, Any]:
        """Replace a memory whose fact changed: creates a new version and marks the old one superseded.

        Use this instead of storing a contradicting memory. Only the current version can be updated.
        metadata, type, tags and importance replace the old values; omit them to keep the old ones.
        Returns the new id, the superseded (old) id and status "updated" (get_memory shows the new version).
        """

        def do(engine: MemoryEngine, scope: Scope) -> dict[str, Any]:
            outcome = engine.update_memory(
                id,
                content,
                metadata,
                type=type,
                tags=tags,
                importance=importance,
                privacy_scope=privacy_scope,
                occurred_at=occurred_at,
                scope=scope,
            )
            return update_receipt(outcome)

        return await run(do)

    @tool(DELETE)
    async def delete_memory(
        id: MemoryId,
        hard: Annotated[
            bool,
            Field(
                description=(
                    "Purge for good: content, vectors and every version of the memory. Default false: a "
                    "tombstone (hidden everywhere, history kept)."
                )
            ),
        ] = False,
    ) -> dict[str, Any]:
        """Delete a memory that is wrong or that the user wants forgotten; it never appears in search again.

        Returns status "deleted", "already_deleted", or "purged" (hard=true; purged lists removed ids).
        """

        def do(engine: MemoryEngine, scope: Scope) -> dict[str, Any]:
            outcome = engine.delete_memory(id, hard=hard, scope=scope)
            data = delete_receipt(outcome)
            if not hard:
                return data
            data.pop("purged")  # the ids come back below, as many as fit the result budget
            tokens = budget()

            def build(kept: list[Any], named: list[str], left_out: int) -> dict[str, Any]:
                result = {**data, "purged": kept}
                if left_out:
                    result["hint"] = (
                        f"{len(outcome.purged):,} versions were purged; the ids of {left_out:,} of them "
                        f"did not fit in the {tokens:,}-token result budget (MCP_MEMORY_MAX_RESULT_TOKENS)."
                    )
                return result

            return fit_entries(list(outcome.purged), build, tokens, shortenable=False)

        return await run(do)

    @tool(WRITE)
    async def pin_memory(
        id: MemoryId,
        pinned: Annotated[bool, Field(description="true to pin, false to unpin.")] = True,
    ) -> dict[str, Any]:
        """Pin a memory so it never expires (working memories otherwise expire after 48 hours, episodic
        after 90 days), or unpin it. Returns its id, pinned and expires_at (null: never)."""

        def do(engine: MemoryEngine, scope: Scope) -> dict[str, Any]:
            return pin_receipt(engine.pin_memory(id, pinned, scope=scope), engine.ttl)

        return await run(do)

    @tool(READ_ONLY)
    async def list_memories(
        limit: Annotated[int, Field(description=f"Page size, 1 to {MAX_LIST_LIMIT}.")] = 50,
        cursor: Annotated[
            str | None, Field(description="The next_cursor of the previous page; omit it for the first page.")
        ] = None,
        types: FilterTypes = None,
        tags: FilterTags = None,
        tags_match: TagsMatch = "any",
        created_after: CreatedAfter = None,
        created_before: CreatedBefore = None,
        occurred_after: OccurredAfter = None,
        occurred_before: OccurredBefore = None,
        thread: ThreadFilter = None,
        metadata: MetadataFilter = None,
        namespace: ReadNamespaceArg = None,
        verbose: Annotated[
            bool,
            Field(
                description="Every field of each memory (metadata, type, created_at, owner …), not the compact form."
            ),
        ] = False,
    ) -> dict[str, Any]:
        """List current memories, newest first, one page at a time, optionally filtered.

        Returns memories (each with id, content, namespace, occurred_at and tags if any; verbose=true or
        get_memory give every field), next_cursor (null on the last page) and total (the number of
        matching memories). A page also ends early when it reaches the server's result size; while
        more remain, hint says so: call list_memories again with cursor = next_cursor and the same filters.
        """

        def do(engine: MemoryEngine, scope: Scope) -> dict[str, Any]:
            filters = parse_filters(
                types=types,
                tags=tags,
                tags_match=tags_match,
                created_after=created_after,
                created_before=created_before,
                occurred_after=occurred_after,
                occurred_before=occurred_before,
                thread=thread,
                metadata=metadata,
            )
            now = engine.clock()
            tokens = budget()
            entries: dict[str, dict[str, Any]] = {}

            def measure(memory: Memory) -> int:  # its bytes in the page, the ", " before it included
                entry = memory_to_dict(memory, engine.ttl, now) if verbose else compact_memory(memory)
                entries[memory.id] = entry
                return json_bytes(entry) + 2

            room = budget_bytes(tokens) - json_bytes(PAGE_ENVELOPE)
            page = engine.list_memories(
                limit, cursor, filters, namespace=namespace, scope=scope, measure=measure, page_limit=room
            )
            memories = [entries[m.id] for m in page.memories]
            data: dict[str, Any] = {
                "memories": memories,
                "next_cursor": page.next_cursor,
                "total": page.total,
            }
            if page.next_cursor is not None:
                data["hint"] = next_page_hint(page, tokens)
            if len(memories) == 1 and json_bytes(data) > budget_bytes(tokens):
                # one memory larger than the whole budget: its start, and where to read the rest
                cut = {
                    **data,
                    "memories": [],
                    "hint": (
                        "The memory marked content_truncated was shortened to fit the "
                        f"{tokens:,}-token result budget (MCP_MEMORY_MAX_RESULT_TOKENS): get_memory "
                        f"returns it whole. {data.get('hint', '')}"
                    ).strip(),
                }
                short = shorten(memories[0], budget_bytes(tokens) - json_bytes(cut))
                if short is not None:
                    data = {**cut, "memories": [short]}
            return data

        return await run(do)

    @tool(READ_ONLY)
    async def list_namespaces() -> dict[str, Any]:
        """List every namespace (one per project or user) with its number of current memories, and the
        default namespace of this server."""

        def do(engine: MemoryEngine, scope: Scope) -> dict[str, Any]:
            counts = engine.list_namespaces(scope=scope)
            build = listing(
                {"default": scope.default_namespace, "home": list(scope.home_namespaces)},
                "namespaces",
                budget=budget(),
                noun="namespace",
                plural="namespaces",
                how="list_memories and search_memories read any of them by name",
                by="name",
            )
            entries = [{"name": name, "memories": count} for name, count in sorted(counts.items())]
            return fit_entries(entries, build, budget(), name=lambda n: n["name"], shortenable=False)

        return await run(do)

    @tool(DELETE)
    async def clear_memories(
        namespace: Annotated[str, Field(description="The namespace to clear.")],
        confirm: Annotated[
            str,
            Field(description="Must repeat the namespace name exactly, as confirmation that the user asked."),
        ],
    ) -> dict[str, Any]:
        """Permanently delete EVERY memory of a namespace (all versions, no undo). Only when the user
        explicitly asks to wipe that namespace; confirm must repeat the namespace name."""
        if confirm != namespace:
            raise ToolError(
                f"Not cleared: confirm must repeat the namespace name exactly ({namespace!r}). Ask the user first."
            )
        removed = await run(lambda engine, scope: engine.clear_namespace(namespace, scope=scope))
        return {"namespace": namespace, "status": "cleared", "purged": removed}

    with _sdk_logging_without_rich():
        mcp: MCPServer[Any] = MCPServer(
            SERVER_NAME,
            title="mcp-memory",
            description="Persistent, semantically searchable memory for AI assistants",
            instructions=INSTRUCTIONS,
            version=__version__,
            tools=tools,
            middleware=[warm_after_handshake],
            token_verifier=security.verifier if security is not None else None,
            auth=security.auth if security is not None else None,
        )
    mcp.memory_service = service  # type: ignore[attr-defined]  # handy for tests and the CLI

    @mcp.resource(
        "memory://{id}",
        name="memory",
        title="A memory by id",
        description="One memory as JSON, exactly as get_memory returns it.",
        mime_type="application/json",
    )
    async def memory_resource(id: str) -> str:
        try:
            data = await service.call_scoped(
                lambda engine, scope: view_to_dict(
                    engine.get_memory(id, scope=scope), engine.ttl, engine.clock()
                ),
                current_access_token(),
            )
        except Exception as exc:
            from mcp_memory_core.errors import MemoryNotFoundError, MemoryServerError

            if isinstance(exc, MemoryNotFoundError):
                raise ResourceNotFoundError(str(exc)) from exc
            if isinstance(exc, MemoryServerError):
                raise ResourceError(str(exc)) from exc
            raise

        return json.dumps(data, ensure_ascii=False)

    @mcp.resource(
        "memory://stats",
        name="stats",
        title="Memory statistics",
        description="Counts per namespace and type, the model, the store and the TTL settings, as JSON.",
        mime_type="application/json",
    )
    async def stats_resource() -> str:
        stats = await service.call_scoped(
            lambda engine, scope: engine.stats(scope=scope), current_access_token()
        )
        return json.dumps(stats, ensure_ascii=False)

    @mcp.prompt(
        name="memory_injection",
        title="Inject relevant memories",
        description="The memories most relevant to a query, packed into a token budget, ready to prepend.",
    )
    async def memory_injection(query: str, token_budget: str = "500") -> str:
        """Relevant memories for ``query`` within ``token_budget`` tokens: the returned text, counted
        as a whole with the model's tokenizer, is never longer (see recall.pack)."""
        # Prompt arguments are strings. A bad one is an invalid-params error saying what to send (the
        # SDK would answer any exception with "Internal server error"); the engine checks the range.
        try:
            budget_tokens = int(token_budget)
        except ValueError:
            raise MCPError(
                code=INVALID_PARAMS,
                message=f"token_budget must be an integer from 1 to {MAX_TOKEN_BUDGET}; got {token_budget!r}.",
            ) from None
        try:
            recall = await service.call_scoped(
                lambda engine, scope: engine.recall(query, budget_tokens, scope=scope),
                current_access_token(),
            )
        except Exception as exc:
            from mcp_memory_core.errors import MemoryServerError

            if isinstance(exc, MemoryServerError):
                raise MCPError(code=INVALID_PARAMS, message=str(exc)) from exc
            raise
        return recall.prompt

    return mcp
