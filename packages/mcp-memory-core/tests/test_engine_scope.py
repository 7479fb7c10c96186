"""The Scope rules, enforced by the engine for every call: who may read and who may change a memory."""

import io

import pytest

from mcp_memory_core import (
    InvalidInputError,
    MemoryEngine,
    MemoryNotFoundError,
    NotOwnerError,
    Scope,
)
from mcp_memory_core.transfer import export_memories, read_mcp_memory_jsonl
from mcp_memory_rankers import SimilarityRanker
from mcp_memory_testing import HashEmbedder, InMemoryStore, TickingClock

ALICE = Scope.for_user("alice", project="atlas", teams=["core"], teammates=["bob"])
BOB = Scope.for_user("bob", project="atlas", teams=["core"], teammates=["alice"])
CAROL = Scope.for_user("carol", project="atlas")


@pytest.fixture
def engine() -> MemoryEngine:
    return MemoryEngine(
        InMemoryStore(), HashEmbedder(), SimilarityRanker(), clock=TickingClock(), require_scope=True
    )


def contents(hits):
    return {h.memory.content for h in hits}


def test_a_call_without_scope_is_refused_when_scopes_are_required(engine):
    with pytest.raises(RuntimeError, match="needs a Scope"):
        engine.search_memories("anything")


def test_private_memory_is_invisible_to_everyone_else_everywhere(engine):
    secret = engine.store_memory("alice's salary is 90k", scope=ALICE).memory
    assert secret.owner == "alice" and secret.privacy_scope == "private"
    for other in (BOB, CAROL):
        assert engine.search_memories("salary", scope=other) == []
        assert engine.search_memories("salary", namespace="*", scope=other) == []
        assert engine.list_memories(namespace="*", scope=other).memories == []
        assert engine.count("*", scope=other) == 0
        assert engine.list_namespaces(scope=other) == {}
        assert engine.recall("salary", 500, scope=other).text == ""
        assert list(engine.iter_memories("*", scope=other)) == []
        stats = engine.stats(scope=other)
        assert stats["namespaces"] == {} and stats["stored_versions_all_namespaces"] == 0
    assert contents(engine.search_memories("salary", scope=ALICE)) == {secret.content}


def test_an_id_outside_the_scope_answers_exactly_like_a_missing_id(engine):
    secret = engine.store_memory("alice's door code is 4711", scope=ALICE).memory
    missing = "00000000-0000-4000-8000-000000000000"

    def message(call, memory_id):
        with pytest.raises(MemoryNotFoundError) as caught:
            call(memory_id)
        return str(caught.value).replace(memory_id, "ID")

    calls = [
        lambda i: engine.get_memory(i, scope=BOB),
        lambda i: engine.get_memory(i, history=True, scope=BOB),
        lambda i: engine.update_memory(i, "hijacked", scope=BOB),
        lambda i: engine.delete_memory(i, scope=BOB),
        lambda i: engine.delete_memory(i, hard=True, scope=BOB),
        lambda i: engine.pin_memory(i, scope=BOB),
    ]
    for call in calls:
        assert message(call, secret.id) == message(call, missing)
    assert engine.get_memory(secret.id, scope=ALICE).memory.content == "alice's door code is 4711"
    assert engine.get_memory(secret.id, scope=ALICE).status == "current"


def test_team_memories_reach_teammates_only_and_public_reaches_everyone(engine):
    team = engine.store_memory("the core team deploys on fridays", privacy_scope="team", scope=ALICE)
    public = engine.store_memory("the office wifi is called atlas-guest", privacy_scope="public", scope=ALICE)
    assert contents(engine.search_memories("deploys fridays wifi", scope=BOB)) == {
        team.memory.content,
        public.memory.content,
    }
    assert contents(engine.search_memories("deploys fridays wifi", scope=CAROL)) == {public.memory.content}
    with pytest.raises(MemoryNotFoundError):
        engine.get_memory(team.memory.id, scope=CAROL)
    assert engine.get_memory(team.memory.id, scope=BOB).memory.owner == "alice"


def test_only_the_owner_changes_a_memory_others_can_read(engine):
    public = engine.store_memory("lunch is at noon", privacy_scope="public", scope=ALICE).memory
    for change in (
        lambda: engine.update_memory(public.id, "lunch is at one", scope=BOB),
        lambda: engine.delete_memory(public.id, scope=BOB),
        lambda: engine.delete_memory(public.id, hard=True, scope=BOB),
        lambda: engine.pin_memory(public.id, scope=BOB),
    ):
        with pytest.raises(NotOwnerError, match="only its owner"):
            change()
    view = engine.get_memory(public.id, scope=ALICE)
    assert view.status == "current" and not view.memory.pinned
    assert engine.update_memory(public.id, "lunch is at one", scope=ALICE).memory.owner == "alice"


def test_clear_removes_only_the_callers_own_memories(engine):
    engine.store_memory("alice keeps this", namespace="atlas", privacy_scope="public", scope=ALICE)
    engine.store_memory("bob clears this", namespace="atlas", scope=BOB)
    assert engine.clear_namespace("atlas", scope=BOB) == 1
    assert contents(engine.search_memories("keeps clears", scope=BOB)) == {"alice keeps this"}


def test_duplicates_are_per_owner_and_never_reveal_another_users_memory(engine):
    engine.store_memory("I am allergic to peanuts", scope=ALICE)
    outcome = engine.store_memory("I am allergic to peanuts", scope=BOB)
    assert outcome.status == "stored" and outcome.similar == []
    assert engine.store_memory("I am allergic to peanuts", scope=BOB).status == "duplicate"


def test_a_version_made_private_is_not_returned_through_its_public_wording(engine):
    old = engine.store_memory("the launch is in march", privacy_scope="public", scope=ALICE).memory
    engine.update_memory(old.id, "the launch moved to may", privacy_scope="private", scope=ALICE)
    assert engine.search_memories("launch march", scope=BOB) == []
    view = engine.get_memory(old.id, history=True, scope=BOB)
    assert view.head_id is None  # the current version is private: not even its id
    assert [m.id for m in view.history or []] == [old.id]


def test_the_old_public_version_does_not_name_its_private_successor(engine):
    old = engine.store_memory("the offsite is in lisbon", privacy_scope="public", scope=ALICE).memory
    private = engine.update_memory(old.id, "the offsite is in porto", privacy_scope="private", scope=ALICE)
    for view in (engine.get_memory(old.id, scope=BOB), engine.get_memory(old.id, history=True, scope=BOB)):
        assert view.status == "superseded" and view.head_id is None
        assert view.memory.superseded_by is None  # superseded, but not by anything bob may read
        assert all(m.superseded_by is None for m in view.history or [])
    assert engine.get_memory(old.id, scope=ALICE).memory.superseded_by == private.memory.id


def test_superseded_by_skips_a_private_middle_version_to_the_next_readable_one(engine):
    first = engine.store_memory("standup is at nine", privacy_scope="public", scope=ALICE).memory
    middle = engine.update_memory(first.id, "standup is at ten", privacy_scope="private", scope=ALICE).memory
    last = engine.update_memory(middle.id, "standup is at eleven", privacy_scope="public", scope=ALICE).memory
    view = engine.get_memory(first.id, history=True, scope=BOB)
    assert view.memory.superseded_by == last.id and view.head_id == last.id
    assert [(m.id, m.superseded_by) for m in view.history or []] == [(first.id, last.id), (last.id, None)]


def test_namespaces_default_to_project_and_user_and_star_means_readable(engine):
    engine.store_memory("alice prefers tabs", namespace="user", scope=ALICE)
    engine.store_memory("atlas uses postgres", scope=ALICE)
    engine.store_memory("zephyr uses redis", namespace="zephyr", scope=ALICE)
    assert engine.store_memory("a default write", scope=ALICE).memory.namespace == "atlas"
    assert contents(engine.search_memories("prefers uses", scope=ALICE)) >= {
        "alice prefers tabs",
        "atlas uses postgres",
    }
    assert "zephyr uses redis" not in contents(engine.search_memories("uses", limit=50, scope=ALICE))
    assert "zephyr uses redis" in contents(engine.search_memories("uses", namespace="*", scope=ALICE))
    home = Scope.for_user("alice")  # no project (started in the home directory): writes go to user
    assert engine.store_memory("no project here", scope=home).memory.namespace == "user"


def test_namespace_limits_of_a_scope(engine):
    limited = Scope.for_user("dave", project="atlas", readable=["atlas"], writable=["atlas"])
    with pytest.raises(InvalidInputError, match="may not write to namespace 'user'"):
        engine.store_memory("x", namespace="user", scope=limited)
    with pytest.raises(InvalidInputError, match="may not read namespace 'zephyr'"):
        engine.search_memories("x", namespace="zephyr", scope=limited)
    engine.store_memory("dave's note", scope=limited)
    engine.store_memory("elsewhere", namespace="zephyr", privacy_scope="public", scope=ALICE)
    assert contents(engine.search_memories("note elsewhere", namespace="*", scope=limited)) == {"dave's note"}


def test_export_holds_only_the_callers_own_memories_and_import_refuses_others(engine):
    engine.store_memory("alice's own", scope=ALICE)
    engine.store_memory("bob's public", privacy_scope="public", scope=BOB)
    out = io.StringIO()
    assert export_memories(engine, out, scope=ALICE) == 1
    assert "bob's public" not in out.getvalue()
    records = list(read_mcp_memory_jsonl(io.StringIO(out.getvalue())))
    fresh = MemoryEngine(InMemoryStore(), HashEmbedder(), SimilarityRanker(), require_scope=True)
    with pytest.raises(InvalidInputError, match="belongs to 'alice'"):
        fresh.import_memories(records, scope=BOB)
    assert fresh.import_memories(records, scope=ALICE).inserted == 1


def test_a_thread_filter_never_reaches_past_the_scope(engine):
    """Naming another user's thread finds only what the scope already allows: their public memories."""
    from mcp_memory_core.filters import Filters

    engine.store_memory("alice's salary is 90k", thread="alice-chat", scope=ALICE)
    engine.store_memory(
        "alice likes the new office", thread="alice-chat", privacy_scope="public", scope=ALICE
    )
    theirs = Filters.parse(thread="alice-chat")
    assert contents(engine.search_memories("alice", filters=theirs, scope=CAROL)) == {
        "alice likes the new office"
    }
    assert [m.content for m in engine.list_memories(filters=theirs, scope=CAROL).memories] == [
        "alice likes the new office"
    ]
    assert len(engine.list_memories(filters=theirs, scope=ALICE).memories) == 2


def test_tag_counts_count_only_the_current_memories_the_scope_may_read(engine, monkeypatch):
    from mcp_memory_core.engine import reads

    monkeypatch.setattr(reads, "LIST_CHUNK", 2)  # several chunks: every memory counted once
    engine.store_memory("alice's PIN is 4711", tags=["secret", "bank"], scope=ALICE)
    engine.store_memory("deploys on fridays", tags=["ops"], privacy_scope="team", scope=ALICE)
    engine.store_memory("wifi is atlas-guest", tags=["office", "ops"], privacy_scope="public", scope=ALICE)
    old = engine.store_memory("coffee on floor 2", tags=["office"], privacy_scope="public", scope=ALICE)
    engine.update_memory(old.memory.id, "coffee on floor 3", tags=["office", "kitchen"], scope=ALICE)
    gone = engine.store_memory("parking on level 2", tags=["office"], privacy_scope="public", scope=ALICE)
    engine.delete_memory(gone.memory.id, scope=ALICE)
    assert engine.tag_counts(scope=ALICE) == {"secret": 1, "bank": 1, "ops": 2, "office": 2, "kitchen": 1}
    assert engine.tag_counts(scope=BOB) == {"ops": 2, "office": 2, "kitchen": 1}
    assert engine.tag_counts(scope=CAROL) == {"ops": 1, "office": 2, "kitchen": 1}
    assert engine.tag_counts("elsewhere", scope=ALICE) == {}
