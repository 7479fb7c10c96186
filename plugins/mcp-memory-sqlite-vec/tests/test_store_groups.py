"""Stores that wait for each other are written in one transaction (the engine's store groups), with the
answers each would have had one at a time, on the real sqlite-vec store.

Every interleaving is driven by events: the first store is held inside its insert until the test
releases it, and the groups' ``_queued`` hook says when a store waits behind it. No sleeps, no timing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from mcp_memory_core import MemoryEngine
from mcp_memory_core.engine.store_groups import StoreGroups
from mcp_memory_core.models import StoreOutcome
from mcp_memory_sqlite_vec import SqliteVecStore
from mcp_memory_testing import HashEmbedder, SimilarityRanker

HELD = "The first store, held inside its insert."


class Crowd:
    """The engine of a sqlite-vec file, its first store held in its insert, others queued behind it."""

    def __init__(self, engine: MemoryEngine, monkeypatch: pytest.MonkeyPatch) -> None:
        self.engine = engine
        self.pool = ThreadPoolExecutor(max_workers=8)
        self.entered, self.release = threading.Event(), threading.Event()
        self.queued = threading.Semaphore(0)
        self.groups: list[int] = []  # the size of each group written in one transaction
        self.refuse: set[str] = set()  # contents whose insert fails
        groups = engine.writes._groups
        assert isinstance(groups, StoreGroups)
        insert, write_group = engine.store.insert, groups._write_group

        def held_insert(memories: Any, *args: Any, **kwargs: Any) -> None:
            if memories[0].content == HELD:
                self.entered.set()
                assert self.release.wait(10), "the test never released the first store"
            if memories[0].content in self.refuse:
                raise ValueError(f"refused: {memories[0].content}")
            insert(memories, *args, **kwargs)

        def counted_group(batch: Any) -> Any:
            self.groups.append(len(batch))
            return write_group(batch)

        def queued() -> None:
            self.queued.release()

        monkeypatch.setattr(engine.store, "insert", held_insert)
        monkeypatch.setattr(groups, "_write_group", counted_group)
        monkeypatch.setattr(groups, "_queued", queued)

    def hold_first(self) -> Future[StoreOutcome]:
        first = self.pool.submit(self.engine.store_memory, HELD)
        assert self.entered.wait(10), "the first store never reached its insert"
        return first

    def queue(self, store: Callable[[], StoreOutcome]) -> Future[StoreOutcome]:
        future = self.pool.submit(store)
        assert self.queued.acquire(timeout=10), "the store never queued behind the first"
        return future

    def finish(self, first: Future[StoreOutcome], *rest: Future[StoreOutcome]) -> list[Any]:
        self.release.set()
        first.result(timeout=10)
        results: list[Any] = []
        for future in rest:
            try:
                results.append(future.result(timeout=10))
            except Exception as exc:  # the test looks at each caller's error
                results.append(exc)
        return results


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[MemoryEngine]:
    engine = MemoryEngine(SqliteVecStore(tmp_path / "memories.db"), HashEmbedder(), SimilarityRanker())
    engine.warm()
    yield engine
    engine.close()


def store(engine: MemoryEngine, text: str) -> Callable[[], StoreOutcome]:
    return lambda: engine.store_memory(text)


def test_stores_that_wait_for_a_write_are_written_together_in_one_transaction(
    engine: MemoryEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    crowd = Crowd(engine, monkeypatch)
    first = crowd.hold_first()
    texts = ["The billing service moved to Fridays.", "Alice prefers tea.", "The parser runs on two cores."]
    waiting = [crowd.queue(store(engine, text)) for text in texts]
    outcomes = crowd.finish(first, *waiting)
    assert crowd.groups == [3]  # the first alone (nobody was waiting), then one transaction for three
    assert [o.status for o in outcomes] == ["stored"] * 3
    for outcome, text in zip(outcomes, texts, strict=True):
        assert engine.get_memory(outcome.memory.id).memory.content == text  # committed, readable
    reopened = MemoryEngine(SqliteVecStore(engine.store.location), HashEmbedder(), SimilarityRanker())
    assert {m.content for m in reopened.list_memories(limit=10).memories} == {HELD, *texts}
    reopened.close()


def test_a_store_repeating_an_earlier_one_of_its_group_gets_the_answer_it_would_have_had_alone(
    engine: MemoryEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    crowd = Crowd(engine, monkeypatch)
    first = crowd.hold_first()
    waiting = [
        crowd.queue(store(engine, "Deploys run on Fridays at noon.")),
        crowd.queue(store(engine, "The team prefers dark mode.")),
        crowd.queue(store(engine, "deploys  run on FRIDAYS at noon.")),  # the first's content again
        crowd.queue(store(engine, "Deploys run on Fridays at noon!")),  # similar to it
    ]
    deploys, dark, again, similar = crowd.finish(first, *waiting)
    assert crowd.groups == [4]
    assert (deploys.status, dark.status) == ("stored", "stored")
    assert again.status == "duplicate" and again.memory.id == deploys.memory.id
    assert similar.status == "stored"
    assert deploys.memory.id in [s.memory.id for s in similar.similar]  # reported beside it, as alone
    assert len(engine.list_memories(limit=10).memories) == 4  # HELD, deploys, dark, similar


def test_a_refused_store_fails_alone_and_the_rest_of_its_group_is_stored(
    engine: MemoryEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    crowd = Crowd(engine, monkeypatch)
    crowd.refuse.add("This one is refused by the store.")
    first = crowd.hold_first()
    waiting = [
        crowd.queue(store(engine, "Alice prefers tea.")),
        crowd.queue(store(engine, "This one is refused by the store.")),
        crowd.queue(store(engine, "The parser runs on two cores.")),
    ]
    tea, refused, parser = crowd.finish(first, *waiting)
    assert crowd.groups == [3]  # the group failed as a whole, then each was written alone
    assert isinstance(refused, ValueError) and "refused" in str(refused)
    assert (tea.status, parser.status) == ("stored", "stored")
    contents = {m.content for m in engine.list_memories(limit=10).memories}
    assert contents == {HELD, "Alice prefers tea.", "The parser runs on two cores."}


def test_under_the_supersede_policy_a_replacing_store_is_written_alone_after_its_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = MemoryEngine(
        SqliteVecStore(tmp_path / "memories.db"),
        HashEmbedder(),
        SimilarityRanker(),
        conflict_policy="supersede",
    )
    engine.warm()
    old = engine.store_memory("Deploys run on Fridays at noon.")
    crowd = Crowd(engine, monkeypatch)
    first = crowd.hold_first()
    waiting = [
        crowd.queue(store(engine, "Alice prefers tea.")),
        crowd.queue(store(engine, "Deploys run on Fridays at noon!")),  # replaces the old one
    ]
    tea, newer = crowd.finish(first, *waiting)
    assert crowd.groups == [2]
    assert tea.status == "stored"
    assert newer.status == "superseded" and newer.superseded is not None
    assert engine.get_memory(old.memory.id).memory.superseded_by == newer.memory.id
    engine.close()


GROUP_CRASH = """
import os, signal, sys, threading
from concurrent.futures import ThreadPoolExecutor
from mcp_memory_core import MemoryEngine
from mcp_memory_sqlite_vec import SqliteVecStore
from mcp_memory_testing import HashEmbedder, SimilarityRanker  # the plugin's own venv has no rankers

engine = MemoryEngine(SqliteVecStore(sys.argv[1]), HashEmbedder(), SimilarityRanker())
engine.warm()
groups, store = engine.writes._groups, engine.store
insert, entered, release, queued = store.insert, threading.Event(), threading.Event(), threading.Semaphore(0)
HOLD, KILL = "Held: the first of its round.", "Killed: the second of the unlucky group."

def gated_insert(memories, *args, **kwargs):
    if memories[0].content.startswith("Held"):
        entered.set()
        release.wait(10)
    if memories[0].content == KILL:  # inside the group's transaction, before its commit
        os.kill(os.getpid(), signal.SIGKILL)
    insert(memories, *args, **kwargs)

store.insert = gated_insert
groups._queued = queued.release
pool = ThreadPoolExecutor(max_workers=8)

printing = threading.Lock()

def acknowledged(text):
    outcome = engine.store_memory(text)
    with printing:  # one write a line: a kill never leaves half of one
        sys.stdout.write(f"{outcome.status}\\t{outcome.memory.id}\\t{text}\\n")
        sys.stdout.flush()

def round_of(first, rest):
    entered.clear(); release.clear()
    futures = [pool.submit(acknowledged, first)]
    entered.wait(10)
    for text in rest:
        futures.append(pool.submit(acknowledged, text))
        queued.acquire(timeout=10)
    release.set()
    for future in futures:
        future.result(timeout=10)

round_of(HOLD, ["Alice prefers tea.", "The parser runs on two cores.", "Deploys moved to Fridays."])
round_of("Held: the first of the next round.", ["Bob reviews on Mondays.", KILL])
"""


def test_a_group_acknowledged_survives_sigkill_and_a_group_killed_before_its_commit_left_nothing(
    tmp_path: Path,
) -> None:
    import signal
    import subprocess
    import sys
    import textwrap

    db = tmp_path / "groups.db"
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(GROUP_CRASH), str(db)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr
    acknowledged = {line.split("\t")[2]: line.split("\t")[1] for line in done.stdout.splitlines()}
    first_round = {
        "Held: the first of its round.",
        "Alice prefers tea.",
        "The parser runs on two cores.",
        "Deploys moved to Fridays.",
    }
    # The next round's first store commits alone; its thread may not have printed before the kill.
    assert first_round <= set(acknowledged) <= first_round | {"Held: the first of the next round."}
    engine = MemoryEngine(SqliteVecStore(db), HashEmbedder(), SimilarityRanker())
    try:
        for text, memory_id in acknowledged.items():
            assert engine.get_memory(memory_id).memory.content == text
            assert memory_id in [hit.memory.id for hit in engine.search_memories(text, limit=3)]
        contents = {m.content for m in engine.list_memories(limit=20).memories}
        # nothing of the group killed before its commit
        assert contents == first_round | {"Held: the first of the next round."}
    finally:
        engine.close()
