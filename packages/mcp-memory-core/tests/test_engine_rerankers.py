"""The rerank stage of search: rerankers reorder the ranker's best, and none can fail a search."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from datetime import datetime

import pytest

from mcp_memory_core import (
    InvalidInputError,
    MemoryEngine,
    PluginError,
    Reranker,
    Scope,
    ScoredCandidate,
)
from mcp_memory_core.relevance import RelevanceFloor
from mcp_memory_rankers import SimilarityRanker
from mcp_memory_testing import (
    FailingReranker,
    HashEmbedder,
    InMemoryStore,
    ReversingReranker,
    TickingClock,
)

FRUIT = [
    "apples and pears grow in the orchard",
    "apples are red or green",
    "the orchard has apples",
    "pears taste sweet, apples taste sharp",
    "apples",
    "an apple a day",
]


@pytest.fixture
def store() -> InMemoryStore:
    return InMemoryStore()


def engine_on(store: InMemoryStore, *rerankers: Reranker, **options: object) -> MemoryEngine:
    return MemoryEngine(
        store,
        HashEmbedder(),
        SimilarityRanker(),
        clock=TickingClock(),
        track_access=False,
        rerankers=rerankers,
        **options,  # type: ignore[arg-type]
    )


@pytest.fixture
def ranked_ids(store: InMemoryStore) -> list[str]:
    """The fruit memories stored, and the ranker's own order for "apples" (no reranker)."""
    plain = engine_on(store)
    for content in FRUIT:
        plain.store_memory(content)
    found = plain.search("apples", limit=len(FRUIT))
    assert found.warnings == [] and len(found.hits) == len(FRUIT)
    return [hit.memory.id for hit in found.hits]


def ids(found: object) -> list[str]:
    return [hit.memory.id for hit in found.hits]  # type: ignore[attr-defined]


def test_a_reranker_reorders_the_top_and_explains_itself(store, ranked_ids):
    reverse = ReversingReranker(depth=10)
    found = engine_on(store, reverse).search("apples", limit=6)
    assert ids(found) == ranked_ids[::-1]
    assert found.warnings == []
    assert [hit.score for hit in found.hits] == [6.0, 5.0, 4.0, 3.0, 2.0, 1.0]
    for hit in found.hits:
        assert hit.parts["reverse"] == hit.score and "similarity" in hit.parts  # the ranker's part stays
    assert reverse.seen == [ranked_ids]


def test_a_reranker_sees_only_its_depth_and_the_rest_keep_their_order(store, ranked_ids):
    reverse = ReversingReranker(depth=3)
    found = engine_on(store, reverse).search("apples", limit=5)
    assert reverse.seen == [ranked_ids[:3]]
    assert ids(found) == [*ranked_ids[:3][::-1], *ranked_ids[3:5]]
    assert "reverse" not in found.hits[3].parts


def test_results_are_cut_to_limit_after_reranking_so_a_deep_reranker_can_lift_a_memory_in(store, ranked_ids):
    reverse = ReversingReranker(depth=6)
    found = engine_on(store, reverse).search("apples", limit=2)
    assert reverse.seen == [ranked_ids]  # depth, not limit, decides what it sees
    assert ids(found) == [ranked_ids[5], ranked_ids[4]]


def test_access_is_recorded_for_what_the_reranker_returned(store, ranked_ids):
    engine = MemoryEngine(
        store,
        HashEmbedder(),
        SimilarityRanker(),
        clock=TickingClock(),
        rerankers=[ReversingReranker(depth=6)],
    )
    engine.search("apples", limit=1)
    counts = {m.id: m.access_count for m in store.iter_all()}
    assert counts[ranked_ids[5]] == 1  # lifted into the results
    assert counts[ranked_ids[0]] == 0  # the ranker's best, pushed out


def test_rerankers_run_in_order_each_on_what_the_one_before_left(store, ranked_ids):
    first, second = ReversingReranker("first", depth=6), ReversingReranker("second", depth=2)
    found = engine_on(store, first, second).search("apples", limit=6)
    assert first.seen == [ranked_ids]
    assert second.seen == [[ranked_ids[5], ranked_ids[4]]]
    assert ids(found) == [ranked_ids[4], ranked_ids[5], *ranked_ids[:4][::-1]]
    assert set(found.hits[0].parts) >= {"similarity", "first", "second"}


FAILURES = {
    "raise": "reranker 'failing' skipped: it raised ValueError: the model is confused",
    "load": "reranker 'failing' skipped: it failed to load: RuntimeError: model file missing",
    "drop": "reranker 'failing' skipped: it did not return a reordering of the 6 candidates it was "
    "given (1 missing)",
    "repeat": "reranker 'failing' skipped: it did not return a reordering of the 6 candidates it was "
    "given (1 missing, 1 more than once)",
    "foreign": "reranker 'failing' skipped: it did not return a reordering of the 6 candidates it was "
    "given (1 missing, 1 it was not given)",
    "nan": "reranker 'failing' skipped: it gave a score of nan, not a finite number",
    "none": "reranker 'failing' skipped: it returned NoneType, not a list of ScoredCandidate",
}


@pytest.mark.parametrize("how", sorted(FAILURES))
def test_a_failing_reranker_is_skipped_with_a_warning_and_the_rankers_order_kept(store, ranked_ids, how):
    found = engine_on(store, FailingReranker(how)).search("apples", limit=6)
    assert ids(found) == ranked_ids
    assert found.warnings == [FAILURES[how]]
    assert all("failing" not in hit.parts for hit in found.hits)


def test_a_reranker_that_fails_to_load_is_not_asked_to_rerank(store, ranked_ids):
    broken = FailingReranker("load")
    engine = engine_on(store, broken)
    for _ in range(2):
        assert engine.search("apples").warnings == [FAILURES["load"]]
    assert broken.calls == 0


def test_a_failing_reranker_does_not_stop_the_next_one(store, ranked_ids):
    reverse = ReversingReranker(depth=6)
    found = engine_on(store, FailingReranker("raise"), reverse).search("apples", limit=6)
    assert ids(found) == ranked_ids[::-1]
    assert found.warnings == [FAILURES["raise"]]
    assert reverse.seen == [ranked_ids]


def test_a_slow_reranker_is_skipped_after_its_time_limit_and_not_called_again_while_it_runs(
    store, ranked_ids
):
    slow = FailingReranker("sleep", seconds=30)
    engine = engine_on(store, slow, reranker_timeout=0.2)
    try:
        started = time.perf_counter()
        found = engine.search("apples", limit=6)
        assert time.perf_counter() - started < 5
        assert ids(found) == ranked_ids
        assert found.warnings == ["reranker 'failing' skipped: it took longer than 0.2 s"]
        again = engine.search("apples", limit=6)
        assert ids(again) == ranked_ids
        assert again.warnings == [
            "reranker 'failing' skipped: its call from an earlier search is still running, past the "
            "0.2 s limit"
        ]
        assert slow.calls == 1  # no second thread piled up behind the first
    finally:
        slow.release.set()
    # Once the late call has returned (its answer dropped), the reranker is called again.
    deadline = time.monotonic() + 5
    while (found := engine.search("apples", limit=6)).warnings and time.monotonic() < deadline:
        time.sleep(0.02)
    assert found.warnings == [] and ids(found) == ranked_ids[::-1]


def test_a_reranker_only_sees_memories_the_caller_may_read(store):
    alice = Scope.for_user("alice", project="atlas")
    bob = Scope.for_user("bob", project="atlas")
    watcher = ReversingReranker(depth=100)
    engine = MemoryEngine(
        store,
        HashEmbedder(),
        SimilarityRanker(),
        clock=TickingClock(),
        require_scope=True,
        rerankers=[watcher],
    )
    secrets = {
        engine.store_memory(f"alice's secret plan number {i}", scope=alice).memory.id for i in range(3)
    }
    shared = engine.store_memory("the plan is public", privacy_scope="public", scope=alice).memory.id
    own = engine.store_memory("bob's plan for the weekend", scope=bob).memory.id
    found = engine.search("secret plan", limit=10, scope=bob)
    assert set(ids(found)) == {shared, own}
    assert [set(seen) for seen in watcher.seen] == [{shared, own}]
    engine.search("secret plan", limit=10, scope=alice)
    assert set(watcher.seen[1]) == secrets | {shared}


def test_a_reranker_cannot_change_what_a_memory_says(store, ranked_ids):
    from dataclasses import replace

    class Forger(ReversingReranker):
        def rerank(
            self, query: str, ranked: Sequence[ScoredCandidate], now: datetime
        ) -> list[ScoredCandidate]:
            out = super().rerank(query, ranked, now)
            return [
                replace(
                    s,
                    candidate=replace(
                        s.candidate, memory=s.candidate.memory.model_copy(update={"content": "forged"})
                    ),
                )
                for s in out
            ]

    found = engine_on(store, Forger(depth=6)).search("apples", limit=6)
    assert ids(found) == ranked_ids[::-1]  # its order is taken …
    assert {hit.memory.content for hit in found.hits} == set(FRUIT)  # … never its candidates


def test_the_relevance_floor_comes_first_so_a_reranker_never_sees_what_it_held_back(store):
    floor = RelevanceFloor(min_similarity=0.99, min_standout=2.0, min_keyword_similarity=2.0)
    watcher = ReversingReranker(depth=10)
    engine = engine_on(store, watcher, relevance_floor=floor)
    exact = engine.store_memory("apples").memory.id
    for content in FRUIT[:3]:
        engine.store_memory(content)
    found = engine.search("apples", limit=3)
    assert ids(found) == [exact] and watcher.seen == [[exact]]
    assert found.below_floor == 2 and found.warnings == []


def test_no_candidates_no_call(store):
    watcher = ReversingReranker()
    found = engine_on(store, watcher).search("anything")
    assert found.hits == [] and found.warnings == [] and watcher.seen == []


def test_warm_loads_heavy_rerankers_and_leaves_light_ones_to_their_first_search(store):
    heavy, light = ReversingReranker("heavy", heavy=True), ReversingReranker("light")
    engine = engine_on(store, heavy, light)
    engine.warm()
    assert (heavy.loads, light.loads) == (1, 0)
    engine.store_memory("apples")
    engine.search("apples")
    assert (heavy.loads, light.loads) == (1, 1)


def test_a_heavy_reranker_not_warmed_loads_on_first_search_outside_the_time_limit(store, ranked_ids):
    class SlowToLoad(ReversingReranker):
        def load(self) -> None:
            time.sleep(1.0)
            super().load()

    heavy = SlowToLoad("heavy", depth=6, heavy=True)
    found = engine_on(store, heavy, reranker_timeout=0.5).search("apples", limit=6)
    assert found.warnings == [] and ids(found) == ranked_ids[::-1]


def test_a_heavy_reranker_that_fails_to_load_in_warm_does_not_fail_the_warmup(store, ranked_ids):
    broken = FailingReranker("load")
    broken.heavy = True
    engine = engine_on(store, broken)
    engine.warm()
    assert engine.search("apples").warnings == [FAILURES["load"]]


def test_loading_happens_once_across_concurrent_searches(store, ranked_ids):
    class Counting(ReversingReranker):
        def __init__(self) -> None:
            super().__init__(depth=6)
            self.load_calls = 0

        def load(self) -> None:
            self.load_calls += 1
            time.sleep(0.05)
            super().load()

    counting = Counting()
    engine = engine_on(store, counting)
    threads = [threading.Thread(target=engine.search, args=("apples",)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert counting.load_calls == 1 and len(counting.seen) == 4


def test_recall_goes_through_the_rerankers(store, ranked_ids):
    reverse = ReversingReranker(depth=6)
    recall = engine_on(store, reverse).recall("apples", 500)
    assert reverse.seen == [ranked_ids]
    assert recall.text


@pytest.mark.parametrize(
    ("reranker", "message"),
    [
        (ReversingReranker(depth=0), r"reranker 'reverse' declares depth 0; it must be a whole number ≥ 1\."),
        (ReversingReranker(depth=True), r"declares depth True"),
        (object(), r"object is not a reranker: it needs name, depth, heavy, load\(\) and rerank"),
    ],
)
def test_an_impossible_reranker_is_refused_when_the_engine_is_built(store, reranker, message):
    with pytest.raises(PluginError, match=message):
        engine_on(store, reranker)


def test_a_reranker_named_twice_or_a_bad_time_limit_is_refused(store):
    with pytest.raises(InvalidInputError, match="the reranker 'reverse' is configured more than once"):
        engine_on(store, ReversingReranker(), ReversingReranker())
    with pytest.raises(InvalidInputError, match="positive number of seconds"):
        engine_on(store, ReversingReranker(), reranker_timeout=0)


def test_stats_name_the_rerankers(store):
    engine = MemoryEngine(
        store,
        HashEmbedder(),
        SimilarityRanker(),
        rerankers=(ReversingReranker(name) for name in ("a", "b")),  # any iterable, read once
    )
    assert [r.name for r in engine.rerankers] == ["a", "b"]
    assert engine.stats()["rerankers"] == ["a", "b"]
