"""Restoring a soft-deleted memory (the web UI's undo): owner only, through the Scope, like every change."""

from datetime import timedelta

import pytest

from mcp_memory_core import MemoryEngine, MemoryNotFoundError, NotOwnerError, Scope
from mcp_memory_core.errors import MemoryStateError
from mcp_memory_core.filters import Filters
from mcp_memory_rankers import SimilarityRanker
from mcp_memory_testing import HashEmbedder, InMemoryStore, TickingClock

ALICE = Scope.for_user("alice", project="atlas", teams=["core"], teammates=["bob"])
BOB = Scope.for_user("bob", project="atlas", teams=["core"], teammates=["alice"])
MISSING = "00000000-0000-4000-8000-000000000000"


@pytest.fixture
def engine() -> MemoryEngine:
    return MemoryEngine(
        InMemoryStore(), HashEmbedder(), SimilarityRanker(), clock=TickingClock(), require_scope=True
    )


def test_a_restored_memory_is_current_searchable_and_listed_again(engine):
    memory = engine.store_memory("the staging database lives on pg-03", scope=ALICE).memory
    engine.delete_memory(memory.id, scope=ALICE)
    assert engine.search_memories("staging database", scope=ALICE) == []
    restored = engine.restore_memory(memory.id, scope=ALICE)
    assert restored.deleted_at is None and restored.content == memory.content
    assert engine.get_memory(memory.id, scope=ALICE).status == "current"
    assert [h.memory.id for h in engine.search_memories("staging database", scope=ALICE)] == [memory.id]
    assert [m.id for m in engine.list_memories(scope=ALICE).memories] == [memory.id]


def test_restoring_an_older_version_keeps_the_chain_resolving_to_its_head(engine):
    old = engine.store_memory("the build takes ten minutes", scope=ALICE).memory
    new = engine.update_memory(old.id, "the build takes four minutes", scope=ALICE).memory
    engine.delete_memory(old.id, scope=ALICE)
    engine.restore_memory(old.id, scope=ALICE)
    view = engine.get_memory(old.id, history=True, scope=ALICE)
    assert view.status == "superseded" and view.head_id == new.id
    assert [m.id for m in view.history or []] == [old.id, new.id]


def test_only_the_owner_restores_and_an_unreadable_memory_looks_missing(engine):
    team = engine.store_memory("core deploys on fridays", privacy_scope="team", scope=ALICE).memory
    private = engine.store_memory("alice's door code is 4711", scope=ALICE).memory
    for memory in (team, private):
        engine.delete_memory(memory.id, scope=ALICE)
    with pytest.raises(NotOwnerError, match="only its owner can restore it"):
        engine.restore_memory(team.id, scope=BOB)

    def message(memory_id: str) -> str:
        with pytest.raises(MemoryNotFoundError) as caught:
            engine.restore_memory(memory_id, scope=BOB)
        return str(caught.value).replace(memory_id, "ID")

    assert message(private.id) == message(MISSING)
    assert engine.get_memory(private.id, scope=ALICE).status == "deleted"


def test_a_memory_that_is_not_deleted_or_has_expired_is_not_restored(engine):
    live = engine.store_memory("the office opens at nine", scope=ALICE).memory
    with pytest.raises(MemoryStateError, match="is not deleted"):
        engine.restore_memory(live.id, scope=ALICE)
    note = engine.store_memory("scratch: branch feature-x", type="working", scope=ALICE).memory
    engine.clock.now += timedelta(days=3)  # type: ignore[attr-defined]
    assert engine.sweep() == 1
    with pytest.raises(MemoryStateError, match="expire again"):
        engine.restore_memory(note.id, scope=ALICE)
    assert engine.get_memory(note.id, scope=ALICE).status == "expired"


def test_a_purged_memory_cannot_be_restored(engine):
    memory = engine.store_memory("forget this entirely", scope=ALICE).memory
    engine.delete_memory(memory.id, hard=True, scope=ALICE)
    with pytest.raises(MemoryNotFoundError):
        engine.restore_memory(memory.id, scope=ALICE)


def test_the_pinned_filter_lists_pinned_or_unpinned_memories(engine):
    pinned = engine.store_memory("always use uv", pinned=True, scope=ALICE).memory
    loose = engine.store_memory("tabs are four spaces", scope=ALICE).memory
    only = engine.list_memories(filters=Filters.parse(pinned=True), scope=ALICE).memories
    assert [m.id for m in only] == [pinned.id]
    rest = engine.list_memories(filters=Filters.parse(pinned=False), scope=ALICE).memories
    assert [m.id for m in rest] == [loose.id]
    hits = engine.search_memories("use uv tabs spaces", filters=Filters.parse(pinned=True), scope=ALICE)
    assert [h.memory.id for h in hits] == [pinned.id]
