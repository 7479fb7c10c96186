"""Tidying: what the engine proposes (near-duplicate clusters, superseded leftovers, expired working
memories, junk) with reasons, and what applying them does: duplicates fold into version chains, junk
and expired memories are tombstoned, nothing else is touched, and a memory changed since the proposal
is skipped and said. The Scope decides what each user may tidy."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest

from mcp_memory_core import MemoryEngine, Scope
from mcp_memory_core.engine.tidy import TidyProposal
from mcp_memory_core.tidying import duplicate_clusters, minimal_pair
from mcp_memory_rankers import SimilarityRanker
from mcp_memory_testing import HashEmbedder, InMemoryStore, TickingClock

ALICE = Scope.for_user("alice", project="atlas", teams=["core"], teammates=["bob"])
BOB = Scope.for_user("bob", project="atlas", teams=["core"], teammates=["alice"])


@pytest.fixture
def clock() -> TickingClock:
    return TickingClock()


@pytest.fixture
def engine(clock: TickingClock) -> MemoryEngine:
    # HashEmbedder: bag of words, so the same words in another order have cosine 1.0
    return MemoryEngine(InMemoryStore(), HashEmbedder(), SimilarityRanker(), clock=clock)


def store(engine: MemoryEngine, content: str, **fields: object) -> str:
    outcome = engine.store_memory(content, **fields)  # type: ignore[arg-type]
    assert outcome.status == "stored", outcome
    return outcome.memory.id


def by_kind(proposals: list[TidyProposal], kind: str) -> list[TidyProposal]:
    return [p for p in proposals if p.kind == kind]


def snapshot(engine: MemoryEngine) -> dict[str, object]:
    return {m.id: m for m in engine.store.iter_all()}


# -- proposals ---------------------------------------------------------------------------------------
def test_near_duplicates_are_one_cluster_with_the_newest_kept_and_each_similarity(engine):
    first = store(engine, "Maya lives in Berlin with her cat")
    second = store(engine, "With her cat Maya lives in Berlin")
    third = store(engine, "Berlin: Maya lives with her cat in")
    other = store(engine, "The deploy script needs Python 3.12")
    plan = engine.tidy_proposals()
    [cluster] = by_kind(plan.proposals, "duplicates")
    assert cluster.keep == third
    assert set(cluster.ids) == {first, second, third}
    assert set(cluster.changes) == {first, second}
    pairs = {frozenset((a, b)): s for a, b, s in cluster.similarities}
    assert set(pairs) == {frozenset((first, second)), frozenset((first, third)), frozenset((second, third))}
    assert all(s >= engine.duplicate_threshold for s in pairs.values())
    assert "near-duplicates" in cluster.reason and "0.87" in cluster.reason
    assert other not in {i for p in plan.proposals for i in p.ids}


def test_clusters_are_transitive_and_name_each_linking_similarity():
    ids = ["a", "b", "c", "d"]
    vectors = np.array([[1.0, 0.0, 0.0], [0.9, 0.436, 0.0], [0.62, 0.785, 0.0], [0.0, 0.0, 1.0]])
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    [cluster] = duplicate_clusters(ids, vectors, 0.87)
    assert cluster.members == ("a", "b", "c")  # a~b and b~c: one cluster, though a and c are not close
    assert [(x, y) for x, y, _ in cluster.links] == [("a", "b"), ("b", "c")]
    assert all(s >= 0.87 for _, _, s in cluster.links)


def test_different_namespaces_types_or_visibility_never_cluster(engine):
    store(engine, "Maya lives in Berlin")
    store(engine, "Berlin Maya lives in", namespace="user")
    store(engine, "in Berlin lives Maya", type="working")
    store(engine, "lives in Berlin Maya", privacy_scope="public")
    assert by_kind(engine.tidy_proposals(namespace="*").proposals, "duplicates") == []


def test_a_restatement_made_after_the_update_or_elsewhere_is_no_leftover(engine):
    versioned = store(engine, "The office is in Munich")
    engine.update_memory(versioned, "The office is in Hamburg")
    store(engine, "the office is in munich")  # said AFTER the update: the current truth again
    store(engine, "The office is in Munich", namespace="user")  # another namespace
    assert by_kind(engine.tidy_proposals(namespace="*").proposals, "superseded") == []


def test_a_live_memory_equal_to_an_older_version_made_before_the_update_is_a_leftover(engine, clock):
    stale = store(engine, "Deploys go out on Fridays")
    versioned = store(engine, "Deploys go out on Fridays.")
    head = engine.update_memory(versioned, "Deploys go out on Tuesdays").memory.id
    plan = engine.tidy_proposals()
    [leftover] = by_kind(plan.proposals, "superseded")
    assert leftover.keep == head and leftover.changes == (stale,)
    assert versioned in leftover.reason and head in leftover.reason


def test_expired_working_memories_not_yet_swept_are_proposed(engine, clock):
    old = store(engine, "Rebase the feature branch", type="working")
    pinned = store(engine, "Rebase the release branch", type="working", pinned=True)
    clock.now += timedelta(hours=49)
    fresh = store(engine, "Review the open pull request", type="working")
    plan = engine.tidy_proposals()
    expired = by_kind(plan.proposals, "expired")
    assert [p.changes for p in expired] == [(old,)]
    assert "working" in expired[0].reason and "expired" in expired[0].reason
    assert pinned not in {i for p in plan.proposals for i in p.ids}
    assert fresh not in {i for p in plan.proposals for i in p.ids}


@pytest.mark.parametrize("content", ["ok", "Thanks so much!", "...", "👍", "yes please", "hmm"])
def test_junk_is_proposed(engine, content):
    memory_id = store(engine, content)
    [junk] = by_kind(engine.tidy_proposals().proposals, "junk")
    assert junk.changes == (memory_id,) and "content" in junk.reason


@pytest.mark.parametrize(
    "content", ["Maya is vegetarian", "Maya", "ok 42", "src/main.py", "I'm vegetarian", "Use uv"]
)
def test_short_real_facts_are_not_junk(engine, content):
    store(engine, content)
    assert engine.tidy_proposals().proposals == []


def test_pinned_memories_are_never_proposed(engine):
    store(engine, "ok", pinned=True)
    store(engine, "Maya lives in Berlin", pinned=True)
    store(engine, "Berlin Maya lives in", pinned=True)
    assert engine.tidy_proposals().proposals == []


# -- apply ---------------------------------------------------------------------------------------------
def test_apply_folds_duplicates_into_a_chain_and_tombstones_junk_and_nothing_else(engine, clock):
    first = store(engine, "Maya lives in Berlin with her cat")
    second = store(engine, "With her cat Maya lives in Berlin")
    junk = store(engine, "thanks!")
    expired = store(engine, "Rebase the feature branch", type="working")
    clock.now += timedelta(hours=49)
    keep = store(engine, "Berlin: Maya lives with her cat in")
    bystander = store(engine, "The deploy script needs Python 3.12")
    before = snapshot(engine)
    plan = engine.tidy_proposals()
    outcome = engine.apply_tidy(plan.proposals)
    assert outcome.folded == {keep: [first, second]}
    assert outcome.junk == [junk] and outcome.expired == [expired] and outcome.skipped == []
    assert outcome.counts == {"folded": 2, "junk": 1, "expired": 1, "superseded": 0, "skipped": 0}
    after = snapshot(engine)
    changed = {i for i in after if after[i] != before[i]}
    assert changed == {first, second, junk, expired}
    assert after[bystander] == before[bystander] and after[keep] == before[keep]
    # history and restore still work
    view = engine.get_memory(first, history=True)
    assert view.head_id == keep and view.status == "superseded"
    assert [m.id for m in view.history] == [first, second, keep]
    assert [m.id for m in engine.get_memory(keep, history=True).history] == [first, second, keep]
    assert engine.search_memories("Maya cat Berlin")[0].memory.id == keep
    assert engine.get_memory(junk).status == "deleted"
    engine.restore_memory(junk)
    assert engine.get_memory(junk).status == "current"
    assert engine.get_memory(expired).status == "expired"
    assert [p.kind for p in engine.tidy_proposals().proposals] == ["junk"]  # restored: proposed again


def test_apply_folds_a_superseded_leftover_into_its_chain(engine):
    stale = store(engine, "Deploys go out on Fridays")
    versioned = store(engine, "Deploys go out on Fridays.")
    head = engine.update_memory(versioned, "Deploys go out on Tuesdays").memory.id
    outcome = engine.apply_tidy(engine.tidy_proposals().proposals)
    assert outcome.superseded == {head: [stale]}
    assert engine.get_memory(stale).head_id == head
    assert engine.tidy_proposals().proposals == []


def test_a_memory_changed_since_the_proposal_is_skipped_and_said(engine):
    first = store(engine, "Maya lives in Berlin")
    second = store(engine, "Berlin Maya lives in")
    junk = store(engine, "ok")
    plan = engine.tidy_proposals()
    engine.pin_memory(first)
    engine.update_memory(junk, "ok: the deploy is at 5pm")
    outcome = engine.apply_tidy(plan.proposals)
    assert outcome.folded == {} and outcome.junk == []
    reasons = {p.kind: reason for p, reason in outcome.skipped}
    assert first in reasons["duplicates"] and "changed since" in reasons["duplicates"]
    assert junk in reasons["junk"] and "changed since" in reasons["junk"]
    assert engine.get_memory(second).status == "current"


def test_a_change_between_the_check_and_the_write_is_caught_under_the_lock(engine, monkeypatch):
    junk = store(engine, "ok")
    plan = engine.tidy_proposals()
    real = engine.tidy.current_plan

    def plan_then_change(*args, **kwargs):
        found = real(*args, **kwargs)
        engine.pin_memory(junk)  # another writer, after the recomputation, before the write
        return found

    monkeypatch.setattr(engine.tidy, "current_plan", plan_then_change)
    outcome = engine.apply_tidy(plan.proposals)
    assert outcome.junk == [] and len(outcome.skipped) == 1
    assert engine.get_memory(junk).status == "current"


def test_a_forged_proposal_does_nothing(engine):
    keep = store(engine, "The deploy script needs Python 3.12")
    other = store(engine, "Maya is vegetarian")
    forged = TidyProposal(
        kind="duplicates",
        ids=(keep, other),
        keep=keep,
        reason="made up",
        stamps=tuple(engine.get_memory(i).memory.updated_at.isoformat() for i in (keep, other)),
    )
    outcome = engine.apply_tidy([forged])
    assert outcome.folded == {} and "no longer proposed" in outcome.skipped[0][1]
    assert engine.get_memory(other).status == "current"


# -- the Scope -----------------------------------------------------------------------------------------
def test_another_users_memories_are_never_proposed_nor_applied():
    engine = MemoryEngine(
        InMemoryStore(), HashEmbedder(), SimilarityRanker(), clock=TickingClock(), require_scope=True
    )
    alices = [
        engine.store_memory(text, privacy_scope="team", scope=ALICE).memory.id
        for text in ("Maya lives in Berlin", "Berlin Maya lives in", "ok")
    ]
    engine.store_memory("Berlin lives Maya in", scope=BOB)
    bobs_plan = engine.tidy_proposals(scope=BOB, namespace="*")
    assert bobs_plan.proposals == []
    alices_plan = engine.tidy_proposals(scope=ALICE, namespace="*")
    assert {i for p in alices_plan.proposals for i in p.ids} == set(alices)
    before = snapshot(engine)
    outcome = engine.apply_tidy(alices_plan.proposals, scope=BOB, namespace="*")
    assert outcome.folded == {} and outcome.junk == [] and len(outcome.skipped) == 2
    assert snapshot(engine) == before
    assert all("missing" in reason for _, reason in outcome.skipped)


def test_the_threshold_is_the_engines_duplicate_threshold():
    engine = MemoryEngine(InMemoryStore(), HashEmbedder(), SimilarityRanker(), duplicate_threshold=0.5)
    assert engine.tidy_proposals().threshold == 0.5
    assert (
        MemoryEngine(InMemoryStore(), HashEmbedder(), SimilarityRanker()).tidy_proposals().threshold == 0.87
    )


@pytest.mark.parametrize(
    ("first", "second", "minimal"),
    [
        ("Maya likes hiking in the Alps", "Maya likes skiing in the Alps", True),  # one word replaced
        ("Maya is allergic to cats", "Maya's son is allergic to cats", True),  # two words apart
        ("Atlas uses Redis 6 for caching", "Atlas now uses Redis 7 for caching", True),
        ("Deploys go out on Fridays.", "deploys go out on FRIDAYS!", False),  # the same words
        ("Maya's manager is Dana Kim", "Dana Kim is Maya's manager", False),  # reordered
        ("Maya drinks her coffee black", "Maya takes her coffee black, no sugar or milk", False),
    ],
)
def test_a_minimal_pair_is_one_or_two_words_apart(first, second, minimal):
    assert minimal_pair(first, second) is minimal
    assert minimal_pair(second, first) is minimal


def test_a_minimal_pair_is_never_linked_nor_clustered():
    ids = ["hiking", "skiing", "enjoys"]
    texts = [
        "Maya likes hiking in the Alps",
        "Maya likes skiing in the Alps",
        "In the Alps Maya enjoys hiking",
    ]
    same = np.ones((3, 4)) / 2.0  # every cosine is 1.0
    assert duplicate_clusters(ids[:2], same[:2], 0.9) != []  # cosine alone links them
    assert duplicate_clusters(ids[:2], same[:2], 0.9, texts=texts[:2]) == []
    # linked through a third memory, the two would land in one cluster: no cluster is proposed
    assert duplicate_clusters(ids, same, 0.9, texts=texts) == []
    folded = duplicate_clusters(["a", "b"], same[:2], 0.9, texts=["Use uv.", "use UV"])
    assert [c.members for c in folded] == [("a", "b")]


def test_the_engine_never_folds_a_minimal_pair(engine):
    store(engine, "Maya likes hiking in the Alps")
    store(engine, "Maya likes skiing in the Alps")
    store(engine, "the Alps Maya likes skiing in")  # the same words as the second, reordered: folded
    [cluster] = by_kind(engine.tidy_proposals().proposals, "duplicates")
    assert cluster.contents == ("Maya likes skiing in the Alps", "the Alps Maya likes skiing in")


def test_the_same_words_in_another_order_are_no_minimal_pair():
    assert not minimal_pair("Maya lives in Berlin", "Berlin Maya lives in")  # one word moved: 2 edits
    assert minimal_pair("Maya lives in Berlin", "Maya lives in Paris")


def test_clusters_are_the_same_whatever_the_block_of_rows_computed_at_once(monkeypatch):
    import mcp_memory_core.tidying as tidying

    rng = np.random.default_rng(7)
    base = rng.normal(size=(4, 16))
    vectors = np.repeat(base, 3, axis=0) + rng.normal(scale=0.05, size=(12, 16))  # 4 groups of 3
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = [f"m{i}" for i in range(12)]
    whole = duplicate_clusters(ids, vectors, 0.9)
    assert sorted(c.members for c in whole) == [
        ("m0", "m1", "m2"),
        ("m3", "m4", "m5"),
        ("m6", "m7", "m8"),
        ("m9", "m10", "m11"),
    ]
    monkeypatch.setattr(tidying, "BLOCK_FLOATS", 20)  # one row of 12 at a time
    assert duplicate_clusters(ids, vectors, 0.9) == whole
