"""Reading one memory, the namespaces and the statistics are operations, once for the MCP tools and
resources, the CLI and the web UI: each runs in the caller's Scope."""

from __future__ import annotations

import pytest

from mcp_memory_core.engine import MemoryEngine
from mcp_memory_core.errors import MemoryNotFoundError
from mcp_memory_core.settings import Settings
from mcp_memory_server.operations.read import (
    GetRequest,
    ListRequest,
    SearchRequest,
    get,
    list_page,
    namespaces,
    search,
    stats,
)
from mcp_memory_server.operations.results import MemoryDetail, MemoryPage, MemoryRecord, SearchResult
from mcp_memory_server.operations.write import StoreRequest, UpdateRequest, store, update


@pytest.fixture
def engine(settings: Settings):
    from mcp_memory_server.runtime.assembly import build_engine

    built = build_engine(settings)
    yield built
    built.close()


def test_get_returns_the_version_asked_for_with_its_chain(engine: MemoryEngine):
    scope = engine.default_scope
    old = store(engine, scope, StoreRequest(content="The deploy key rotates monthly."))
    new = update(engine, scope, UpdateRequest(id=old.id, content="The deploy key rotates weekly."))
    view = get(engine, scope, GetRequest(id=old.id, history=True))
    assert (view.memory.id, view.status, view.head_id) == (old.id, "superseded", new.id)
    assert [m.id for m in view.history or []] == [old.id, new.id]
    assert get(engine, scope, GetRequest(id=new.id)).history is None


def test_get_refuses_an_unknown_id_in_the_engines_words(engine: MemoryEngine):
    with pytest.raises(MemoryNotFoundError):
        get(engine, engine.default_scope, GetRequest(id="00000000-0000-4000-8000-000000000000"))


def test_namespaces_counts_the_readable_ones_and_names_the_scopes_own(engine: MemoryEngine):
    scope = engine.default_scope
    store(engine, scope, StoreRequest(content="Prefers tabs.", namespace="user"))
    store(engine, scope, StoreRequest(content="The API is REST."))
    store(engine, scope, StoreRequest(content="The CLI is click."))
    listed = namespaces(engine, scope)
    assert listed.counts == {"user": 1, scope.default_namespace: 2}
    assert listed.default == scope.default_namespace
    assert listed.home == list(scope.home_namespaces)


def test_stats_are_the_engines_for_the_scope(engine: MemoryEngine):
    scope = engine.default_scope
    store(engine, scope, StoreRequest(content="The API is REST."))
    assert stats(engine, scope) == engine.stats(scope=scope)


def test_search_list_and_get_give_typed_results_every_surface_renders(engine: MemoryEngine):
    scope = engine.default_scope
    old = store(engine, scope, StoreRequest(content="The deploy key rotates monthly.", tags=["deploy"]))
    new = update(engine, scope, UpdateRequest(id=old.id, content="The deploy key rotates weekly."))

    found = search(engine, scope, SearchRequest(query="deploy key rotates monthly", limit=5))
    assert isinstance(found, SearchResult)
    hit = found.hits[0]
    assert (hit.memory.id, hit.matched_id) == (new.id, old.id)  # the old wording matched its new version
    compact = hit.compact()
    assert set(compact) == {"id", "content", "namespace", "occurred_at", "tags", "score", "matched_id"}
    assert {"age", "expires_at"} <= set(hit.full()) and "age" not in hit.full(lifetime=False)

    measured: list[MemoryRecord] = []
    page = list_page(
        engine, scope, ListRequest(limit=5), measure=lambda m: measured.append(m) or 1, page_limit=100
    )
    assert isinstance(page, MemoryPage) and [m.id for m in page.memories] == [new.id]
    assert measured == page.memories  # the sizes were measured on the records the page holds
    assert page.full()["memories"][0]["expires_at"] is None  # semantic memories never expire

    detail = get(engine, scope, GetRequest(id=new.id, history=True))
    assert isinstance(detail, MemoryDetail) and detail.can_change
    assert [v["current"] for v in detail.full()["history"]] == [False, True]
