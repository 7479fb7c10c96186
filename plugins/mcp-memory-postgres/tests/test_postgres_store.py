"""What the conformance suite does not cover: several servers (store instances) on one database,
two of them creating the schema at once, and the errors a team server's operator sees."""

from __future__ import annotations

import contextlib
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from mcp_memory_core import Memory, MemoryFilter, StorageError
from mcp_memory_core.errors import PluginError
from mcp_memory_core.migrations import SchemaTooNewError
from mcp_memory_core.query_words import query_words
from mcp_memory_postgres import SCHEMA_VERSION, PostgresStore
from mcp_memory_postgres.plugin import PostgresSettings, _make
from mcp_memory_postgres.store import idf, redact

MODEL, DIMS = "test-model", 8


def unit(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(DIMS).astype(np.float32)
    out: np.ndarray = v / np.linalg.norm(v)
    return out


def test_a_write_through_one_server_is_read_through_another_at_once(postgres_url: str) -> None:
    """No process-local cache: the second instance answers from the database on every call."""
    first, second = PostgresStore(postgres_url), PostgresStore(postgres_url)
    first.open(MODEL, DIMS)
    second.open(MODEL, DIMS)
    try:
        assert second.knn(unit(1), 5, MemoryFilter()) == []
        memory = Memory(content="the deploy key rotates on Fridays", tags=("ops",))
        first.insert([memory], unit(1)[None, :])
        assert [i for i, _ in second.knn(unit(1), 5, MemoryFilter())] == [memory.id]
        assert [i for i, _ in second.keyword_search("deploy", 5, MemoryFilter())] == [memory.id]
        assert second.get([memory.id])[memory.id].tags == ("ops",)
        first.update_fields(memory.id, {"pinned": True})
        assert second.get([memory.id])[memory.id].pinned is True
        second.purge([memory.id])
        assert first.get([memory.id]) == {}
    finally:
        first.close()
        second.close()


def test_servers_starting_at_once_create_the_schema_once(postgres_url: str) -> None:
    """Four instances open a fresh database at the same moment: the advisory lock makes them take
    turns; every one opens, and the schema is there once, at the current version."""
    stores = [PostgresStore(postgres_url) for _ in range(4)]
    start = threading.Barrier(len(stores))

    def open_one(store: PostgresStore) -> None:
        start.wait()
        store.open(MODEL, DIMS)

    with ThreadPoolExecutor(len(stores)) as pool:
        list(pool.map(open_one, stores))
    try:
        assert stores[0].meta()["schema_version"] == str(SCHEMA_VERSION)
        stores[1].insert([Memory(content="x")], unit(2)[None, :])
        assert stores[3].count(MemoryFilter()) == 1
    finally:
        for store in stores:
            store.close()


def test_a_database_from_a_newer_store_is_refused_in_one_sentence(postgres_url: str) -> None:
    store = PostgresStore(postgres_url)
    store.open(MODEL, DIMS)
    with store.transaction(), store._connection() as conn:
        conn.execute("UPDATE mcp_memory.meta SET value = '99' WHERE key = 'schema_version'")
    store.close()
    with pytest.raises(SchemaTooNewError, match="schema version 99, newer than this mcp-memory-postgres"):
        PostgresStore(postgres_url).open(MODEL, DIMS)


def test_a_schema_1_database_gets_the_passage_backlog_when_it_opens(postgres_url: str) -> None:
    store = PostgresStore(postgres_url)
    store.open(MODEL, DIMS)
    memory = Memory(content="Written before the backlog. It has two sentences.")
    store.insert([memory], unit(3)[None, :])
    with store.transaction(), store._connection() as conn:  # the database as schema 1 left it
        conn.execute("DROP TABLE mcp_memory.pending_passages")
        conn.execute("UPDATE mcp_memory.meta SET value = '1' WHERE key = 'schema_version'")
    store.close()
    store = PostgresStore(postgres_url)
    store.open(MODEL, DIMS)
    try:
        assert store.meta()["schema_version"] == str(SCHEMA_VERSION) == "3"
        with store.transaction():
            store.mark_passages_pending([memory.id])
        assert store.pending_passages(5) == [(memory.id, memory.content)]
        store.purge([memory.id])
        assert store.count_pending_passages() == 0  # the mark went with the memory
    finally:
        store.close()


def test_an_unreachable_server_is_one_sentence_without_the_password() -> None:
    store = PostgresStore("postgresql://team:s3cret@127.0.0.1:1/memory?connect_timeout=2")
    assert store.location == "postgresql://team@127.0.0.1:1/memory"
    with pytest.raises(StorageError) as info:
        store.open(MODEL, DIMS)
    message = str(info.value)
    assert message.startswith("PostgreSQL at postgresql://team@127.0.0.1:1/memory failed while opening:")
    assert "s3cret" not in message and "\n" not in message


def test_the_store_needs_a_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MCP_MEMORY_DATABASE_URL", raising=False)
    with pytest.raises(PluginError, match="MCP_MEMORY_STORE=postgres needs MCP_MEMORY_DATABASE_URL"):
        _make(None)  # type: ignore[arg-type]
    monkeypatch.setenv("MCP_MEMORY_DATABASE_URL", "postgresql://u@h/db")
    assert PostgresSettings().database_url == "postgresql://u@h/db"


def test_redact_and_query_text() -> None:
    assert redact("postgresql://u:pw@db.internal:5433/mem") == "postgresql://u@db.internal:5433/mem"
    assert redact("host=db user=u password=pw dbname=mem") == "postgresql://u@db/mem"
    assert query_words("What's the deploy key? the") == ["what", "s", "the", "deploy", "key"]
    assert query_words("  ) & | ! ") == []


def test_a_rare_query_word_outweighs_common_ones(postgres_url: str) -> None:
    """BM25's inverse document frequency: every memory holds "code word", one holds "kw7"; that one
    comes first, and ties are broken by id (ts_rank_cd alone ranked them all level)."""
    assert idf(1, 100) > idf(50, 100) > idf(100, 100) >= 0
    store = PostgresStore(postgres_url)
    store.open(MODEL, DIMS)
    try:
        memories = [Memory(content=f"the code word is alpha{i}") for i in range(10)]
        memories.append(Memory(content="the code word is kw7"))
        store.insert(memories, np.stack([unit(i) for i in range(11)]))
        hits = store.keyword_search("code word kw7", 5, MemoryFilter())
        assert hits[0][0] == memories[-1].id
        assert hits[0][1] > 2 * hits[1][1] > 0
        assert store.keyword_search("the is", 5, MemoryFilter()) == []  # only stopwords
    finally:
        store.close()


# -- the vector index: only for a store past exact_rows; a bulk load drops it and builds it again ----
def index_state(store: PostgresStore) -> bool | None:
    from mcp_memory_postgres.vector_index import index_valid

    with store._connection() as conn:
        return index_valid(conn)


def memories(n: int, start: int = 0) -> tuple[list[Memory], np.ndarray]:
    return [Memory(content=f"note {start + i}") for i in range(n)], np.stack(
        [unit(start + i) for i in range(n)]
    )


def indexed(store: PostgresStore) -> None:
    """Ask a KNN (which starts the index build past exact_rows) and wait for the build."""
    store.knn(unit(0), 1, MemoryFilter())
    store._index.join()
    assert index_state(store) is True


@pytest.fixture
def small_bulk(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("mcp_memory_postgres.store.BULK_ROWS", 10)


def test_a_store_gets_its_vector_index_once_it_outgrows_exact_scans(postgres_url: str) -> None:
    store = PostgresStore(postgres_url, exact_rows=5)
    store.open(MODEL, DIMS)
    try:
        assert index_state(store) is None  # an empty store: every insert skips the graph
        items, vectors = memories(5)
        store.insert(items, vectors)
        assert [i for i, _ in store.knn(unit(3), 1, MemoryFilter())] == [items[3].id]
        store._index.join()
        assert index_state(store) is None  # 5 vectors: still scanned exactly
        more, more_vectors = memories(1, start=5)
        store.insert(more, more_vectors)
        assert [i for i, _ in store.knn(unit(5), 1, MemoryFilter())] == [more[0].id]
        store._index.join()
        assert index_state(store) is True  # 6 > 5: built, concurrently, by this server
        for probe in (1, 4):  # through the index now
            assert [i for i, _ in store.knn(unit(probe), 1, MemoryFilter())] == [items[probe].id]
    finally:
        store.close()


def test_a_server_leaves_the_index_build_to_the_one_holding_the_build_lock(postgres_url: str) -> None:
    import psycopg

    from mcp_memory_postgres.schema import BUILD_LOCK

    store = PostgresStore(postgres_url, exact_rows=2)
    store.open(MODEL, DIMS)
    store._index._recheck = 0.0  # look again at every KNN (the default waits RECHECK_SECONDS)
    items, vectors = memories(4)
    store.insert(items, vectors)
    try:
        with psycopg.connect(postgres_url, autocommit=True) as builder:  # another server, building
            builder.execute("SELECT pg_advisory_lock(%s)", (BUILD_LOCK,))
            assert [i for i, _ in store.knn(unit(2), 1, MemoryFilter())] == [items[2].id]
            store._index.join()
            assert index_state(store) is None and not store._index.ready
        indexed(store)  # the lock is free: the next KNN past exact_rows builds it
    finally:
        store.close()


def test_a_failed_index_build_is_said_once_and_tried_again_later(caplog: pytest.LogCaptureFixture) -> None:
    from mcp_memory_postgres.vector_index import RETRY_AFTER_FAILURE_SECONDS, IndexKeeper

    now = [0.0]
    tries: list[float] = []

    def refused() -> None:
        tries.append(now[0])
        raise RuntimeError("permission denied for schema mcp_memory")

    keeper = IndexKeeper(refused, clock=lambda: now[0])  # type: ignore[arg-type]
    for at in (0.0, 1.0, RETRY_AFTER_FAILURE_SECONDS - 1, RETRY_AFTER_FAILURE_SECONDS + 1, 200.0):
        now[0] = at
        keeper.wanted()
        keeper.join()
    assert tries == [0.0, RETRY_AFTER_FAILURE_SECONDS + 1, 200.0] and not keeper.ready
    warnings = [r for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1 and "permission denied" in warnings[0].getMessage()


def test_opening_a_small_store_drops_the_index_of_an_older_schema(postgres_url: str) -> None:
    store = PostgresStore(postgres_url)
    store.open(MODEL, DIMS)
    store.insert(*memories(3))
    with store.transaction(), store._connection() as conn:  # the database as schema 2 left it
        conn.execute(
            "CREATE INDEX passages_embedding ON mcp_memory.passages USING hnsw (embedding vector_cosine_ops)"
        )
        conn.execute("UPDATE mcp_memory.meta SET value = '2' WHERE key = 'schema_version'")
    store.close()
    again = PostgresStore(postgres_url)
    again.open(MODEL, DIMS)
    try:
        assert again.meta()["schema_version"] == "3"
        assert index_state(again) is None
    finally:
        again.close()


def test_a_bulk_load_drops_the_index_and_builds_it_again(postgres_url: str, small_bulk: None) -> None:
    store, other = PostgresStore(postgres_url, exact_rows=0), PostgresStore(postgres_url, exact_rows=0)
    store.open(MODEL, DIMS)
    other.open(MODEL, DIMS)
    try:
        first, first_vectors = memories(1, start=200)
        store.insert(first, first_vectors)
        indexed(store)
        items, vectors = memories(40)
        with store.bulk_load(40):
            assert index_state(store) is None  # dropped: rows arrive without the per-row graph insert
            for start in range(0, 40, 8):
                with store.transaction():
                    store.insert(items[start : start + 8], vectors[start : start + 8])
            # another server keeps writing and searching meanwhile (an exact scan, still right)
            late, late_vectors = memories(1, start=100)
            other.insert(late, late_vectors)
            assert [i for i, _ in other.knn(unit(7), 1, MemoryFilter())] == [items[7].id]
            other._index.join()
        assert index_state(store) is True
        for probe in (3, 21, 39):  # through the rebuilt index (exact_rows=0)
            assert [i for i, _ in store.knn(unit(probe), 1, MemoryFilter())] == [items[probe].id]
        assert [i for i, _ in store.knn(unit(100), 1, MemoryFilter())] == [late[0].id]
    finally:
        store.close()
        other.close()


def test_a_small_load_or_a_big_store_keeps_the_index(postgres_url: str, small_bulk: None) -> None:
    store = PostgresStore(postgres_url, exact_rows=0)
    store.open(MODEL, DIMS)
    try:
        store.insert(*memories(1, start=200))
        indexed(store)
        with store.bulk_load(9):  # below BULK_ROWS
            assert index_state(store) is True
        store.insert(*memories(30))
        with store.bulk_load(20):  # fewer than the 31 vectors already stored: cheaper to keep it
            assert index_state(store) is True
    finally:
        store.close()


def test_a_bulk_load_into_a_store_below_exact_rows_builds_no_index(
    postgres_url: str, small_bulk: None
) -> None:
    store = PostgresStore(postgres_url, exact_rows=100)
    store.open(MODEL, DIMS)
    try:
        with store.bulk_load(50):
            store.insert(*memories(50))
        assert index_state(store) is None
    finally:
        store.close()


def test_a_failed_bulk_load_still_rebuilds_the_index(postgres_url: str, small_bulk: None) -> None:
    store = PostgresStore(postgres_url, exact_rows=0)
    store.open(MODEL, DIMS)
    try:
        store.insert(*memories(1, start=200))
        indexed(store)
        with pytest.raises(ZeroDivisionError), store.bulk_load(50):
            store.insert(*memories(5))
            raise ZeroDivisionError
        assert index_state(store) is True
    finally:
        store.close()


def test_opening_builds_an_index_a_crash_left_missing(postgres_url: str) -> None:
    store = PostgresStore(postgres_url, exact_rows=0)
    store.open(MODEL, DIMS)
    items, vectors = memories(12)
    store.insert(items, vectors)
    indexed(store)
    with store._connection() as conn:  # what a bulk load killed before its end leaves behind
        conn.execute("DROP INDEX mcp_memory.passages_embedding")
    store.close()
    again = PostgresStore(postgres_url, exact_rows=0)
    again.open(MODEL, DIMS)
    try:
        assert index_state(again) is True
        assert [i for i, _ in again.knn(unit(5), 1, MemoryFilter())] == [items[5].id]
    finally:
        again.close()


def test_an_engine_import_uses_the_bulk_load(postgres_url: str, small_bulk: None) -> None:
    from mcp_memory_core import MemoryEngine
    from mcp_memory_testing import HashEmbedder, SimilarityRanker  # the conformance venv holds no ranker

    seen: list[bool | None] = []
    loads: list[int] = []

    class Watching(PostgresStore):
        def insert(self, *args: object, **kwargs: object) -> None:
            seen.append(index_state(store))
            super().insert(*args, **kwargs)  # type: ignore[arg-type]

        def bulk_load(self, rows: int) -> contextlib.AbstractContextManager[None]:
            loads.append(rows)
            return super().bulk_load(rows)

    store = Watching(postgres_url, exact_rows=20)  # 30 imported: past exact scans, so indexed after
    engine = MemoryEngine(store, HashEmbedder(), SimilarityRanker())
    try:
        imported = [Memory(content=f"imported note {i}") for i in range(30)]
        outcome = engine.import_memories(imported, batch_size=8)
        assert outcome.inserted == 30
        assert seen == [None, None, None, None]  # every batch went in without the index
        assert index_state(store) is True
        # the same import again inserts nothing, so it asks for no bulk load (the index stays)
        again = engine.import_memories([Memory(id=m.id, content=m.content) for m in imported], batch_size=8)
        assert (again.inserted, again.skipped) == (0, 30)
        assert loads == [30, 0] and seen == [None] * 4 and index_state(store) is True
        assert engine.search_memories("imported note 17", limit=1)[0].memory.content == "imported note 17"
    finally:
        engine.close()


def test_reindex_moves_the_team_database_to_another_model(postgres_url: str) -> None:
    """engine.reindex on PostgreSQL: a server still on the old model stores meanwhile and is refused
    after the switch; the new vectors come with an HNSW index under the store's usual name."""
    from mcp_memory_core import MemoryEngine, ModelMismatchError
    from mcp_memory_testing import HashEmbedder, SimilarityRanker

    old = MemoryEngine(PostgresStore(postgres_url), HashEmbedder(64), SimilarityRanker(), namespace="team")
    new_store = PostgresStore(postgres_url, exact_rows=10)  # 22 memories: past exact scans, indexed
    new = MemoryEngine(new_store, HashEmbedder(32), SimilarityRanker(), namespace="team")
    try:
        for i in range(20):
            old.store_memory(f"note {i}: the {i % 3}th rack holds server {i}")
        old.store_memory("The payments service runs on rack seven")
        during: list[str] = []

        def meanwhile(done: int, total: int) -> None:
            if done and not during:
                during.append(old.store_memory("The VPN gateway was replaced in June").memory.id)

        outcome = new.reindex(batch_size=4, progress=meanwhile)
        assert (outcome.previous, outcome.model_id) == ("hash-64", "hash-32") and outcome.embedded == 22
        assert new.search("which rack runs payments", limit=1).hits[0].memory.content == (
            "The payments service runs on rack seven"
        )
        assert new.search("VPN gateway replaced", limit=1).hits[0].memory.id == during[0]
        assert index_state(new.store) is True  # type: ignore[arg-type]
        with pytest.raises(ModelMismatchError, match="was re-embedded with model 'hash-32'"):
            old.search("payments")
        with pytest.raises(ModelMismatchError):
            old.store_memory("A fact the old server must not store")
        assert new.count(namespace="team") == 22
    finally:
        old.close()
        new.close()
