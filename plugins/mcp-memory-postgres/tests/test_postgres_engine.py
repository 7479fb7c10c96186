"""The engine's write rules on PostgreSQL, with several servers (engines) on one database: the
dedup check of store_memory holds across servers, and a NUL character is refused in one sentence
(PostgreSQL's text cannot hold it), on an import too."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import psycopg
import pytest

from mcp_memory_core import InvalidInputError, Memory, MemoryEngine, MemoryFilter
from mcp_memory_core.filters import Filters
from mcp_memory_core.transfer import export_memories, import_records, read_memories, refused_records
from mcp_memory_postgres import PostgresStore
from mcp_memory_testing import HashEmbedder, SimilarityRanker

TEXT = "The deploy key rotates every Friday at noon"


@pytest.fixture
def servers(postgres_url: str) -> Iterator[list[MemoryEngine]]:
    """Two servers on one database, each with a store (and a connection pool) of its own."""
    engines = [
        MemoryEngine(PostgresStore(postgres_url), HashEmbedder(), SimilarityRanker()) for _ in range(2)
    ]
    for engine in engines:
        engine.warm()
    try:
        yield engines
    finally:
        for engine in engines:
            engine.close()


def hold_after_check(engine: MemoryEngine) -> tuple[threading.Event, threading.Event]:
    """Make ``engine``'s store_memory stop right after its dedup check, inside its write transaction:
    it sets the first event there and goes on once the second is set."""
    checked, release = threading.Event(), threading.Event()
    real_check = engine.writes.near_duplicates

    def check_then_hold(*args: Any, **kwargs: Any) -> Any:
        found = real_check(*args, **kwargs)
        checked.set()
        assert release.wait(60), "the test never let the first writer go"
        return found

    engine.writes.near_duplicates = check_then_hold  # type: ignore[method-assign]
    return checked, release


def waiting_on_a_lock(url: str) -> bool:
    """True when some session of the database waits for a lock (PostgreSQL's own view of it)."""
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock'"
        ).fetchone()
    return bool(row and row[0])


def test_two_servers_storing_one_text_at_once_store_it_once(
    servers: list[MemoryEngine], postgres_url: str
) -> None:
    """The first server's write transaction is held open right after its dedup check found nothing;
    the second server stores the same text meanwhile. Its check must wait for the first commit and
    then answer "duplicate of" it: without that wait, both checks find nothing and both write.

    The first writer is let go once the second has either finished (the race lost: two rows) or
    waits on a lock in PostgreSQL: no timing decides the outcome."""
    first, second = servers
    checked, release = hold_after_check(first)
    with ThreadPoolExecutor(2) as pool:
        held = pool.submit(first.store_memory, TEXT)
        assert checked.wait(60)
        racing = pool.submit(second.store_memory, TEXT)
        for _ in range(6000):  # until the second is done or waits on the first (a minute at most)
            if racing.done() or waiting_on_a_lock(postgres_url):
                break
            threading.Event().wait(0.01)
        release.set()
        outcomes = [held.result(60), racing.result(60)]
    assert [o.status for o in outcomes] == ["stored", "duplicate"]
    assert outcomes[1].memory.id == outcomes[0].memory.id
    assert first.store.count(MemoryFilter(namespace=None)) == 1


def test_different_texts_do_not_wait_for_each_other(servers: list[MemoryEngine]) -> None:
    """The lock is per text (and owner and namespace): a second server storing another text while
    the first holds its write transaction open finishes first."""
    first, second = servers
    checked, release = hold_after_check(first)
    with ThreadPoolExecutor(1) as pool:
        held = pool.submit(first.store_memory, TEXT)
        assert checked.wait(60)
        try:
            other = second.store_memory("The staging database is rebuilt every Monday")
        finally:
            release.set()
        assert held.result(60).status == "stored"
    assert other.status == "stored"
    assert first.store.count(MemoryFilter(namespace=None)) == 2


# -- NUL (U+0000): PostgreSQL's text cannot hold it; the engine refuses it in one sentence -----------
NUL_REFUSED = "contains a NUL character (U+0000), which mcp-memory does not store; remove it."


def test_a_nul_in_a_write_or_a_filter_is_one_sentence(servers: list[MemoryEngine]) -> None:
    engine = servers[0]
    kept = engine.store_memory("kept").memory
    attempts: list[Callable[[], Any]] = [
        lambda: engine.store_memory("x\x00y"),
        lambda: engine.store_memory("ok", {"topic": "a\x00b"}),
        lambda: engine.store_memory("ok", tags=["t\x00"]),
        lambda: engine.update_memory(kept.id, "new\x00"),
        lambda: engine.list_memories(filters=Filters.parse(metadata={"topic": "a\x00b"})),
        lambda: engine.search_memories("kept", filters=Filters.parse(tags=["t\x00"])),
    ]
    for attempt in attempts:
        with pytest.raises(InvalidInputError) as caught:
            attempt()
        assert str(caught.value).endswith(NUL_REFUSED)
    assert [m.id for m in engine.store.iter_all()] == [kept.id]


def test_a_sqlite_export_holding_a_nul_imports_the_rest_and_names_the_refused(
    servers: list[MemoryEngine], tmp_path: Path
) -> None:
    """A SQLite store written before NUL was refused holds one: its export moves into PostgreSQL
    with that memory refused by id in the outcome (no traceback, nothing dropped unsaid)."""
    sqlite_vec = pytest.importorskip("mcp_memory_sqlite_vec")
    source = MemoryEngine(sqlite_vec.SqliteVecStore(tmp_path / "old.db"), HashEmbedder(), SimilarityRanker())
    source.warm()
    kept = source.store_memory("the staging database is rebuilt every Monday").memory
    old = Memory(content="pasted \x00 bytes", owner=kept.owner, namespace=kept.namespace)
    with source.store.transaction():  # as an older mcp-memory wrote it: straight into the store
        source.store.insert([old], HashEmbedder().embed_documents([old.content]))
    export = tmp_path / "export.jsonl"
    with export.open("w", encoding="utf-8") as out:
        assert export_memories(source, out) == 2
    source.close()

    engine = servers[0]
    memories = read_memories(export, "mcp-memory", now=engine.clock())
    outcome = import_records(engine, memories)
    assert (outcome.inserted, outcome.skipped) == (1, 0)
    assert refused_records(memories, outcome) == [
        {"id": old.id, "where": memories.where(old.id), "reason": f"content {NUL_REFUSED}"}
    ]
    assert [m.id for m in engine.store.iter_all()] == [kept.id]


def test_one_store_memory_is_one_transaction_of_seven_statements(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each statement is a round trip: the text's lock, the model check with the row count, the KNN,
    the candidates' rows, the memory (its seq returned), the model check after that row lock, its
    passages; in one transaction. It was 11: the KNN checked the model after its query too (the
    write's own check after its lock covers it), the row count took two queries and the seq one more;
    then 8, the model check and the row count two queries."""
    engine = MemoryEngine(PostgresStore(postgres_url), HashEmbedder(), SimilarityRanker())
    engine.warm()
    for i in range(5):
        engine.store_memory(f"fact number {i} about the blue build")
    issued: list[str] = []
    transactions: list[str] = []
    execute, executemany = psycopg.Cursor.execute, psycopg.Cursor.executemany
    transaction = psycopg.Connection.transaction

    def traced(method: Any) -> Any:
        return lambda cur, query, *args, **kwargs: (
            issued.append(str(query)) or method(cur, query, *args, **kwargs)
        )

    def counted(conn: Any, *args: Any, **kwargs: Any) -> Any:
        transactions.append("tx")
        return transaction(conn, *args, **kwargs)

    monkeypatch.setattr(psycopg.Cursor, "execute", traced(execute))
    monkeypatch.setattr(psycopg.Cursor, "executemany", traced(executemany))
    monkeypatch.setattr(psycopg.Connection, "transaction", counted)
    assert engine.store_memory("The team ships the green build on Fridays.").status == "stored"
    assert transactions == ["tx"]
    assert len(issued) == 7, "\n".join(" ".join(q.split())[:100] for q in issued)
    engine.close()


def test_a_long_memorys_sentences_are_added_once_by_whichever_server_gets_there(
    servers: list[MemoryEngine],
) -> None:
    """One server answers a long memory with its whole text's vector; the other server's filler adds
    the sentences; the first one's finds nothing left to do."""
    from mcp_memory_core.passages import split_passages

    first, second = servers
    first.defer_passages = True
    first.passage_filler.wake = lambda: None  # type: ignore[method-assign]  # drained by hand below
    text = "The deploy key rotates every Friday. Bob rotates it. Alice checks the audit log after."
    outcome = first.store_memory(text)
    store = first.store
    assert isinstance(store, PostgresStore)
    assert store.pending_passages(5) == [(outcome.memory.id, text)]
    assert len(store.vectors([outcome.memory.id])[outcome.memory.id]) == 1
    assert second.passage_filler.drain_step() == "completed"
    assert first.passage_filler.drain_step() == "empty"
    assert len(store.vectors([outcome.memory.id])[outcome.memory.id]) == len(split_passages(text)) == 4
    hits = second.search_memories("Bob rotates it.", limit=1)
    assert [hit.memory.id for hit in hits] == [outcome.memory.id]


def test_two_servers_storing_at_once_past_exact_rows_build_the_index_once_and_lose_nothing(
    postgres_url: str,
) -> None:
    """Both servers' duplicate checks cross exact_rows while 4 threads store through each: the
    index gets built (by whichever takes the build lock) while they write, no store fails, every
    one is there, and the index answers afterwards."""
    from mcp_memory_postgres.vector_index import index_valid

    stores = [PostgresStore(postgres_url, exact_rows=40) for _ in range(2)]
    engines = [MemoryEngine(store, HashEmbedder(), SimilarityRanker()) for store in stores]
    texts = [
        f"fact {i}: the {i % 7}th build of service {i * 13} passed on runner {i % 5}" for i in range(160)
    ]

    def store(i: int) -> str:
        return engines[i % 2].store_memory(texts[i]).status

    try:
        with ThreadPoolExecutor(8) as pool:
            assert set(pool.map(store, range(len(texts)))) == {"stored"}
        for s in stores:
            s._index.join()
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            assert index_valid(conn) is True
            (indexes,) = conn.execute(
                "SELECT count(*) FROM pg_indexes WHERE schemaname = 'mcp_memory' AND tablename = 'passages' "
                "AND indexdef LIKE '%hnsw%'"
            ).fetchone()
        assert indexes == 1
        for engine in engines:
            assert engine.count() == len(texts)
            assert engine.search(texts[123], limit=1).hits[0].memory.content == texts[123]
    finally:
        for engine in engines:
            engine.close()
