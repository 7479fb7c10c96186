"""Reading, once for the MCP tools and resources, the CLI and the web UI: searching, listing, one
memory by id, the namespaces, the tags and the statistics.

A surface turns its input into a :class:`SearchRequest`, a :class:`ListRequest` (their filters a
:class:`~.filters.FilterRequest`) or a :class:`GetRequest` and renders what comes back: the typed
results of :mod:`.results` (``SearchResult``, ``MemoryPage``, ``MemoryDetail``), :class:`Namespaces`,
or the statistics' dict.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from .filters import FilterRequest

if TYPE_CHECKING:
    from mcp_memory_core.engine import MemoryEngine
    from mcp_memory_core.models import Memory
    from mcp_memory_core.scope import Scope

    from .results import MemoryDetail, MemoryPage, MemoryRecord, SearchResult


class _Read(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    limit: int
    filters: FilterRequest = Field(default_factory=FilterRequest)
    namespace: str | None = None  # default: the scope's home namespaces; "*": every readable one


class SearchRequest(_Read):
    """The memories most relevant to ``query``, at most ``limit``."""

    query: str


class ListRequest(_Read):
    """One page of current memories in ``order`` (newest first, oldest first, or by importance),
    after ``cursor`` (a previous page's next_cursor, of the same order)."""

    cursor: str | None = None
    order: str = "newest"


def search(engine: MemoryEngine, scope: Scope, request: SearchRequest) -> SearchResult:
    from .results import SearchResult  # defining the result models takes ~30 ms: after the handshake

    found = engine.search(
        request.query, request.limit, request.filters.parse(), namespace=request.namespace, scope=scope
    )
    return SearchResult.of(found, engine.ttl, engine.clock())


def list_page(
    engine: MemoryEngine,
    scope: Scope,
    request: ListRequest,
    *,
    measure: Callable[[MemoryRecord], int] | None = None,
    page_limit: int | None = None,
) -> MemoryPage:
    """The page; ``measure`` (a memory's size as the surface renders it) and ``page_limit`` end it
    early at a size (the MCP result budget)."""
    from .results import MemoryPage, MemoryRecord

    ttl, now = engine.ttl, engine.clock()
    records: dict[str, MemoryRecord] = {}

    def record(memory: Memory) -> MemoryRecord:
        if memory.id not in records:
            records[memory.id] = MemoryRecord.of(memory, ttl, now)
        return records[memory.id]

    page = engine.list_memories(
        request.limit,
        request.cursor,
        request.filters.parse(),
        namespace=request.namespace,
        scope=scope,
        measure=(lambda memory: measure(record(memory))) if measure is not None else None,
        page_limit=page_limit,
        order=request.order,
    )
    for memory in page.memories:
        record(memory)
    return MemoryPage.of(page, records)


class GetRequest(BaseModel):
    """Memory ``id`` as stored (never swapped for its newer version); with ``history`` every version
    of its chain the scope may read, oldest first."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    history: bool = False


def get(engine: MemoryEngine, scope: Scope, request: GetRequest) -> MemoryDetail:
    from .results import MemoryDetail

    view = engine.get_memory(request.id, history=request.history, scope=scope)
    return MemoryDetail.of(view, scope, engine.ttl, engine.clock())


class Namespaces(BaseModel):
    """The namespaces holding memories the scope may read, with how many are current (``counts``);
    the scope's ``default`` namespace (where it stores) and its ``home`` ones (what it reads by default)."""

    model_config = ConfigDict(frozen=True)

    counts: dict[str, int]
    default: str
    home: list[str]


def namespaces(engine: MemoryEngine, scope: Scope) -> Namespaces:
    return Namespaces(
        counts=engine.list_namespaces(scope=scope),
        default=scope.default_namespace,
        home=list(scope.home_namespaces),
    )


def tags(engine: MemoryEngine, scope: Scope, namespace: str | None = None) -> list[tuple[str, int]]:
    """Each tag with how many current memories the scope may read carry it (in ``namespace``: the
    home namespaces by default, ``"*"``: every readable one), the most used first."""
    counts = engine.tag_counts(namespace, scope=scope)
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


def stats(engine: MemoryEngine, scope: Scope) -> dict[str, Any]:
    """What the scope may read, counted (per namespace, by type in its default namespace), with the
    model, the store and the TTL settings."""
    return engine.stats(scope=scope)
