"""Search reads a memory in its conversation: the engine brings each candidate's neighbouring turns
(within the caller's Scope and filters) and tells the ranker which candidates are neighbours."""

import pytest

from mcp_memory_core import MemoryEngine, Scope
from mcp_memory_core.filters import Filters
from mcp_memory_rankers import HybridRanker
from mcp_memory_testing import HashEmbedder, InMemoryStore, TickingClock

ALICE = Scope.for_user("alice", project="atlas")
BOB = Scope.for_user("bob", project="atlas")
CAROL = Scope.for_user("carol", project="atlas")

FILLER = [f"note {i} about lunch orders and printer paper" for i in range(12)]


@pytest.fixture
def engine() -> MemoryEngine:
    return MemoryEngine(
        InMemoryStore(), HashEmbedder(), HybridRanker(), clock=TickingClock(), require_scope=True
    )


def test_a_reply_that_matches_nothing_is_found_through_its_question(engine):
    for text in FILLER:
        engine.store_memory(text, thread="other", scope=ALICE)
    engine.store_memory("Mel: did you go camping in the mountains?", thread="s1", scope=ALICE)
    reply = engine.store_memory("Caroline: yes, wonderful, the kids loved it", thread="s1", scope=ALICE)
    hits = engine.search_memories("camping mountains", limit=3, scope=ALICE)
    by_id = {h.memory.id: h for h in hits}
    assert reply.memory.id in by_id
    assert by_id[reply.memory.id].parts["neighbour"] > 0


def test_neighbours_never_cross_the_scope(engine):
    """Two users naming the same thread: each one's conversation skips over the other's turns."""
    engine.store_memory("Alice: why did the deploy of atlas fail twice?", thread="standup", scope=ALICE)
    secret = engine.store_memory("Bob: my private salary talk", thread="standup", scope=BOB)
    after = engine.store_memory("Dan: a bad migration; we roll back tomorrow", thread="standup", scope=ALICE)
    hits = engine.search_memories("deploy of atlas failed", limit=10, scope=ALICE)
    assert secret.memory.id not in {h.memory.id for h in hits}
    by_id = {h.memory.id: h for h in hits}
    assert by_id[after.memory.id].parts["neighbour"] > 0  # its previous turn is alice's, not bob's
    assert engine.search_memories("deploy of atlas failed", limit=10, scope=CAROL) == []
    assert {h.memory.id for h in engine.search_memories("salary", limit=10, scope=BOB)} == {secret.memory.id}


def test_neighbours_obey_the_search_filters(engine):
    engine.store_memory("Mel: did you go camping in the mountains?", thread="s1", tags=["trip"], scope=ALICE)
    untagged = engine.store_memory("Caroline: yes, wonderful, the kids loved it", thread="s1", scope=ALICE)
    hits = engine.search_memories("camping", filters=Filters.parse(tags=["trip"]), scope=ALICE)
    assert untagged.memory.id not in {h.memory.id for h in hits}
    other_thread = engine.search_memories("camping", filters=Filters.parse(thread="s2"), scope=ALICE)
    assert other_thread == []


def test_a_deleted_turn_is_skipped_over_not_returned(engine):
    question = engine.store_memory("Mel: did you go camping in the mountains?", thread="s1", scope=ALICE)
    gone = engine.store_memory("Caroline: hmm, let me think", thread="s1", scope=ALICE)
    reply = engine.store_memory("Caroline: yes, wonderful, the kids loved it", thread="s1", scope=ALICE)
    engine.delete_memory(gone.memory.id, scope=ALICE)
    hits = {h.memory.id: h for h in engine.search_memories("camping mountains", scope=ALICE)}
    assert gone.memory.id not in hits
    assert question.memory.id in hits and hits[reply.memory.id].parts["neighbour"] > 0
