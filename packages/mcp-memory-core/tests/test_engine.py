"""The engine's rules, on the in-memory reference store with the hash embedder."""

import pytest

from mcp_memory_core import (
    InvalidInputError,
    MemoryEngine,
    MemoryNotFoundError,
    MemoryStateError,
    ModelMismatchError,
)
from mcp_memory_rankers import SimilarityRanker
from mcp_memory_testing import HashEmbedder, InMemoryStore


def ids(hits):
    return [h.memory.id for h in hits]


def test_store_then_search_finds_it(engine):
    engine.store_memory("the user prefers dark roast coffee")
    stored = engine.store_memory("deploys happen on tuesday", {"project": "api"})
    assert stored.status == "stored"
    hits = engine.search_memories("when do deploys happen", limit=1)
    assert ids(hits) == [stored.memory.id]
    assert hits[0].memory.metadata == {"project": "api"}
    assert hits[0].similarity == pytest.approx(hits[0].score)


def test_update_chain_search_with_oldest_wording_returns_head(engine):
    a = engine.store_memory("alpha bravo charlie delta").memory
    b = engine.update_memory(a.id, "echo foxtrot golf hotel").memory
    c = engine.update_memory(b.id, "india juliet kilo lima").memory
    engine.store_memory("unrelated memory about mike november")
    hits = engine.search_memories("alpha bravo charlie delta", limit=5)
    assert hits[0].memory.id == c.id
    assert hits[0].memory.content == "india juliet kilo lima"
    assert hits[0].matched_id == a.id
    assert [h.memory.id for h in hits].count(c.id) == 1  # one result per chain
    assert a.id not in ids(hits) and b.id not in ids(hits)


def test_update_records_the_link_and_keeps_metadata_by_default(engine):
    a = engine.store_memory("v1 text", {"k": "v"}).memory
    outcome = engine.update_memory(a.id, "v2 text")
    assert outcome.superseded.id == a.id and outcome.superseded.superseded_by == outcome.memory.id
    assert outcome.memory.metadata == {"k": "v"}
    replaced = engine.update_memory(outcome.memory.id, "v3 text", {"k": "w"})
    assert replaced.memory.metadata == {"k": "w"}


def test_get_superseded_returns_it_as_is_with_head(engine):
    a = engine.store_memory("first version").memory
    b = engine.update_memory(a.id, "second version").memory
    c = engine.update_memory(b.id, "third version").memory
    view = engine.get_memory(a.id)
    assert view.status == "superseded"
    assert view.memory.content == "first version"
    assert view.head_id == c.id
    assert engine.get_memory(c.id).status == "current"


def test_updating_a_superseded_memory_names_the_head(engine):
    a = engine.store_memory("one").memory
    b = engine.update_memory(a.id, "two").memory
    with pytest.raises(MemoryStateError, match=b.id):
        engine.update_memory(a.id, "fork attempt")


def test_soft_deleted_never_in_search_or_list(engine):
    keep = engine.store_memory("zebra stripes are unique").memory
    gone = engine.store_memory("zebra crossing near the office").memory
    outcome = engine.delete_memory(gone.id)
    assert outcome.status == "deleted"
    for _ in range(3):
        assert gone.id not in ids(engine.search_memories("zebra crossing near the office", limit=10))
    assert [m.id for m in engine.list_memories().memories] == [keep.id]
    view = engine.get_memory(gone.id)
    assert view.status == "deleted" and view.memory.deleted_at is not None
    assert engine.delete_memory(gone.id).status == "already_deleted"


def test_deleting_the_head_removes_the_whole_chain_from_search(engine):
    a = engine.store_memory("quantum harmonica recital").memory
    b = engine.update_memory(a.id, "quantum harmonica concert").memory
    engine.delete_memory(b.id)
    assert engine.search_memories("quantum harmonica recital", limit=10) == []
    with pytest.raises(MemoryStateError, match="deleted"):
        engine.update_memory(b.id, "revive")


def test_delete_in_the_middle_of_a_chain(engine):
    a = engine.store_memory("papaya mango smoothie").memory
    b = engine.update_memory(a.id, "kiwi lime sorbet").memory
    c = engine.update_memory(b.id, "banana walnut bread").memory
    engine.delete_memory(b.id)
    # A's wording still resolves through the tombstoned middle to the live head C.
    assert ids(engine.search_memories("papaya mango smoothie", limit=3))[0] == c.id
    # B's own wording no longer matches anything of B: B never comes back, C only via others.
    for hit in engine.search_memories("kiwi lime sorbet", limit=3):
        assert hit.memory.id != b.id and hit.matched_id != b.id
    assert engine.get_memory(a.id).head_id == c.id
    assert engine.get_memory(b.id).status == "deleted"


def test_search_never_comes_back_short_when_chains_collapse(engine):
    # 40 versions of one chain all match the query better than 5 distinct memories.
    head = engine.store_memory("lighthouse keeper log entry 0").memory
    for i in range(1, 40):
        head = engine.update_memory(head.id, f"lighthouse keeper log entry {i}").memory
    others = [engine.store_memory(f"lighthouse different fact {i}").memory for i in range(5)]
    hits = engine.search_memories("lighthouse keeper log entry", limit=6)
    assert len(hits) == 6
    assert set(ids(hits)) == {head.id, *(o.id for o in others)}


def test_list_pages_newest_first_without_gaps(engine):
    stored = [engine.store_memory(f"memory {i}").memory for i in range(7)]
    seen, cursor = [], None
    while True:
        page = engine.list_memories(limit=3, cursor=cursor)
        assert page.total == 7
        seen += [m.id for m in page.memories]
        cursor = page.next_cursor
        if cursor is None:
            break
    assert seen == [m.id for m in reversed(stored)]


def test_list_shows_heads_only(engine):
    a = engine.store_memory("old").memory
    b = engine.update_memory(a.id, "new").memory
    assert [m.id for m in engine.list_memories().memories] == [b.id]
    assert engine.count() == 1


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda e: e.store_memory("   "), "non-empty"),
        (
            lambda e: e.store_memory("x" * 32_769),
            r"content is 32,769 bytes; the limit is 32,768 \(MCP_MEMORY_MAX_CONTENT_BYTES\)",
        ),
        (lambda e: e.store_memory("ok", {"k": object()}), "JSON"),
        (lambda e: e.store_memory("ok", {1: "v"}), "keys"),
        (lambda e: e.store_memory("ok", ["not", "a", "dict"]), "object"),
        (lambda e: e.search_memories(""), "non-empty"),
        (lambda e: e.search_memories("q", limit=0), "limit"),
        (lambda e: e.search_memories("q", limit=101), "limit"),
        (lambda e: e.get_memory("not-a-uuid"), "UUID"),
        (lambda e: e.list_memories(cursor="garbage!"), "cursor"),
    ],
)
def test_bad_input_is_refused_clearly(engine, call, message):
    with pytest.raises(InvalidInputError, match=message):
        call(engine)


def test_unknown_id(engine):
    missing = "0b8f2f0e-8c1f-4a53-9d3e-4b3b3d1a0c11"
    for call in (engine.get_memory, engine.delete_memory, lambda i: engine.update_memory(i, "x")):
        with pytest.raises(MemoryNotFoundError, match=missing):
            call(missing)


def test_store_refuses_another_models_vectors():
    store = InMemoryStore()
    MemoryEngine(store, HashEmbedder(64), SimilarityRanker()).store_memory("hello")
    other = MemoryEngine(store, HashEmbedder(32), SimilarityRanker())
    with pytest.raises(ModelMismatchError, match="hash-64"):
        other.store_memory("world")


def test_failed_update_leaves_nothing_behind(engine, monkeypatch):
    a = engine.store_memory("before").memory

    def boom(memory_id, fields):
        raise RuntimeError("disk full")

    monkeypatch.setattr(engine.store, "update_fields", boom)
    with pytest.raises(RuntimeError):
        engine.update_memory(a.id, "after")
    monkeypatch.undo()
    assert engine.get_memory(a.id).status == "current"
    assert engine.count() == 1


def test_import_keeps_ids_and_times_and_is_idempotent(engine):
    from datetime import UTC, datetime

    from mcp_memory_core import Memory

    when = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    memories = [Memory(content=f"imported {i}", created_at=when, updated_at=when) for i in range(10)]
    batches = []
    first = engine.import_memories(memories, batch_size=4, on_batch=batches.append)
    assert (first.inserted, first.skipped) == (10, 0)
    assert batches == [4, 4, 2]
    again = engine.import_memories(memories, batch_size=4)
    assert (again.inserted, again.skipped) == (0, 10)
    view = engine.get_memory(memories[3].id)
    assert view.memory.created_at == when and view.memory.content == "imported 3"
    assert engine.count() == 10


def test_warm_runs_an_optional_store_warm_up_in_the_background(caplog: pytest.LogCaptureFixture) -> None:
    """A store with ``warm()`` is warmed in its own thread; a failing store warm-up is only logged (the
    first search loads what it needs), and a store without one is fine."""
    import threading

    class WarmStore(InMemoryStore):
        def __init__(self, fail: bool) -> None:
            super().__init__()
            self.fail = fail
            self.warmed = threading.Event()
            self.thread_name = ""

        def warm(self) -> None:
            self.thread_name = threading.current_thread().name
            self.warmed.set()
            if self.fail:
                raise RuntimeError("cache unavailable")

    ok = WarmStore(fail=False)
    MemoryEngine(ok, HashEmbedder(16), SimilarityRanker()).warm()
    assert ok.warmed.wait(5) and ok.thread_name == "mcp-memory-store-warm"
    failing = WarmStore(fail=True)
    engine = MemoryEngine(failing, HashEmbedder(16), SimilarityRanker())
    engine.warm()
    assert failing.warmed.wait(5)
    for _ in range(100):  # the log record is written right after warm() raised, in that thread
        if "store warm-up failed" in caplog.text:
            break
        threading.Event().wait(0.01)
    assert "store warm-up failed" in caplog.text
    assert engine.store_memory("still works").status == "stored"
    MemoryEngine(InMemoryStore(), HashEmbedder(16), SimilarityRanker()).warm()


# -- size limits (MCP_MEMORY_MAX_CONTENT_BYTES / _METADATA_BYTES / _PAGE_BYTES) -------------------------
BIG_CONTENT = "é" * 16_385  # 16,385 characters, 32,770 bytes of UTF-8
CONTENT_ERROR = r"content is 32,770 bytes; the limit is 32,768 \(MCP_MEMORY_MAX_CONTENT_BYTES\)"
BIG_METADATA = {"notes": "x" * 16_400}  # 16,412 bytes of JSON
METADATA_ERROR = r"metadata is 16,412 bytes as JSON; the limit is 16,384 \(MCP_MEMORY_MAX_METADATA_BYTES\)"


def test_content_and_metadata_are_limited_in_bytes_on_every_write(engine):
    from mcp_memory_core import Memory

    a = engine.store_memory("fits").memory
    writes = [
        (lambda: engine.store_memory(BIG_CONTENT), CONTENT_ERROR),
        (lambda: engine.store_memory("ok", BIG_METADATA), METADATA_ERROR),
        (lambda: engine.update_memory(a.id, BIG_CONTENT), CONTENT_ERROR),
        (lambda: engine.update_memory(a.id, "ok", BIG_METADATA), METADATA_ERROR),
        (lambda: engine.import_memories([Memory(content=BIG_CONTENT)]), CONTENT_ERROR),
        (lambda: engine.import_memories([Memory(content="ok", metadata=BIG_METADATA)]), METADATA_ERROR),
    ]
    for write, message in writes:
        with pytest.raises(InvalidInputError, match=message):
            write()
    assert engine.count() == 1 and engine.get_memory(a.id).status == "current"
    assert engine.store_memory("é" * 16_384).status == "stored"  # exactly at the limit


def test_the_limits_are_settings():
    from mcp_memory_core import Settings
    from mcp_memory_core.validation import Limits

    limits = Settings(max_content_bytes=10, max_metadata_bytes=20, max_page_bytes=30).limits()
    assert limits == Limits(content_bytes=10, metadata_bytes=20, page_bytes=30)
    assert Settings().limits() == Limits(content_bytes=32_768, metadata_bytes=16_384, page_bytes=262_144)
    small = MemoryEngine(InMemoryStore(), HashEmbedder(), SimilarityRanker(), limits=limits)
    with pytest.raises(
        InvalidInputError, match=r"11 bytes; the limit is 10 \(MCP_MEMORY_MAX_CONTENT_BYTES\)"
    ):
        small.store_memory("x" * 11)


def test_a_list_page_is_capped_by_bytes_and_pages_cover_everything_once():
    from mcp_memory_core.validation import Limits

    engine = MemoryEngine(InMemoryStore(), HashEmbedder(), SimilarityRanker(), limits=Limits(page_bytes=4000))
    stored = [engine.store_memory(f"memory {i} " + "x" * 900).memory for i in range(20)]
    size = len(stored[0].model_dump_json().encode())
    seen, cursor = [], None
    while True:
        page = engine.list_memories(limit=1000, cursor=cursor)
        used = sum(len(m.model_dump_json().encode()) for m in page.memories)
        assert used <= 4000
        seen += [m.id for m in page.memories]
        cursor = page.next_cursor
        if cursor is None:
            break
        assert page.capped and used + size > 4000  # full: the next memory would not have fitted
    assert seen == [m.id for m in reversed(stored)]
    one = engine.list_memories(limit=1000, measure=lambda memory: 10_000)  # bigger than the cap alone
    assert len(one.memories) == 1 and one.next_cursor is not None  # a page never comes back empty
    assert not engine.list_memories(limit=2).capped  # cut by the limit, not by size


def test_a_page_is_read_in_chunks_without_gaps_or_repeats(engine):
    from mcp_memory_core import Memory
    from mcp_memory_core.engine import LIST_CHUNK

    count = 2 * LIST_CHUNK + 50
    engine.import_memories(
        Memory(content=f"note {i}", created_at=(now := engine.clock()), updated_at=now) for i in range(count)
    )
    newest_first = [
        m.id for m in sorted(engine.store.iter_all(), key=lambda m: (m.created_at, m.id), reverse=True)
    ]
    whole = engine.list_memories(limit=1000)
    assert [m.id for m in whole.memories] == newest_first and whole.next_cursor is None
    first = engine.list_memories(limit=LIST_CHUNK + 1)
    rest = engine.list_memories(limit=1000, cursor=first.next_cursor)
    assert [m.id for m in first.memories + rest.memories] == newest_first and rest.next_cursor is None


def test_occurred_at_and_thread_on_store_and_update(engine):
    from datetime import UTC, datetime

    stored = engine.store_memory("We adopted a dog.", occurred_at="2023-05-08", thread="chat 1").memory
    assert stored.occurred_at == datetime(2023, 5, 8, tzinfo=UTC) and stored.thread == "chat 1"
    plain = engine.store_memory("Coffee beans are in the left cupboard.").memory
    assert plain.occurred_at == plain.created_at and plain.thread is None
    newer = engine.update_memory(stored.id, "We adopted a dog named Biscuit.").memory
    assert newer.thread == "chat 1"  # a new version stays in its conversation …
    assert newer.occurred_at == newer.created_at  # … and was said when it was written
    dated = engine.update_memory(newer.id, "We adopted Biscuit in May.", occurred_at="2023-05-09").memory
    assert dated.occurred_at == datetime(2023, 5, 9, tzinfo=UTC)


def test_list_memories_in_each_order_pages_with_cursors_of_that_order(engine):
    stored = [
        engine.store_memory(f"fact {n}", importance=importance).memory
        for n, importance in enumerate([0.2, 0.9, 0.5, 0.9, 0.1])
    ]

    def walk(order):
        ids, cursor = [], None
        while True:
            page = engine.list_memories(2, cursor, order=order)
            ids += [m.id for m in page.memories]
            if page.next_cursor is None:
                return ids, page.total
            cursor = page.next_cursor

    by_time = sorted(stored, key=lambda m: (m.created_at, m.id))
    assert walk("newest") == ([m.id for m in reversed(by_time)], 5)
    assert walk("oldest") == ([m.id for m in by_time], 5)
    ranked = sorted(stored, key=lambda m: (m.importance, m.created_at, m.id), reverse=True)
    assert walk("importance")[0] == [m.id for m in ranked]
    newest_cursor = engine.list_memories(2).next_cursor
    with pytest.raises(InvalidInputError, match="cursor is not valid"):
        engine.list_memories(2, newest_cursor, order="importance")
    with pytest.raises(InvalidInputError, match="order must be one of newest, oldest, importance"):
        engine.list_memories(2, order="random")


def test_a_store_written_before_list_orders_still_lists_newest_first():
    """A third-party store whose ``list`` takes no ``order`` keeps working for the default listing."""

    class OlderStore(InMemoryStore):
        def list(self, where, limit, after=None):  # the signature before orders existed
            return super().list(where, limit, after)

    older = MemoryEngine(OlderStore(), HashEmbedder(), SimilarityRanker())
    ids = [older.store_memory(f"note {i} about the garden").memory.id for i in range(3)]
    page = older.list_memories(limit=2)
    assert [m.id for m in page.memories] == ids[::-1][:2]
    rest = older.list_memories(limit=2, cursor=page.next_cursor)
    assert [m.id for m in rest.memories] == ids[:1]
