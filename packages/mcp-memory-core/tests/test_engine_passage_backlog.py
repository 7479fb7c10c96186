"""A long memory acknowledged once its whole text's vector is written; its sentences' vectors added
by the passage filler afterwards (on a store with a passage backlog).

The filler's thread is kept out of most tests (``wake`` only records): each test drives the filler
with ``drain_step`` itself, and holds a caller's embed call inside the embedder to make the filler
meet a busy model. No sleeps, no timing.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pytest

from mcp_memory_core import MemoryEngine
from mcp_memory_core.engine import passage_filler
from mcp_memory_core.engine.passage_filler import PassageFiller
from mcp_memory_core.passages import split_passages
from mcp_memory_core.protocols import Vector
from mcp_memory_rankers import SimilarityRanker
from mcp_memory_testing import BackloggedStore, HashEmbedder, InMemoryStore, TickingClock

LONG = (
    "Maya moved to Lisbon in March for the new job. "
    "She works as a data engineer at a small fintech. "
    "Her team ships the billing service every Tuesday."
)
SENTENCE = "Her team ships the billing service every Tuesday."
OTHER = "Tom keeps bees on the roof of his flat. He sells the honey at the market. It sells out by noon."


class RecordingEmbedder(HashEmbedder):
    """Records every embed call's texts; ``hold`` keeps the next call inside the embedder until set."""

    def __init__(self) -> None:
        super().__init__()
        self.record: list[list[str]] = []
        self.hold: threading.Event | None = None
        self.entered = threading.Event()

    def embed_documents(self, texts: Sequence[str]) -> Vector:
        self.record.append(list(texts))
        hold, self.hold = self.hold, None
        if hold is not None:
            self.entered.set()
            assert hold.wait(10), "the test never released the embed call"
        return super().embed_documents(texts)


@pytest.fixture
def woken(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The filler's thread never starts: each wake is counted instead."""
    calls: list[int] = []
    monkeypatch.setattr(PassageFiller, "wake", lambda self: calls.append(1))
    return calls


def make_engine(store: Any = None, **settings: Any) -> tuple[MemoryEngine, Any, RecordingEmbedder]:
    store = BackloggedStore() if store is None else store
    embedder = RecordingEmbedder()
    engine = MemoryEngine(
        store, embedder, SimilarityRanker(), clock=TickingClock(), **{"defer_passages": True, **settings}
    )
    return engine, store, embedder


def drain(engine: MemoryEngine) -> list[str]:
    steps = []
    while (step := engine.passage_filler.drain_step()) != "empty":
        steps.append(step)
        assert len(steps) < 100, steps
    return steps


def similarity_of(engine: MemoryEngine, query: str, memory_id: str) -> float:
    hits = {hit.memory.id: hit for hit in engine.search(query, limit=5).hits}
    assert memory_id in hits, query
    similarity = hits[memory_id].similarity
    assert similarity is not None
    return similarity


def test_a_long_memory_is_acknowledged_with_its_whole_text_and_its_sentences_follow(
    woken: list[int],
) -> None:
    engine, store, embedder = make_engine()
    outcome = engine.store_memory(LONG)
    assert outcome.status == "stored"
    assert embedder.record == [[LONG]]  # the whole text only, before the answer
    assert len(store.vectors([outcome.memory.id])[outcome.memory.id]) == 1
    assert store.pending_passages(10) == [(outcome.memory.id, LONG)] and woken == [1]

    assert drain(engine) == ["completed"]
    assert embedder.record[1:] == [split_passages(LONG)[1:]]
    assert len(store.vectors([outcome.memory.id])[outcome.memory.id]) == len(split_passages(LONG))
    assert store.count_pending_passages() == 0
    assert similarity_of(engine, SENTENCE, outcome.memory.id) == pytest.approx(1.0, abs=1e-5)


def test_a_new_version_of_a_long_memory_defers_its_sentences_too(woken: list[int]) -> None:
    engine, store, _ = make_engine()
    first = engine.store_memory("Maya lives in Porto.")
    outcome = engine.update_memory(first.memory.id, LONG)
    assert store.pending_passages(10) == [(outcome.memory.id, LONG)]
    drain(engine)
    assert similarity_of(engine, SENTENCE, outcome.memory.id) == pytest.approx(1.0, abs=1e-5)


def test_without_deferral_or_a_backlog_every_passage_is_embedded_before_the_answer(
    woken: list[int],
) -> None:
    for engine, store, embedder in (
        make_engine(defer_passages=False),
        make_engine(InMemoryStore()),
    ):
        outcome = engine.store_memory(LONG)
        assert embedder.record == [split_passages(LONG)]
        assert len(store.vectors([outcome.memory.id])[outcome.memory.id]) == len(split_passages(LONG))
    assert woken == []


def test_a_one_sentence_memory_is_never_deferred(woken: list[int]) -> None:
    engine, store, _ = make_engine()
    engine.store_memory("Maya moved to Lisbon in March.")
    assert store.count_pending_passages() == 0 and woken == []


def test_past_the_backlog_bound_a_long_memory_is_embedded_at_once(woken: list[int]) -> None:
    engine, store, embedder = make_engine(passage_backlog=1)
    deferred = engine.store_memory(LONG)
    inline = engine.store_memory(OTHER)
    assert [memory_id for memory_id, _ in store.pending_passages(10)] == [deferred.memory.id]
    assert embedder.record == [[LONG], split_passages(OTHER)]
    assert len(store.vectors([inline.memory.id])[inline.memory.id]) == len(split_passages(OTHER))


def test_memories_deleted_or_purged_before_the_filler_runs(woken: list[int]) -> None:
    engine, store, _ = make_engine()
    deleted = engine.store_memory(LONG)
    purged = engine.store_memory(OTHER)
    engine.delete_memory(deleted.memory.id)
    engine.delete_memory(purged.memory.id, hard=True)
    assert drain(engine) == ["completed"]
    assert store.count_pending_passages() == 0
    assert len(store.vectors([deleted.memory.id])[deleted.memory.id]) == len(split_passages(LONG))
    assert engine.search(SENTENCE, limit=5).hits == []  # a tombstone stays out of search
    restored = engine.restore_memory(deleted.memory.id)
    assert similarity_of(engine, SENTENCE, restored.id) == pytest.approx(1.0, abs=1e-5)


def test_two_fillers_on_one_store_complete_a_memory_once(
    woken: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process's filler completing the same memory meanwhile: the second finds it done."""
    monkeypatch.setattr(passage_filler, "FILL_CHARS", 100)  # two steps of embedding
    engine, store, _ = make_engine()
    outcome = engine.store_memory(LONG)
    assert engine.passage_filler.drain_step() == "embedded"  # half way through it
    other = MemoryEngine(store, HashEmbedder(), SimilarityRanker(), defer_passages=True)
    other.open()
    assert drain(other) == ["embedded", "completed"]
    assert engine.passage_filler.drain_step() == "completed"  # nothing added: it was done
    assert engine.passage_filler.drain_step() == "empty"
    assert len(store.vectors([outcome.memory.id])[outcome.memory.id]) == len(split_passages(LONG))


def test_the_filler_waits_while_a_callers_embedding_runs_or_waits(woken: list[int]) -> None:
    engine, store, embedder = make_engine()
    outcome = engine.store_memory(LONG)
    embedder.hold = release = threading.Event()
    with ThreadPoolExecutor(1) as pool:
        caller = pool.submit(engine.store_memory, "Tom keeps bees.")
        assert embedder.entered.wait(10)
        calls = len(embedder.record)
        assert engine.passage_filler.drain_step() == "busy"
        assert len(embedder.record) == calls  # nothing embedded for the filler
        release.set()
        assert caller.result(timeout=10).status == "stored"
    assert drain(engine) == ["completed"]
    assert store.count_pending_passages() == 0
    assert embedder.record[-1] == split_passages(LONG)[1:]
    assert outcome.memory.id not in dict(store.pending_passages(10))


def test_many_sentences_are_embedded_a_few_at_a_time(
    woken: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(passage_filler, "FILL_CHARS", 100)
    engine, store, embedder = make_engine()
    outcome = engine.store_memory(LONG)
    assert drain(engine) == ["embedded", "completed"]
    assert embedder.record[1:] == [split_passages(LONG)[1:3], split_passages(LONG)[3:]]
    assert len(store.vectors([outcome.memory.id])[outcome.memory.id]) == len(split_passages(LONG))


def test_warm_up_resumes_a_backlog_left_by_a_crash(woken: list[int]) -> None:
    engine, store, _ = make_engine()
    engine.store_memory(LONG)
    woken.clear()
    restarted = MemoryEngine(store, HashEmbedder(), SimilarityRanker())  # deferral off: still finishes it
    restarted.warm()
    assert woken == [1]
    assert drain(restarted) == ["completed"]


# -- the filler's thread -----------------------------------------------------------------------------
@pytest.fixture
def completions(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Semaphore]:
    done = threading.Semaphore(0)
    original = BackloggedStore.complete_passages

    def complete(self: BackloggedStore, memory_id: str, vectors: Vector) -> bool:
        result = original(self, memory_id, vectors)
        done.release()
        return result

    monkeypatch.setattr(BackloggedStore, "complete_passages", complete)
    yield done


def test_the_filler_thread_fills_the_backlog_and_stops_with_the_engine(
    completions: threading.Semaphore,
) -> None:
    engine, store, _ = make_engine(passage_fill_idle=0.0)
    outcome = engine.store_memory(LONG)
    assert completions.acquire(timeout=10)
    assert store.count_pending_passages() == 0
    assert len(store.vectors([outcome.memory.id])[outcome.memory.id]) == len(split_passages(LONG))
    thread = engine.passage_filler._thread
    assert thread is not None and thread.is_alive()
    engine.close()
    assert not thread.is_alive()


def test_an_error_in_the_filler_is_logged_by_id_and_retried(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, completions: threading.Semaphore
) -> None:
    monkeypatch.setattr(passage_filler, "RETRY_SECONDS", (0.0, 0.0))
    failures = iter([OSError("disk I/O error")])
    original = BackloggedStore.pending_passages

    def pending(self: BackloggedStore, limit: int) -> list[tuple[str, str]]:
        if (error := next(failures, None)) is not None:
            raise error
        return original(self, limit)

    monkeypatch.setattr(BackloggedStore, "pending_passages", pending)
    engine, store, _ = make_engine(passage_fill_idle=0.0)
    with caplog.at_level(logging.WARNING, logger="mcp_memory_core.engine.passage_filler"):
        outcome = engine.store_memory(LONG)
        assert completions.acquire(timeout=10)
    engine.close()
    assert store.count_pending_passages() == 0
    assert len(store.vectors([outcome.memory.id])[outcome.memory.id]) == len(split_passages(LONG))
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert "OSError: disk I/O error" in logged and "Lisbon" not in logged


def test_vectors_of_a_completed_memory_are_its_whole_text_then_its_sentences(woken: list[int]) -> None:
    engine, store, _ = make_engine()
    outcome = engine.store_memory(LONG)
    drain(engine)
    expected = HashEmbedder().embed_documents(split_passages(LONG))
    np.testing.assert_allclose(store.vectors([outcome.memory.id])[outcome.memory.id], expected, atol=1e-6)


def test_a_memory_whose_sentences_always_fail_is_given_up_and_the_backlog_goes_on(
    woken: list[int], caplog: pytest.LogCaptureFixture
) -> None:
    class Refusing(RecordingEmbedder):
        def embed_documents(self, texts: Sequence[str]) -> Vector:
            if (
                any("fintech" in text for text in texts) and len(texts) > 1
            ):  # LONG's sentences, never its whole
                raise ValueError("the model cannot embed this")
            return super().embed_documents(texts)

    store = BackloggedStore()
    engine = MemoryEngine(store, Refusing(), SimilarityRanker(), clock=TickingClock(), defer_passages=True)
    stuck, other = engine.store_memory(LONG), engine.store_memory(OTHER)
    filler = engine.passage_filler
    with caplog.at_level(logging.WARNING, logger="mcp_memory_core.engine.passage_filler"):
        steps = [filler.attempt() for _ in range(passage_filler.ATTEMPTS)]
    assert steps == ["failed"] * passage_filler.ATTEMPTS  # the oldest mark first, every time
    assert store.count_pending_passages() == 1  # given up: only the other memory waits now
    assert len(store.vectors([stuck.memory.id])[stuck.memory.id]) == 1  # its whole text's vector
    drain(engine)
    assert store.count_pending_passages() == 0
    assert len(store.vectors([other.memory.id])[other.memory.id]) == len(split_passages(OTHER))
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert f"Gave up adding the sentence vectors of memory {stuck.memory.id}" in logged
    assert "fintech" not in logged  # ids, never the content
    engine.close()


def test_a_search_first_finishes_the_backlog_so_what_it_finds_never_depends_on_the_filler(
    woken: list[int],
) -> None:
    """An agent that stores a conversation and asks about it at once keeps the filler from ever
    being idle: without this the memories still waiting would be found by their whole text only
    (LoCoMo conv-26 through the server: hit@5 0.667 instead of 0.787)."""
    engine, store, embedder = make_engine()
    long_one, other = engine.store_memory(LONG), engine.store_memory(OTHER)
    assert store.count_pending_passages() == 2 and len(embedder.record) == 2
    assert similarity_of(engine, SENTENCE, long_one.memory.id) == pytest.approx(1.0, abs=1e-5)
    assert store.count_pending_passages() == 0
    # both memories' sentences in one call (shared with any caller's batch)
    assert embedder.record[2:] == [split_passages(LONG)[1:] + split_passages(OTHER)[1:]]
    assert len(store.vectors([other.memory.id])[other.memory.id]) == len(split_passages(OTHER))
    calls = len(embedder.record)
    engine.search("honey at the market", limit=5)
    assert len(embedder.record) == calls  # nothing waits now


def test_a_search_whose_finish_fails_still_answers_and_leaves_the_backlog_to_the_filler(
    woken: list[int], caplog: pytest.LogCaptureFixture
) -> None:
    engine, store, embedder = make_engine()
    outcome = engine.store_memory(LONG)
    failures = iter([OSError("disk I/O error")])
    original = BackloggedStore.complete_passages

    def complete(memory_id: str, vectors: Vector) -> bool:
        if (error := next(failures, None)) is not None:
            raise error
        return original(store, memory_id, vectors)

    store.complete_passages = complete  # type: ignore[method-assign]
    with caplog.at_level(logging.WARNING, logger="mcp_memory_core.engine.passage_filler"):
        hits = engine.search(LONG, limit=5).hits
    assert [hit.memory.id for hit in hits] == [outcome.memory.id]  # found by its whole text
    assert "OSError: disk I/O error" in caplog.text and "Lisbon" not in caplog.text
    assert store.count_pending_passages() == 1 and woken  # the thread was told
    calls = len(embedder.record)
    engine.search(LONG, limit=5)
    assert len(embedder.record) == calls  # searches leave it to the thread now
    assert drain(engine) == ["completed"]
    assert engine.passage_filler.attempt() == "empty"  # the thread caught up: searches finish again
    engine.store_memory(OTHER)
    engine.search("honey", limit=5)
    assert store.count_pending_passages() == 0
