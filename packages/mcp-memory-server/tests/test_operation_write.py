"""Storing and updating are one operation for the MCP tools, the CLI and the web UI: its requests carry
every option of the engine's calls, and the engine refuses a bad value in its own words."""

from __future__ import annotations

import inspect

import pytest

from mcp_memory_core.engine import MemoryEngine
from mcp_memory_core.errors import InvalidInputError
from mcp_memory_core.settings import Settings
from mcp_memory_server.operations.write import StoreRequest, UpdateRequest, store, update


@pytest.fixture
def engine(settings: Settings):
    from mcp_memory_server.runtime.assembly import build_engine

    built = build_engine(settings)
    yield built
    built.close()


def _options(method: object, *positional: str) -> set[str]:
    return set(inspect.signature(method).parameters) - {"self", "scope", *positional}  # type: ignore[arg-type]


def test_the_requests_carry_every_option_of_the_engines_calls():
    assert set(StoreRequest.model_fields) == _options(MemoryEngine.store_memory)
    assert set(UpdateRequest.model_fields) == _options(MemoryEngine.update_memory, "memory_id") | {"id"}


def test_store_then_update_gives_the_receipts_every_surface_shows(engine: MemoryEngine):
    scope = engine.default_scope
    stored = store(engine, scope, StoreRequest(content="The deploy key rotates monthly.", tags=["deploy"]))
    assert stored.status == "stored" and stored.namespace == scope.default_namespace
    assert stored.full() == {
        "id": stored.id,
        "status": "stored",
        "namespace": scope.default_namespace,
        "similar": [],
    }
    updated = update(engine, scope, UpdateRequest(id=stored.id, content="The deploy key rotates weekly."))
    assert updated.full() == {"id": updated.id, "superseded": stored.id, "status": "updated"}
    assert engine.get_memory(updated.id, scope=scope).memory.tags == ("deploy",)  # left out: kept


def test_a_bad_value_is_refused_in_the_engines_words(engine: MemoryEngine):
    with pytest.raises(InvalidInputError, match="importance"):
        store(engine, engine.default_scope, StoreRequest(content="x", importance=7))
