"""The tools that read: search_memories, get_memory, list_memories and list_namespaces, one
registration function each."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from ..operations.filters import FilterRequest
from ..operations.read import GetRequest, ListRequest, SearchRequest, get, list_page, namespaces, search
from .budget import budget_bytes, fit_entries, json_bytes, listing, shorten
from .params import MAX_LIST_LIMIT, MAX_SEARCH_LIMIT, MemoryId, ReadNamespaceArg, filter_arguments
from .toolbox import READ_ONLY, ToolBox

if TYPE_CHECKING:
    from mcp_memory_core.engine import MemoryEngine
    from mcp_memory_core.scope import Scope

    from ..operations.results import MemoryRecord

# What a list page needs besides its memories, at most: the keys, a cursor, a total and the hint.
PAGE_ENVELOPE = {
    "memories": [],
    "next_cursor": "c" * 160,
    "total": 10**12,
    "hint": "h" * 400,
}


def add_search_memories(box: ToolBox) -> None:
    @box.tool(READ_ONLY)
    @filter_arguments
    async def search_memories(
        query: Annotated[str, Field(description="What you are looking for, in natural language.")],
        limit: Annotated[
            int, Field(description="Maximum number of results.", ge=1, le=MAX_SEARCH_LIMIT)
        ] = 10,
        filters: FilterRequest = FilterRequest(),  # noqa: B008  # one argument per filter (params.filter_arguments)
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
            request = SearchRequest(query=query, limit=limit, filters=filters, namespace=namespace)
            found = search(engine, scope, request)
            results = [
                hit.full(explain=explain) if verbose else hit.compact(explain=explain) for hit in found.hits
            ]
            build = listing(
                {
                    "results": [],
                    "count": 0,
                    **found.floor_report(explain=explain),
                    # a reranker was skipped: the results are the ranker's order there
                    **({"warnings": list(found.warnings)} if found.warnings else {}),
                },
                "results",
                count="count",
                budget=box.budget(),
                noun="result",
                plural="results",
                how="get_memory returns any of them in full; a lower limit gives fewer, whole results",
            )
            return fit_entries(results, build, box.budget(), name=lambda r: r["id"])

        return await box.run(do)


def add_get_memory(box: ToolBox) -> None:
    @box.tool(READ_ONLY)
    async def get_memory(
        id: MemoryId,
        history: Annotated[
            bool, Field(description="Also return every version of this memory's chain, oldest first.")
        ] = False,
    ) -> dict[str, Any]:
        """Get one memory by id (or a unique start of its id, 8 characters or more), exactly as stored.

        status is "current", "superseded" (a newer version exists: head_id is its id), "deleted" or
        "expired". A superseded memory is returned as it is, never silently replaced by its newer version.
        With history=true, history lists the chain in order with the current version marked.
        The memory asked for always comes whole; versions of its history that do not fit the
        server's result size are named by id in omitted.
        """

        def do(engine: MemoryEngine, scope: Scope) -> dict[str, Any]:
            view = get(engine, scope, GetRequest(id=id, history=history)).full()
            if "history" not in view:
                return view  # whole, whatever its size (bounded by the content and metadata limits)
            versions = view.pop("history")
            build = listing(
                view,
                "history",
                budget=box.budget(),
                noun="version",
                plural="versions",
                how="get_memory returns each of them",
            )
            return fit_entries(versions, build, box.budget(), name=lambda v: v["id"])

        return await box.run(do)


def add_list_memories(box: ToolBox) -> None:
    @box.tool(READ_ONLY)
    @filter_arguments
    async def list_memories(
        limit: Annotated[int, Field(description="Page size.", ge=1, le=MAX_LIST_LIMIT)] = 50,
        cursor: Annotated[
            str | None, Field(description="The next_cursor of the previous page; omit it for the first page.")
        ] = None,
        filters: FilterRequest = FilterRequest(),  # noqa: B008  # one argument per filter (params.filter_arguments)
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
            tokens = box.budget()
            entries: dict[str, dict[str, Any]] = {}

            def measure(memory: MemoryRecord) -> int:  # its bytes in the page, the ", " before it included
                entry = memory.full() if verbose else memory.compact()
                entries[memory.id] = entry
                return json_bytes(entry) + 2

            room = budget_bytes(tokens) - json_bytes(PAGE_ENVELOPE)
            request = ListRequest(limit=limit, cursor=cursor, filters=filters, namespace=namespace)
            page = list_page(engine, scope, request, measure=measure, page_limit=room)
            memories = [entries[m.id] for m in page.memories]
            data: dict[str, Any] = {
                "memories": memories,
                "next_cursor": page.next_cursor,
                "total": page.total,
            }
            if page.next_cursor is not None:
                data["hint"] = page.next_page_hint(tokens)
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

        return await box.run(do)


def add_list_namespaces(box: ToolBox) -> None:
    @box.tool(READ_ONLY)
    async def list_namespaces() -> dict[str, Any]:
        """List every namespace (one per project or user) with its number of current memories, and the
        default namespace of this server."""

        def do(engine: MemoryEngine, scope: Scope) -> dict[str, Any]:
            listed = namespaces(engine, scope)
            build = listing(
                {"default": listed.default, "home": listed.home},
                "namespaces",
                budget=box.budget(),
                noun="namespace",
                plural="namespaces",
                how="list_memories and search_memories read any of them by name",
                by="name",
            )
            entries = [{"name": name, "memories": count} for name, count in sorted(listed.counts.items())]
            return fit_entries(entries, build, box.budget(), name=lambda n: n["name"], shortenable=False)

        return await box.run(do)
