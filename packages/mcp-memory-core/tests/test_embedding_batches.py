"""The embedding batcher: texts that arrive while a batch runs share the next embed call.

Every interleaving here is driven by events: the fake embedder blocks inside its call until the test
releases it, and the batcher's ``_queued`` hook tells the test that a caller is waiting behind a
running batch. No sleeps, no timing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np
import pytest

from mcp_memory_core import MemoryEngine
from mcp_memory_core.embedding_batches import EmbeddingBatcher
from mcp_memory_core.errors import MemoryServerError
from mcp_memory_core.passages import split_passages
from mcp_memory_core.protocols import QueryBatching, Vector
from mcp_memory_rankers import SimilarityRanker
from mcp_memory_testing import HashEmbedder, InMemoryStore, TickingClock


class RecordingEmbedder(HashEmbedder):
    """HashEmbedder that records each call (kind, texts) and can hold a call until released."""

    def __init__(self, queries: bool = True) -> None:
        super().__init__()
        self.record: list[tuple[str, list[str]]] = []
        self.hold: dict[int, threading.Event] = {}  # call number -> released when set
        self.entered: dict[int, threading.Event] = {}
        self.fail: BaseException | None = None
        self._queries = queries

    def _call(self, kind: str, texts: Sequence[str], embed: Callable[[], Vector]) -> Vector:
        number = len(self.record)
        self.record.append((kind, list(texts)))
        self.entered.setdefault(number, threading.Event()).set()
        if number in self.hold:
            assert self.hold[number].wait(10), "the test never released the embed call"
        if self.fail is not None:
            raise self.fail
        return embed()

    def embed_documents(self, texts: Sequence[str]) -> Vector:
        return self._call("documents", texts, lambda: super(RecordingEmbedder, self).embed_documents(texts))

    def embed_query(self, text: str) -> Vector:
        return self._call("query", [text], lambda: super(RecordingEmbedder, self).embed_query(text))

    def started(self, number: int) -> threading.Event:
        return self.entered.setdefault(number, threading.Event())


class QueryBatchingEmbedder(RecordingEmbedder):
    """Offers ``embed_queries``: queries are embedded by a call of their own kind, never as documents.
    Its query vectors differ from its document vectors (a prefix), as for e5-style models."""

    def embed_query(self, text: str) -> Vector:
        return self._call("query", [text], lambda: HashEmbedder.embed_query(self, "query: " + text))

    def embed_queries(self, texts: Sequence[str]) -> Vector:
        return self._call(
            "queries", texts, lambda: HashEmbedder.embed_documents(self, ["query: " + t for t in texts])
        )


class Crowd:
    """Callers in threads, each arriving only when the test says so."""

    def __init__(self, batcher: EmbeddingBatcher) -> None:
        self.pool = ThreadPoolExecutor(max_workers=8)
        self.queued = threading.Semaphore(0)
        original = batcher._queued

        def queued() -> None:
            original()
            self.queued.release()

        batcher._queued = queued  # type: ignore[method-assign]

    def call(self, fn: Callable[[], Any], *, waits: bool) -> Future[Any]:
        """Start ``fn`` in a thread; if it ``waits`` (a batch is running), return once it is queued."""
        future = self.pool.submit(fn)
        if waits:
            assert self.queued.acquire(timeout=10), "the caller never queued"
        return future


@pytest.fixture
def embedder() -> RecordingEmbedder:
    return RecordingEmbedder()


def test_a_lone_caller_is_embedded_at_once_in_its_own_call(embedder: RecordingEmbedder) -> None:
    batcher = EmbeddingBatcher(embedder)
    vectors = batcher.embed_documents(["The team deploys on Fridays.", "Alice likes tea."])
    np.testing.assert_allclose(
        vectors, HashEmbedder().embed_documents(["The team deploys on Fridays.", "Alice likes tea."])
    )
    assert embedder.record == [("documents", ["The team deploys on Fridays.", "Alice likes tea."])]
    np.testing.assert_allclose(batcher.embed_query("tea?"), HashEmbedder().embed_query("tea?"))
    assert embedder.record[-1] == ("query", ["tea?"])


def test_two_callers_arriving_while_a_batch_runs_are_embedded_in_one_call(
    embedder: RecordingEmbedder,
) -> None:
    batcher = EmbeddingBatcher(embedder)
    crowd = Crowd(batcher)
    embedder.hold[0] = threading.Event()
    first = crowd.call(lambda: batcher.embed_documents(["first text"]), waits=False)
    assert embedder.started(0).wait(10)
    second = crowd.call(lambda: batcher.embed_documents(["second text", "its sentence"]), waits=True)
    third = crowd.call(lambda: batcher.embed_documents(["third text"]), waits=True)
    embedder.hold[0].set()
    vectors = [f.result(timeout=10) for f in (first, second, third)]
    assert embedder.record == [
        ("documents", ["first text"]),
        ("documents", ["second text", "its sentence", "third text"]),
    ]
    reference = HashEmbedder()
    for got, texts in zip(
        vectors, (["first text"], ["second text", "its sentence"], ["third text"]), strict=True
    ):
        np.testing.assert_allclose(got, reference.embed_documents(texts))  # each caller gets its own rows


def test_an_error_reaches_every_caller_of_the_batch_and_the_next_batch_runs(
    embedder: RecordingEmbedder,
) -> None:
    batcher = EmbeddingBatcher(embedder)
    crowd = Crowd(batcher)
    embedder.hold[0] = threading.Event()
    first = crowd.call(lambda: batcher.embed_documents(["first"]), waits=False)
    assert embedder.started(0).wait(10)
    embedder.hold[1] = threading.Event()
    second = crowd.call(lambda: batcher.embed_documents(["second"]), waits=True)
    third = crowd.call(lambda: batcher.embed_documents(["third"]), waits=True)
    embedder.hold[0].set()  # the first batch succeeds
    assert first.result(timeout=10).shape == (1, embedder.dimensions)
    assert embedder.started(1).wait(10)
    embedder.fail = MemoryServerError("The embedding model could not load: reinstall it.")
    embedder.hold[1].set()  # the second batch (second + third) fails
    for future in (second, third):
        with pytest.raises(MemoryServerError, match=r"^The embedding model could not load: reinstall it\.$"):
            future.result(timeout=10)
    embedder.fail = None
    assert batcher.embed_documents(["after"]).shape == (1, embedder.dimensions)  # not stuck
    assert [texts for _, texts in embedder.record] == [["first"], ["second", "third"], ["after"]]


def test_query_and_document_texts_are_never_mixed_into_one_call() -> None:
    embedder = QueryBatchingEmbedder()
    assert isinstance(embedder, QueryBatching)
    batcher = EmbeddingBatcher(embedder)
    crowd = Crowd(batcher)
    embedder.hold[0] = threading.Event()
    first = crowd.call(lambda: batcher.embed_documents(["a document"]), waits=False)
    assert embedder.started(0).wait(10)
    queries = [crowd.call(lambda q=q: batcher.embed_query(q), waits=True) for q in ("who?", "when?")]  # type: ignore[misc]
    document = crowd.call(lambda: batcher.embed_documents(["another document"]), waits=True)
    embedder.hold[0].set()
    results = [f.result(timeout=10) for f in (first, *queries, document)]
    calls = sorted(embedder.record[1:])
    assert embedder.record[0] == ("documents", ["a document"])
    assert calls == [("documents", ["another document"]), ("queries", ["who?", "when?"])]
    reference = QueryBatchingEmbedder()
    np.testing.assert_allclose(results[1], reference.embed_query("who?"), atol=1e-6)
    np.testing.assert_allclose(results[2], reference.embed_query("when?"), atol=1e-6)
    np.testing.assert_allclose(results[3], reference.embed_documents(["another document"]))


def test_a_query_for_an_embedder_without_embed_queries_is_embedded_at_once(
    embedder: RecordingEmbedder,
) -> None:
    """Nothing to share: it does not wait for a running batch of documents."""
    assert not isinstance(embedder, QueryBatching)
    batcher = EmbeddingBatcher(embedder)
    crowd = Crowd(batcher)
    embedder.hold[0] = threading.Event()
    first = crowd.call(lambda: batcher.embed_documents(["a document"]), waits=False)
    assert embedder.started(0).wait(10)
    np.testing.assert_allclose(batcher.embed_query("who?"), HashEmbedder().embed_query("who?"))
    assert embedder.record == [("documents", ["a document"]), ("query", ["who?"])]
    embedder.hold[0].set()
    assert first.result(timeout=10).shape == (1, embedder.dimensions)


def test_a_batch_holds_at_most_max_texts_and_the_rest_runs_next(embedder: RecordingEmbedder) -> None:
    batcher = EmbeddingBatcher(embedder, max_texts=3)
    crowd = Crowd(batcher)
    embedder.hold[0] = threading.Event()
    first = crowd.call(lambda: batcher.embed_documents(["first"]), waits=False)
    assert embedder.started(0).wait(10)
    waiting = [crowd.call(lambda i=i: batcher.embed_documents([f"text {i}"]), waits=True) for i in range(5)]  # type: ignore[misc]
    embedder.hold[0].set()
    for future in (first, *waiting):
        assert future.result(timeout=10).shape == (1, embedder.dimensions)
    sizes = [len(texts) for _, texts in embedder.record]
    assert sizes[0] == 1 and sum(sizes) == 6 and max(sizes) <= 3 and len(sizes) == 3


def test_wrong_number_of_vectors_is_an_error_for_every_caller_not_a_misaligned_row() -> None:
    class Short(HashEmbedder):
        def embed_documents(self, texts: Sequence[str]) -> Vector:
            return super().embed_documents(texts[:-1])

    with pytest.raises(MemoryServerError, match="returned 1 vectors for 2 texts"):
        EmbeddingBatcher(Short()).embed_documents(["one", "two"])
    with pytest.raises(MemoryServerError, match="returned 1 vectors for 2 texts"):
        EmbeddingBatcher(Short()).embed_if_idle(["one", "two"])  # the passage filler's call too


def test_concurrent_stores_through_the_engine_share_one_embed_call() -> None:
    """Two store_memory calls arriving while a third one's text is being embedded are embedded
    together, each memory with its own passages' vectors, and each stored."""
    embedder = RecordingEmbedder()
    engine = MemoryEngine(InMemoryStore(), embedder, SimilarityRanker(), clock=TickingClock())
    engine.warm()
    crowd = Crowd(engine.embeddings)
    embedder.hold[len(embedder.record)] = threading.Event()
    hold = embedder.hold[len(embedder.record)]
    before = len(embedder.record)
    first = crowd.call(lambda: engine.store_memory("Bob prefers green tea in the morning."), waits=False)
    assert embedder.started(before).wait(10)
    long = "Maya moved to Lisbon in March. She works as a data engineer there. Her team ships on Tuesdays."
    second = crowd.call(lambda: engine.store_memory(long), waits=True)
    third = crowd.call(lambda: engine.store_memory("The build runs on two cores only."), waits=True)
    hold.set()
    outcomes = [f.result(timeout=10) for f in (first, second, third)]
    assert [o.status for o in outcomes] == ["stored", "stored", "stored"]
    calls = embedder.record[before:]
    assert len(calls) == 2 and calls[0][1] == ["Bob prefers green tea in the morning."]
    assert calls[1][1] == [*split_passages(long), "The build runs on two cores only."]
    found = engine.search("Maya moved to Lisbon in March.", limit=1)
    assert found.hits[0].memory.id == outcomes[1].memory.id


def test_a_batch_interrupted_by_a_base_exception_releases_every_waiting_caller(
    embedder: RecordingEmbedder,
) -> None:
    """KeyboardInterrupt in the running caller's embed call: it propagates there, the callers of that
    batch get one sentence, and nobody waits forever."""
    batcher = EmbeddingBatcher(embedder)
    crowd = Crowd(batcher)
    embedder.hold[0] = threading.Event()
    first = crowd.call(lambda: batcher.embed_documents(["first"]), waits=False)
    assert embedder.started(0).wait(10)
    embedder.hold[1] = threading.Event()
    second = crowd.call(lambda: batcher.embed_documents(["second"]), waits=True)
    third = crowd.call(lambda: batcher.embed_documents(["third"]), waits=True)
    embedder.hold[0].set()
    assert first.result(timeout=10).shape == (1, embedder.dimensions)
    assert embedder.started(1).wait(10)
    embedder.fail = KeyboardInterrupt()
    embedder.hold[1].set()
    outcomes = []
    for future in (second, third):
        try:
            future.result(timeout=10)
        except BaseException as exc:  # the running caller gets its own KeyboardInterrupt back
            outcomes.append(type(exc).__name__ if isinstance(exc, KeyboardInterrupt) else str(exc))
    assert sorted(outcomes) == ["Embedding was interrupted; try again.", "KeyboardInterrupt"]
    embedder.fail = None
    assert batcher.embed_documents(["after"]).shape == (1, embedder.dimensions)


# -- background work: only when no caller's embedding runs or waits -------------------------------------
class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_background_texts_are_embedded_only_while_no_caller_embeds(embedder: RecordingEmbedder) -> None:
    """``embed_if_idle`` embeds nothing (None) while a caller's batch runs or a caller waits, and
    ``idle_for`` says how long ago the last caller's embedding ended (None while one runs)."""
    clock = Clock()
    batcher = EmbeddingBatcher(embedder, clock=clock)
    crowd = Crowd(batcher)
    embedder.hold[0] = threading.Event()
    first = crowd.call(lambda: batcher.embed_documents(["a caller's text"]), waits=False)
    assert embedder.started(0).wait(10)
    assert batcher.idle_for() is None
    assert batcher.embed_if_idle(["a background sentence"]) is None
    clock.now = 105.0
    embedder.hold[0].set()
    first.result(timeout=10)
    clock.now = 105.5
    assert batcher.idle_for() == pytest.approx(0.5)
    rows = batcher.embed_if_idle(["a background sentence"])
    assert rows is not None
    np.testing.assert_allclose(rows, HashEmbedder().embed_documents(["a background sentence"]))
    assert batcher.idle_for() == pytest.approx(0.5)  # background work is not a caller's
    assert embedder.record == [("documents", ["a caller's text"]), ("documents", ["a background sentence"])]


def test_a_caller_arriving_during_background_work_runs_right_after_it(embedder: RecordingEmbedder) -> None:
    batcher = EmbeddingBatcher(embedder)
    crowd = Crowd(batcher)
    embedder.hold[0] = threading.Event()
    background = crowd.call(lambda: batcher.embed_if_idle(["background"]), waits=False)
    assert embedder.started(0).wait(10)
    caller = crowd.call(lambda: batcher.embed_documents(["a caller's text"]), waits=True)
    assert batcher.idle_for() is None
    embedder.hold[0].set()
    assert background.result(timeout=10) is not None
    assert caller.result(timeout=10).shape == (1, embedder.dimensions)
    assert embedder.record == [("documents", ["background"]), ("documents", ["a caller's text"])]


def test_a_query_embedded_at_once_counts_as_a_caller(embedder: RecordingEmbedder) -> None:
    """An embedder without ``embed_queries``: its queries bypass the queue, yet background work
    waits for them too."""
    batcher = EmbeddingBatcher(embedder)
    crowd = Crowd(batcher)
    embedder.hold[0] = threading.Event()
    query = crowd.call(lambda: batcher.embed_query("who?"), waits=False)
    assert embedder.started(0).wait(10)
    assert batcher.idle_for() is None and batcher.embed_if_idle(["background"]) is None
    embedder.hold[0].set()
    query.result(timeout=10)
    assert batcher.idle_for() is not None
