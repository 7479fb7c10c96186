"""Searching and listing, once for the MCP tools, the CLI and the web UI.

A surface turns its input into a :class:`SearchRequest` or a :class:`ListRequest` (its filters a
:class:`~.filters.FilterRequest`) and renders what comes back: the engine's ``SearchResults`` or
``Page`` (:mod:`.serialize` makes the dicts the tools and ``--json`` show).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from .filters import FilterRequest

if TYPE_CHECKING:
    from mcp_memory_core.engine import MemoryEngine
    from mcp_memory_core.models import Memory, Page, SearchResults
    from mcp_memory_core.scope import Scope


class _Read(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    limit: int
    filters: FilterRequest = Field(default_factory=FilterRequest)
    namespace: str | None = None  # default: the scope's home namespaces; "*": every readable one


class SearchRequest(_Read):
    """The memories most relevant to ``query``, at most ``limit``."""

    query: str


class ListRequest(_Read):
    """One page of current memories, newest first, after ``cursor`` (a previous page's next_cursor)."""

    cursor: str | None = None


def search(engine: MemoryEngine, scope: Scope, request: SearchRequest) -> SearchResults:
    return engine.search(
        request.query, request.limit, request.filters.parse(), namespace=request.namespace, scope=scope
    )


def list_page(
    engine: MemoryEngine,
    scope: Scope,
    request: ListRequest,
    *,
    measure: Callable[[Memory], int] | None = None,
    page_limit: int | None = None,
) -> Page:
    """The page; ``measure`` and ``page_limit`` end it early at a size (the MCP result budget)."""
    return engine.list_memories(
        request.limit,
        request.cursor,
        request.filters.parse(),
        namespace=request.namespace,
        scope=scope,
        measure=measure,
        page_limit=page_limit,
    )
