"""StoreConformance: what every store must do. Subclass it and provide a ``store`` fixture.

Example::

    import pytest
    from mcp_memory_testing import StoreConformance

    class TestMyStore(StoreConformance):
        @pytest.fixture
        def store(self, tmp_path):
            return MyStore(tmp_path / "memories.db")   # EMPTY and NOT opened: the suite opens it

        def reopen_store(self, store):                 # optional: a fresh instance on the same data
            return MyStore(store.location)

The suite opens the store with ``model_id`` / ``dimensions`` (class attributes) and closes it after each
test. Keyword tests are skipped when ``store.capabilities.keyword_search`` is false. Vectors are plain
numpy unit vectors from a fixed-seed RNG, so results are deterministic and checked against numpy.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import numpy as np
import pytest

from mcp_memory_core import Memory, MemoryFilter, MemoryType, ModelMismatchError, Store, StoreCapabilities
from mcp_memory_core.models import PrivacyScope, Visibility

from .guard import OverrideGuard

BASE_TIME = datetime(2024, 5, 17, 12, 0, 0, 123456, tzinfo=UTC)
ALL = MemoryFilter(namespace=None, include_deleted=True, include_superseded=True)
SEARCH = MemoryFilter()  # default namespace, no tombstones, superseded included (the engine's search view)

FTS_HOSTILE_QUERIES = [
    '"',
    '""',
    "'",
    "AND",
    "OR",
    "NOT",
    "-",
    "*",
    "(",
    ")",
    "^",
    ":",
    "a AND (",
    "NEAR(a b)",
    "content:zebra",
    "zebra*",
    '"unterminated phrase',
    "-zebra +giraffe",
    "{x y}",
    "🙂",
    "   ",
    "\x00",
    "ü" * 300,
]


def unit_vectors(n: int, dims: int, seed: int) -> np.ndarray:
    """``n`` deterministic float32 unit vectors."""
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((n, dims)).astype(np.float32)
    out: np.ndarray = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    return out


def near(vector: np.ndarray, seed: int, noise: float = 0.05) -> np.ndarray:
    """A unit vector close to ``vector`` (cosine ≈ 1 - noise²/2 · dims-ish)."""
    rng = np.random.default_rng(seed)
    out = vector + noise * rng.standard_normal(vector.shape).astype(np.float32)
    unit: np.ndarray = (out / np.linalg.norm(out)).astype(np.float32)
    return unit


def _hit_ids(hits: Sequence[tuple[str, float]]) -> set[str]:
    return {memory_id for memory_id, _ in hits}


def _row_ids(rows: Sequence[Memory]) -> set[str]:
    return {m.id for m in rows}


def _reference_neighbours(
    items: Sequence[Memory], where: MemoryFilter
) -> dict[str, tuple[str | None, str | None]]:
    """``thread_neighbours`` of every item, by the reference semantics."""
    matching = sorted(
        (m for m in items if where.matches(m) and m.thread is not None),
        key=lambda m: (m.occurred_at, m.created_at, m.id),
    )
    out: dict[str, tuple[str | None, str | None]] = {}
    for thread in {m.thread for m in matching}:
        order = [m.id for m in matching if m.thread == thread]
        for i, memory_id in enumerate(order):
            out[memory_id] = (order[i - 1] if i else None, order[i + 1] if i + 1 < len(order) else None)
    return out


def memory(i: int = 0, **fields: Any) -> Memory:
    """A memory created ``i`` seconds after BASE_TIME (fields override anything)."""
    created = BASE_TIME + timedelta(seconds=i)
    values: dict[str, Any] = {"content": f"memory number {i}", "created_at": created, "updated_at": created}
    values.update(fields)
    return Memory(**values)


class StoreConformance(OverrideGuard):
    """Subclass and override the ``store`` fixture to return an EMPTY, un-opened store.

    Override ``reopen_store`` if your store can be re-created from its location (a file, a DSN): the
    persistence tests then check that data survives a new instance, not only close()/open().
    """

    model_id: str = "hash-64"
    dimensions: int = 64

    # -- fixtures and hooks ----------------------------------------------------------------------
    @pytest.fixture
    def store(self) -> Store:
        raise NotImplementedError("Override the `store` fixture to return an empty, un-opened store.")

    @pytest.fixture
    def opened(self, store: Store) -> Iterator[Store]:
        store.open(self.model_id, self.dimensions)
        yield store
        with contextlib.suppress(Exception):  # a test may already have closed it
            store.close()

    def reopen_store(self, store: Store) -> Store:
        """A store instance over the same data as ``store`` (which is closed). Default: ``store`` itself."""
        return store

    # -- helpers ---------------------------------------------------------------------------------
    def add(
        self, store: Store, memories: Sequence[Memory], vectors: np.ndarray | None = None, seed: int = 0
    ) -> np.ndarray:
        if vectors is None:
            vectors = unit_vectors(len(memories), self.dimensions, seed)
        store.insert(list(memories), np.asarray(vectors, dtype=np.float32))
        return vectors

    def _keyword(self, store: Store) -> None:
        if not store.capabilities.keyword_search:
            pytest.skip("store does not offer keyword_search")

    # -- protocol and lifecycle ------------------------------------------------------------------
    def test_implements_protocol(self, store: Store) -> None:
        """Troubleshooting: a store needs every member of ``mcp_memory_core.Store``: ``capabilities``
        (a StoreCapabilities), ``location`` (a str for humans), open/close/transaction/insert/get/
        update_fields/knn/keyword_search/list/count/iter_all. ``capabilities`` and ``location`` must work
        before ``open()``."""
        assert isinstance(store, Store)
        assert isinstance(store.capabilities, StoreCapabilities)
        assert isinstance(store.location, str) and store.location

    def test_new_store_is_empty(self, opened: Store) -> None:
        """Troubleshooting: the ``store`` fixture must return an EMPTY store (use ``tmp_path`` for a
        fresh file or database per test); ``count``, ``list`` and ``iter_all`` must work on no rows."""
        assert opened.count(ALL) == 0
        assert opened.list(ALL, 10) == []
        assert list(opened.iter_all()) == []
        assert opened.get(["00000000-0000-0000-0000-000000000000"]) == {}
        assert opened.knn(unit_vectors(1, self.dimensions, 1)[0], 5, ALL) == []

    def test_open_twice_same_model(self, opened: Store) -> None:
        """Troubleshooting: ``open()`` with the model the store is already bound to must be a no-op
        (the engine may call it more than once); only a DIFFERENT model is an error."""
        opened.open(self.model_id, self.dimensions)
        self.add(opened, [memory(1)])
        assert opened.count(ALL) == 1

    def test_close_reopen_persists(self, opened: Store) -> None:
        """Troubleshooting: data must survive ``close()`` and a new ``open()`` with the same model (and a
        new instance, when ``reopen_store`` is overridden). If rows are missing, commit before close
        (autocommit off?), or don't recreate/truncate tables when they already exist."""
        items = [memory(i, content=f"persistent fact {i}") for i in range(3)]
        vectors = self.add(opened, items)
        opened.close()
        again = self.reopen_store(opened)
        again.open(self.model_id, self.dimensions)
        try:
            assert again.get([m.id for m in items]) == {m.id: m for m in items}
            hits = again.knn(vectors[1], 1, SEARCH)
            assert hits and hits[0][0] == items[1].id
            assert again.count(SEARCH) == 3
        finally:
            again.close()

    def test_model_mismatch_refused(self, opened: Store) -> None:
        """Troubleshooting: the store must remember the embedding model it was opened with (persist it
        next to the data) and raise ``ModelMismatchError(location, stored, configured)`` when opened with
        another ``model_id``. Opening again with the right model must still work afterwards."""
        items = [memory(1)]
        self.add(opened, items)
        opened.close()
        again = self.reopen_store(opened)
        if opened.capabilities.derived_index:
            self._check_index_per_model(again, items)
            return
        with pytest.raises(ModelMismatchError) as info:
            again.open("some-other-model", self.dimensions)
        assert info.value.stored == self.model_id
        assert info.value.configured == "some-other-model"
        again.open(self.model_id, self.dimensions)
        try:
            assert set(again.get([items[0].id])) == {items[0].id}
        finally:
            again.close()

    def _check_index_per_model(self, store: Any, items: Sequence[Memory]) -> None:
        """A store with ``capabilities.derived_index`` opened with another model: its ``refresh``
        builds that model's index from its own data (asking ``embed`` for every text), whose vectors
        are the new model's only; opened with the first model again, the first index answers."""
        assert callable(getattr(store, "refresh", None)), "capabilities.derived_index needs refresh(embed)"
        asked: list[str] = []

        def embed(texts: Sequence[str]) -> tuple[np.ndarray, None]:
            asked.extend(texts)
            return unit_vectors(len(texts), self.dimensions + 8, 321), None

        store.open("some-other-model", self.dimensions + 8)
        try:
            store.refresh(embed)
            assert sorted(asked) == sorted(m.content for m in items)
            assert set(store.get([m.id for m in items])) == {m.id for m in items}
            rows = store.vectors([items[0].id]) if store.capabilities.read_vectors else None
            assert rows is None or np.asarray(rows[items[0].id]).shape[1] == self.dimensions + 8
        finally:
            store.close()
        store.open(self.model_id, self.dimensions)
        try:
            assert set(store.get([m.id for m in items])) == {m.id for m in items}
            assert store.knn(unit_vectors(1, self.dimensions, 5)[0], 1, ALL)
        finally:
            store.close()

    # -- insert / get ----------------------------------------------------------------------------
    def test_roundtrip_every_field(self, opened: Store) -> None:
        """Troubleshooting: every Memory field must come back equal. Usual culprits: datetimes stored
        without timezone or microseconds (store UTC with full precision and return timezone-aware
        datetimes), tags returned as a list instead of a tuple, metadata flattened or stringified, type
        returned as a plain string that is not a MemoryType, pinned returned as 0/1, unicode mangled."""
        full = Memory(
            content="Ünïcödé ✓ — emoji 🙂, CJK 記憶, RTL שלום, newline\nand tab\t and quote \" '",
            metadata={
                "source": "conformance",
                "nested": {"list": [1, 2.5, "three", None, True], "deep": {"x": {"y": "z"}}},
                "ünï": "cödé",
                "empty": {},
            },
            created_at=datetime(2023, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
            updated_at=datetime(2024, 1, 1, 0, 0, 0, 1, tzinfo=UTC),
            superseded_by="11111111-2222-3333-4444-555555555555",
            deleted_at=datetime(2024, 2, 29, 8, 30, 0, 500000, tzinfo=UTC),
            namespace="project-ünï/sub",
            type=MemoryType.PROCEDURAL,
            tags=("pytest", "ünï", "with space", "a"),
            importance=0.25,
            pinned=True,
            access_count=7,
            last_accessed=datetime(2024, 3, 1, tzinfo=UTC),
            owner="alice@example.org",
            privacy_scope=PrivacyScope.TEAM,
            occurred_at=datetime(1999, 12, 31, 12, 0, 0, 123456, tzinfo=UTC),
            thread="chat ünï/42",
        )
        minimal = Memory(content="x")
        offset = Memory(
            content="created in another timezone",
            created_at=datetime(2024, 6, 1, 17, 30, 0, 42, tzinfo=timezone(timedelta(hours=5, minutes=30))),
            updated_at=datetime(2024, 6, 1, 12, 0, 0, 42, tzinfo=UTC),
        )
        self.add(opened, [full, minimal, offset])
        got = opened.get([full.id, minimal.id, offset.id])
        assert got[full.id] == full
        assert got[minimal.id] == minimal
        assert got[offset.id] == offset  # the same instant; the timezone may be normalized to UTC
        for m in got.values():
            for stamp in (m.created_at, m.updated_at, m.deleted_at, m.last_accessed):
                if stamp is not None:
                    assert stamp.tzinfo is not None and stamp.utcoffset() is not None, "naive datetime"
        g = got[full.id]
        assert g.created_at.utcoffset() == timedelta(0)
        assert g.created_at.microsecond == 999999
        assert isinstance(g.tags, tuple) and g.tags == full.tags
        assert g.type is MemoryType.PROCEDURAL
        assert g.pinned is True
        assert g.privacy_scope is PrivacyScope.TEAM and g.owner == "alice@example.org"
        assert g.occurred_at == full.occurred_at and g.thread == "chat ünï/42"
        assert got[minimal.id].occurred_at == minimal.created_at and got[minimal.id].thread is None
        assert g.metadata["nested"]["list"] == [1, 2.5, "three", None, True]
        assert got[minimal.id].deleted_at is None and got[minimal.id].last_accessed is None

    def test_get_missing_ids(self, opened: Store) -> None:
        """Troubleshooting: ``get`` returns a dict holding only the ids that exist; a missing id is
        absent, never an exception or a None value. ``get([])`` is ``{}``."""
        items = [memory(1), memory(2)]
        self.add(opened, items)
        missing = "99999999-9999-9999-9999-999999999999"
        assert opened.get([missing]) == {}
        assert opened.get([]) == {}
        got = opened.get([items[0].id, missing, items[1].id, items[0].id])
        assert set(got) == {items[0].id, items[1].id}

    def test_get_returns_tombstones_and_superseded(self, opened: Store) -> None:
        """Troubleshooting: ``get`` ignores filters: deleted and superseded memories and every namespace
        come back (the engine resolves chains with it)."""
        items = [
            memory(1, deleted_at=BASE_TIME),
            memory(2, superseded_by="11111111-2222-3333-4444-555555555555"),
            memory(3, namespace="elsewhere"),
        ]
        self.add(opened, items)
        assert set(opened.get([m.id for m in items])) == {m.id for m in items}

    def test_insert_duplicate_id_stores_nothing_of_the_batch(self, opened: Store) -> None:
        """Troubleshooting: inserting an id that already exists must raise, and the whole ``insert``
        call must be atomic: the other memories of that batch must not be stored either (write the batch
        in one transaction)."""
        first = memory(1)
        self.add(opened, [first])
        fresh = memory(2)
        with pytest.raises(Exception):  # noqa: B017 - any error type is acceptable
            self.add(opened, [fresh, first.model_copy(update={"content": "dup"})], seed=5)
        assert opened.get([fresh.id]) == {}
        assert opened.get([first.id])[first.id].content == first.content
        assert opened.count(ALL) == 1

    def test_insert_many(self, opened: Store) -> None:
        """Troubleshooting: one ``insert`` call may carry many memories; row i of ``vectors`` belongs to
        memory i. If KNN finds the wrong ids, vectors were paired with the wrong rows."""
        items = [memory(i) for i in range(100)]
        vectors = self.add(opened, items, seed=3)
        assert opened.count(ALL) == 100
        for i in (0, 37, 99):
            assert opened.knn(vectors[i], 1, ALL)[0][0] == items[i].id

    # -- update_fields ---------------------------------------------------------------------------
    def test_update_fields(self, opened: Store) -> None:
        """Troubleshooting: ``update_fields`` sets exactly the given fields of one memory and leaves every
        other field (and every other memory) untouched; values round-trip like in insert."""
        target, other = memory(1, tags=("a",)), memory(2)
        self.add(opened, [target, other])
        stamp = BASE_TIME + timedelta(days=1, microseconds=7)
        changes: dict[str, Any] = {
            "superseded_by": other.id,
            "updated_at": stamp,
            "pinned": True,
            "importance": 0.9,
            "access_count": 3,
            "last_accessed": stamp,
            "metadata": {"k": {"v": [1, 2]}},
            "tags": ("b", "c"),
        }
        opened.update_fields(target.id, changes)
        got = opened.get([target.id, other.id])
        assert got[target.id] == target.model_copy(update=changes)
        assert got[other.id] == other
        opened.update_fields(target.id, {"deleted_at": stamp})
        assert opened.get([target.id])[target.id].deleted_at == stamp
        assert opened.get([target.id])[target.id].pinned is True

    def test_update_fields_moves_memory_between_filters(self, opened: Store) -> None:
        """Troubleshooting: filters must see updates. A store that copies flags into its vector or
        keyword index (e.g. sqlite-vec metadata columns) must update that copy in ``update_fields`` too,
        or tombstoned memories keep turning up in search (and un-deleted ones never come back)."""
        items = [memory(i, content=f"walrus fact {i}") for i in range(3)]
        vectors = self.add(opened, items)
        victim = items[0]
        opened.update_fields(victim.id, {"deleted_at": BASE_TIME})
        assert victim.id not in dict(opened.knn(vectors[0], 3, SEARCH))
        assert victim.id not in {m.id for m in opened.list(SEARCH, 10)}
        assert opened.count(SEARCH) == 2
        if opened.capabilities.keyword_search:
            assert victim.id not in dict(opened.keyword_search("walrus", 10, SEARCH))
        opened.update_fields(victim.id, {"deleted_at": None})
        assert opened.knn(vectors[0], 1, SEARCH)[0][0] == victim.id
        opened.update_fields(items[1].id, {"superseded_by": items[2].id})
        heads = MemoryFilter(include_superseded=False)
        assert items[1].id not in dict(opened.knn(vectors[1], 3, heads))
        assert opened.knn(vectors[1], 1, SEARCH)[0][0] == items[1].id
        assert opened.count(heads) == 2

    # -- transactions ----------------------------------------------------------------------------
    def test_transaction_commits(self, opened: Store) -> None:
        """Troubleshooting: writes inside ``with store.transaction():`` must all be visible after the
        block exits normally (commit on exit), including reads made inside the block."""
        a, b = memory(1), memory(2)
        with opened.transaction():
            self.add(opened, [a])
            self.add(opened, [b], seed=1)
            opened.update_fields(a.id, {"pinned": True})
            assert set(opened.get([a.id, b.id])) == {a.id, b.id}
        assert opened.get([a.id])[a.id].pinned is True
        assert opened.count(ALL) == 2

    def test_transaction_rollback(self, opened: Store) -> None:
        """Troubleshooting: an exception inside ``transaction()`` must undo EVERY write of the block
        (inserts, their vectors and keyword entries, and updates) and propagate the exception. If rows
        remain, each write probably commits on its own instead of joining the open transaction."""
        keep = memory(1, content="kept ocelot")
        vectors = self.add(opened, [keep])
        doomed = [memory(2, content="doomed ocelot"), memory(3, content="doomed ocelot too")]
        with pytest.raises(RuntimeError, match="boom"), opened.transaction():
            self.add(opened, doomed, vectors=np.stack([vectors[0], vectors[0]]))
            opened.update_fields(keep.id, {"pinned": True, "deleted_at": BASE_TIME})
            raise RuntimeError("boom")
        assert opened.get([m.id for m in doomed]) == {}
        assert opened.get([keep.id])[keep.id] == keep
        assert opened.count(ALL) == 1
        assert [i for i, _ in opened.knn(vectors[0], 5, ALL)] == [keep.id]
        if opened.capabilities.keyword_search:
            assert [i for i, _ in opened.keyword_search("ocelot", 5, ALL)] == [keep.id]
        self.add(opened, doomed, seed=9)  # the store is still usable, and the ids are free again
        assert opened.count(ALL) == 3

    def test_nested_transaction(self, opened: Store) -> None:
        """Troubleshooting: ``transaction()`` may nest; the inner block is a no-op (it neither commits
        nor starts a new transaction), so an exception escaping the OUTER block undoes the inner
        block's writes too. Keep a depth counter; only the outermost block begins/commits/rolls back."""
        a, b, c = memory(1), memory(2), memory(3)
        with opened.transaction():
            with opened.transaction():
                self.add(opened, [a])
            self.add(opened, [b], seed=1)
        assert opened.count(ALL) == 2
        with pytest.raises(RuntimeError), opened.transaction():
            with opened.transaction():
                self.add(opened, [c], seed=2)
            raise RuntimeError("outer fails")
        assert opened.get([c.id]) == {}
        assert opened.count(ALL) == 2

    def test_threads(self, opened: Store) -> None:
        """Troubleshooting: the server calls the store from worker threads. Guard the connection(s)
        with a lock (SQLite: ``check_same_thread=False`` plus an RLock held for a whole transaction), or
        writes get lost, interleave inside another thread's transaction, or raise."""
        errors: list[BaseException] = []
        per_thread = 25

        def work(t: int) -> None:
            try:
                for i in range(per_thread):
                    m = memory(t * 1000 + i)
                    with opened.transaction():
                        self.add(opened, [m], seed=t * 1000 + i)
                        opened.update_fields(m.id, {"access_count": 1})
                    assert opened.get([m.id])[m.id].access_count == 1
                    opened.knn(unit_vectors(1, self.dimensions, i)[0], 3, SEARCH)
                    opened.count(SEARCH)
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert not errors, errors
        assert opened.count(ALL) == 4 * per_thread

    def test_thread_safe_reads_run_beside_a_writer(self, opened: Store) -> None:
        """Troubleshooting (stores declaring ``capabilities.thread_safe``): the server then calls the
        store from many threads with no lock of its own, so a read in one thread must neither wait for
        another thread's open transaction nor see its uncommitted writes (SQLite: a read connection per
        thread, WAL; PostgreSQL: a connection per request from a pool)."""
        if not opened.capabilities.thread_safe:
            pytest.skip("store does not declare thread_safe")
        committed = memory(1, content="committed heron")
        pending = memory(2, content="pending heron")
        vectors = self.add(opened, [committed], seed=31)
        inside, release = threading.Event(), threading.Event()
        errors: list[BaseException] = []

        def writer() -> None:
            try:
                with opened.transaction():
                    self.add(opened, [pending], vectors=vectors)  # the same vector: knn must choose
                    inside.set()
                    release.wait(120)
            except BaseException as exc:
                errors.append(exc)
                inside.set()

        seen: dict[str, Any] = {}

        def reader() -> None:
            try:
                seen["get"] = set(opened.get([committed.id, pending.id]))
                seen["list"] = _row_ids(opened.list(ALL, 10))
                seen["count"] = opened.count(ALL)
                seen["knn"] = _hit_ids(opened.knn(vectors[0], 5, ALL))
                if opened.capabilities.keyword_search:
                    seen["keyword"] = _hit_ids(opened.keyword_search("heron", 5, ALL))
            except BaseException as exc:
                errors.append(exc)

        write = threading.Thread(target=writer)
        write.start()
        assert inside.wait(120)
        read = threading.Thread(target=reader)
        read.start()
        read.join(120)  # a deadlock guard, not a speed limit: the writer waits for this read
        read_done = not read.is_alive()
        release.set()
        write.join(120)
        read.join(120)
        assert not errors, errors
        assert read_done, "a read waited for another thread's open transaction"
        only = {committed.id}
        assert seen["get"] == only and seen["list"] == only and seen["count"] == 1
        assert seen["knn"] == only and seen.get("keyword", only) == only
        assert set(opened.get([committed.id, pending.id])) == {committed.id, pending.id}
        assert _hit_ids(opened.knn(vectors[0], 5, ALL)) == {committed.id, pending.id}

    # -- knn -------------------------------------------------------------------------------------
    def test_knn_order_and_similarity(self, opened: Store) -> None:
        """Troubleshooting: ``knn`` returns (id, COSINE SIMILARITY) pairs, most similar first. If values
        are off, you probably return a distance (convert: cosine distance d → 1 - d; L2 distance on unit
        vectors d → 1 - d²/2) or sort ascending."""
        items = [memory(i) for i in range(60)]
        vectors = self.add(opened, items, seed=11)
        query = unit_vectors(1, self.dimensions, 12)[0]
        hits = opened.knn(query, 10, SEARCH)
        sims = vectors @ query
        expected = np.argsort(-sims, kind="stable")[:10]
        assert [i for i, _ in hits] == [items[j].id for j in expected]
        np.testing.assert_allclose([s for _, s in hits], sims[expected], atol=1e-4)
        assert all(isinstance(i, str) and isinstance(s, float) for i, s in hits)
        exact = opened.knn(vectors[5], 1, SEARCH)
        assert exact[0][0] == items[5].id and abs(exact[0][1] - 1.0) < 1e-4

    def test_knn_filters_before_top_k_tombstones(self, opened: Store) -> None:
        """Troubleshooting: filters must apply BEFORE the top-k. With 50 tombstoned memories right next
        to the query and 3 live ones far away, ``k=3`` must return the 3 live ones. Getting fewer means
        the store takes the top-k first and filters afterwards (sqlite-vec: a JOIN/WHERE on another
        table filters after the KNN; put the flag in a vec0 metadata column or use ``rowid IN (…)``)."""
        query = unit_vectors(1, self.dimensions, 21)[0]
        dead = [memory(i, deleted_at=BASE_TIME) for i in range(50)]
        live = [memory(100 + i) for i in range(3)]
        self.add(opened, dead, vectors=np.stack([near(query, 100 + i) for i in range(50)]))
        far = unit_vectors(3, self.dimensions, 22)
        far = np.stack([v if float(v @ query) < 0.5 else -v for v in far])
        self.add(opened, live, vectors=far)
        hits = opened.knn(query, 3, SEARCH)
        assert sorted(i for i, _ in hits) == sorted(m.id for m in live)
        with_dead = opened.knn(query, 3, MemoryFilter(include_deleted=True))
        assert {i for i, _ in with_dead} <= {m.id for m in dead}

    def test_knn_include_superseded(self, opened: Store) -> None:
        """Troubleshooting: ``include_superseded=True`` (the search default) keeps superseded versions
        matchable; ``False`` excludes every memory whose ``superseded_by`` is set, before the top-k."""
        query = unit_vectors(1, self.dimensions, 31)[0]
        old = [memory(i, superseded_by="11111111-2222-3333-4444-555555555555") for i in range(20)]
        heads = [memory(50 + i) for i in range(2)]
        self.add(opened, old, vectors=np.stack([near(query, 200 + i) for i in range(20)]))
        self.add(opened, heads, vectors=np.stack([near(-query, 300 + i) for i in range(2)]))
        only_heads = opened.knn(query, 2, MemoryFilter(include_superseded=False))
        assert sorted(i for i, _ in only_heads) == sorted(m.id for m in heads)
        everything = opened.knn(query, 2, MemoryFilter(include_superseded=True))
        assert {i for i, _ in everything} <= {m.id for m in old}

    def test_knn_namespace_isolation(self, opened: Store) -> None:
        """Troubleshooting: ``namespace="x"`` returns only memories of namespace x (before the top-k);
        ``namespace=None`` means all namespaces; an unknown namespace returns nothing."""
        query = unit_vectors(1, self.dimensions, 41)[0]
        a = [memory(i, namespace="alpha") for i in range(10)]
        b = [memory(20 + i, namespace="beta") for i in range(2)]
        self.add(opened, a, vectors=np.stack([near(query, 400 + i) for i in range(10)]))
        self.add(opened, b, vectors=np.stack([near(-query, 500 + i) for i in range(2)]))
        in_b = opened.knn(query, 2, MemoryFilter(namespace="beta"))
        assert sorted(i for i, _ in in_b) == sorted(m.id for m in b)
        in_a = opened.knn(query, 20, MemoryFilter(namespace="alpha"))
        assert {i for i, _ in in_a} == {m.id for m in a}
        assert len(opened.knn(query, 50, MemoryFilter(namespace=None))) == 12
        assert opened.knn(query, 5, MemoryFilter(namespace="no-such-namespace")) == []
        assert opened.knn(query, 5, SEARCH) == []  # nothing in "default"

    def test_knn_ids_filter(self, opened: Store) -> None:
        """Troubleshooting: ``ids`` restricts the search to those memories (before the top-k), combined
        with the other fields of the filter; an empty set matches nothing."""
        query = unit_vectors(1, self.dimensions, 51)[0]
        items = [memory(i) for i in range(30)]
        vectors = np.stack([near(query, 600 + i, noise=0.02 * (i + 1)) for i in range(30)])
        self.add(opened, items, vectors=vectors)
        chosen = {items[25].id, items[27].id, items[29].id}
        hits = opened.knn(query, 2, MemoryFilter(ids=frozenset(chosen)))
        sims = {items[j].id: float(vectors[j] @ query) for j in (25, 27, 29)}
        best_two = sorted(sims, key=lambda i: -sims[i])[:2]
        assert [i for i, _ in hits] == best_two
        assert opened.knn(query, 5, MemoryFilter(ids=frozenset())) == []
        opened.update_fields(items[25].id, {"deleted_at": BASE_TIME})
        hits = opened.knn(query, 5, MemoryFilter(ids=frozenset(chosen)))
        assert {i for i, _ in hits} == chosen - {items[25].id}

    def test_knn_k_larger_than_rows(self, opened: Store) -> None:
        """Troubleshooting: asking for more neighbours than exist returns all matching memories (no
        error, no padding); ``k`` up to 4096 (the engine's maximum) must be accepted."""
        items = [memory(i) for i in range(5)]
        vectors = self.add(opened, items)
        assert len(opened.knn(vectors[0], 100, SEARCH)) == 5
        assert len(opened.knn(vectors[0], 4096, SEARCH)) == 5
        hits = opened.knn(vectors[0], 4096, SEARCH)
        assert len({i for i, _ in hits}) == 5
        assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)

    # -- keyword search --------------------------------------------------------------------------
    def test_keyword_exact_term_first(self, opened: Store) -> None:
        """Troubleshooting: ``keyword_search`` returns (id, score) with HIGHER = better, best first. With
        SQLite FTS5, ``bm25()`` is lower-is-better: negate it. A memory containing the rare query term
        must outrank memories that don't contain it."""
        self._keyword(opened)
        docs = [
            "The deploy pipeline runs on Tuesdays",
            "Our mascot is a capybara named Lars",
            "Tuesdays are for planning and coffee",
            "Coffee machine is on the second floor",
        ]
        items = [memory(i, content=text) for i, text in enumerate(docs)]
        self.add(opened, items)
        hits = opened.keyword_search("capybara", 10, SEARCH)
        assert hits and hits[0][0] == items[1].id
        assert all(isinstance(i, str) and isinstance(s, float) for i, s in hits)
        hits = opened.keyword_search("what happens on tuesdays with the deploy?", 10, SEARCH)
        assert hits[0][0] == items[0].id
        scores = [s for _, s in hits]
        assert scores == sorted(scores, reverse=True)
        assert opened.keyword_search("capybara", 10, MemoryFilter(namespace="elsewhere")) == []
        assert len(opened.keyword_search("tuesdays coffee", 1, SEARCH)) == 1

    def test_keyword_query_syntax_never_raises(self, opened: Store) -> None:
        """Troubleshooting: user text must never reach the query parser raw. With FTS5, ``"``, ``AND``,
        ``-``, ``*``, ``(``, ``column:`` are syntax: extract words and quote each one (``"word"``), and
        return [] when no word is left. Any exception here is a crash in search_memories."""
        self._keyword(opened)
        self.add(opened, [memory(1, content="zebra and giraffe AND friends, near (the) river: ok")])
        for query in FTS_HOSTILE_QUERIES:
            hits = opened.keyword_search(query, 5, SEARCH)
            assert isinstance(hits, list), query
        assert opened.keyword_search("-zebra +giraffe", 5, SEARCH)

    def test_keyword_filters(self, opened: Store) -> None:
        """Troubleshooting: keyword search applies the same filter as ``knn``, before its top-k:
        tombstones excluded unless ``include_deleted``, superseded excluded when ``include_superseded``
        is false, namespace isolation, ``ids`` restriction."""
        self._keyword(opened)
        dead = [memory(i, content=f"platypus platypus platypus {i}", deleted_at=BASE_TIME) for i in range(20)]
        old = memory(30, content="platypus once", superseded_by="11111111-2222-3333-4444-555555555555")
        live = memory(31, content="a platypus lives here, among many other words")
        other_ns = memory(32, content="platypus platypus", namespace="elsewhere")
        self.add(opened, [*dead, old, live, other_ns])
        ids = _hit_ids
        assert ids(opened.keyword_search("platypus", 2, SEARCH)) == {old.id, live.id}
        assert ids(opened.keyword_search("platypus", 2, MemoryFilter(include_superseded=False))) == {live.id}
        assert ids(opened.keyword_search("platypus", 5, MemoryFilter(namespace="elsewhere"))) == {other_ns.id}
        assert len(opened.keyword_search("platypus", 50, MemoryFilter(include_deleted=True))) == 22
        assert len(opened.keyword_search("platypus", 50, ALL)) == 23
        only = MemoryFilter(ids=frozenset({live.id, dead[0].id}))
        assert ids(opened.keyword_search("platypus", 5, only)) == {live.id}
        assert opened.keyword_search("platypus", 5, MemoryFilter(ids=frozenset())) == []
        assert opened.keyword_search("nonexistentword", 5, ALL) == []

    # -- list / count / iter_all -----------------------------------------------------------------
    def test_list_order(self, opened: Store) -> None:
        """Troubleshooting: ``list`` orders newest first by (created_at DESC, id DESC). If equal
        timestamps come back in insertion order, add ``id DESC`` as the tie-breaker; if timestamps sort
        wrongly, they are stored as text of varying width or in local time."""
        same = BASE_TIME + timedelta(hours=1)
        items = [memory(i) for i in range(5)] + [
            memory(10 + i, created_at=same, updated_at=same) for i in range(4)
        ]
        items.append(memory(11, created_at=BASE_TIME - timedelta(days=400)))
        self.add(opened, items)
        got = opened.list(SEARCH, 100)
        expected = sorted(items, key=lambda m: (m.created_at, m.id), reverse=True)
        assert [m.id for m in got] == [m.id for m in expected]
        assert got == expected
        assert [m.id for m in opened.list(SEARCH, 3)] == [m.id for m in expected[:3]]

    def test_list_keyset_paging(self, opened: Store) -> None:
        """Troubleshooting: ``after=(created_at, id)`` of the last row of a page must start the next page
        right after it: rows with ``(created_at, id) < after`` only. Pages must neither repeat nor skip
        rows, also when many rows share one created_at (compare the pair, not created_at alone)."""
        items = []
        for i in range(27):
            stamp = BASE_TIME + timedelta(seconds=i // 4)  # groups of 4 share a timestamp
            items.append(memory(i, created_at=stamp, updated_at=stamp))
        self.add(opened, items)
        seen: list[str] = []
        after: tuple[datetime, str] | None = None
        for _ in range(100):
            page = opened.list(SEARCH, 5, after)
            if not page:
                break
            assert len(page) <= 5
            seen.extend(m.id for m in page)
            after = (page[-1].created_at, page[-1].id)
        expected = sorted(items, key=lambda m: (m.created_at, m.id), reverse=True)
        assert seen == [m.id for m in expected]

    def test_list_filters(self, opened: Store) -> None:
        """Troubleshooting: ``list`` applies the filter like ``knn``: the engine lists with
        ``include_superseded=False`` (current heads only) and never shows tombstones."""
        live = memory(1)
        dead = memory(2, deleted_at=BASE_TIME)
        old = memory(3, superseded_by=live.id)
        far = memory(4, namespace="elsewhere")
        self.add(opened, [live, dead, old, far])
        ids = _row_ids
        assert ids(opened.list(MemoryFilter(include_superseded=False), 10)) == {live.id}
        assert ids(opened.list(SEARCH, 10)) == {live.id, old.id}
        assert ids(opened.list(MemoryFilter(namespace=None, include_deleted=True), 10)) == {
            live.id,
            dead.id,
            old.id,
            far.id,
        }
        assert ids(opened.list(MemoryFilter(namespace="elsewhere"), 10)) == {far.id}
        assert ids(opened.list(MemoryFilter(ids=frozenset({dead.id, old.id})), 10)) == {old.id}

    def test_count(self, opened: Store) -> None:
        """Troubleshooting: ``count(where)`` must agree with ``list(where, ∞)`` for every filter."""
        items = [
            memory(1),
            memory(2),
            memory(3, deleted_at=BASE_TIME),
            memory(4, superseded_by="11111111-2222-3333-4444-555555555555"),
            memory(5, namespace="elsewhere"),
            memory(6, namespace="elsewhere", deleted_at=BASE_TIME),
        ]
        self.add(opened, items)
        filters = [
            SEARCH,
            ALL,
            MemoryFilter(include_superseded=False),
            MemoryFilter(namespace=None),
            MemoryFilter(namespace="elsewhere", include_deleted=True),
            MemoryFilter(namespace="nowhere"),
            MemoryFilter(ids=frozenset({items[0].id, items[2].id, items[4].id})),
            MemoryFilter(namespace=None, ids=frozenset({items[0].id, items[2].id, items[4].id})),
        ]
        expected = [3, 6, 2, 4, 2, 0, 1, 2]
        assert [opened.count(f) for f in filters] == expected
        assert [len(opened.list(f, 1000)) for f in filters] == expected

    def test_iter_all(self, opened: Store) -> None:
        """Troubleshooting: ``iter_all`` yields EVERY memory exactly once — tombstones, superseded
        versions and all namespaces included — even past any internal batch size."""
        items = [
            memory(i, namespace="a" if i % 3 else "b", deleted_at=BASE_TIME if i % 7 == 0 else None)
            for i in range(1234)
        ]
        self.add(opened, items)
        got = list(opened.iter_all())
        assert len(got) == len(items)
        assert {m.id: m for m in got} == {m.id: m for m in items}

    # -- passages (several vectors per memory) ---------------------------------------------------
    def add_passages(
        self, store: Store, memories: Sequence[Memory], vectors: np.ndarray, owners: Sequence[int]
    ) -> None:
        store.insert(list(memories), np.asarray(vectors, dtype=np.float32), list(owners))

    def _far_from(self, query: np.ndarray, n: int, seed: int) -> np.ndarray:
        """``n`` unit vectors with cosine similarity < 0.3 to ``query``."""
        out = []
        for v in unit_vectors(4 * n + 8, self.dimensions, seed):
            if float(v @ query) < 0.3:
                out.append(v)
            if len(out) == n:
                break
        return np.stack(out)

    def test_passages_best_vector_wins(self, opened: Store) -> None:
        """Troubleshooting: with ``owners``, row i of ``vectors`` belongs to ``memories[owners[i]]``
        (owners need not be sorted). A memory's similarity is the MAX over its vectors: a memory whose
        second passage matches the query must be found with that passage's similarity. If the store
        keys vectors by memory row, only one vector per memory survives (v1 sqlite-vec schema)."""
        query = unit_vectors(1, self.dimensions, 61)[0]
        far = self._far_from(query, 4, 62)
        close = near(query, 63, noise=0.1)
        middle = near(query, 64, noise=0.6)
        a, b = memory(1, content="a passage holder"), memory(2, content="a single vector")
        # rows: a's far vector, b's middle vector, a's close vector, a's other far vector
        self.add_passages(opened, [a, b], np.stack([far[0], middle, close, far[1]]), [0, 1, 0, 0])
        hits = opened.knn(query, 2, SEARCH)
        assert [i for i, _ in hits] == [a.id, b.id]
        assert abs(hits[0][1] - float(close @ query)) < 1e-4
        assert abs(hits[1][1] - float(middle @ query)) < 1e-4
        assert opened.count(ALL) == 2 and set(opened.get([a.id, b.id])) == {a.id, b.id}
        # any of a's vectors finds a, with similarity 1
        for v in (far[0], far[1], close):
            top = opened.knn(v, 1, SEARCH)
            assert top[0][0] == a.id and abs(top[0][1] - 1.0) < 1e-4

    def test_passages_k_distinct_memories(self, opened: Store) -> None:
        """Troubleshooting: ``knn`` returns DISTINCT memories and still returns ``k`` of them when
        one memory owns many near-identical vectors that crowd the top rows. A store whose index returns
        vector rows must ask for more rows than ``k``, keep each memory's best, and ask again (more
        rows) until it has ``k`` memories or the matching rows run out."""
        query = unit_vectors(1, self.dimensions, 71)[0]
        crowd = memory(0, content="crowding memory")
        others = [memory(1 + i) for i in range(30)]
        crowd_vectors = np.stack([near(query, 700 + j, noise=0.01) for j in range(40)])
        other_vectors = np.stack([near(query, 800 + i, noise=0.3 + 0.02 * i) for i in range(30)])
        vectors = np.concatenate([crowd_vectors, other_vectors])
        owners = [0] * 40 + list(range(1, 31))
        self.add_passages(opened, [crowd, *others], vectors, owners)
        for k in (1, 5, 12, 31, 50):
            hits = opened.knn(query, k, SEARCH)
            ids = [i for i, _ in hits]
            assert len(ids) == len(set(ids)) == min(k, 31), k
            assert ids[0] == crowd.id
            sims = [s for _, s in hits]
            assert sims == sorted(sims, reverse=True)
        expected_sims = other_vectors @ query
        order = np.argsort(-expected_sims, kind="stable")[:4]
        hits = opened.knn(query, 5, SEARCH)
        assert [i for i, _ in hits[1:]] == [others[j].id for j in order]
        np.testing.assert_allclose([s for _, s in hits[1:]], expected_sims[order], atol=1e-4)
        np.testing.assert_allclose(hits[0][1], float((crowd_vectors @ query).max()), atol=1e-4)

    def test_passages_update_fields_moves_every_vector(self, opened: Store) -> None:
        """Troubleshooting: a tombstone, a supersession or a namespace move set by ``update_fields``
        must apply to EVERY vector of the memory. If only the first vector's copy of the flag (e.g. a
        sqlite-vec metadata column) is updated, the memory still turns up through its other passages."""
        query = unit_vectors(1, self.dimensions, 81)[0]
        m, other = memory(1), memory(2)
        vectors = np.stack([near(query, 810 + j, noise=0.05 * (j + 1)) for j in range(5)] + [-query])
        self.add_passages(opened, [m, other], vectors, [0, 0, 0, 0, 0, 1])
        opened.update_fields(m.id, {"deleted_at": BASE_TIME})
        for v in vectors[:5]:
            assert [i for i, _ in opened.knn(v, 5, SEARCH)] == [other.id]
        assert m.id in _hit_ids(opened.knn(query, 5, MemoryFilter(include_deleted=True)))
        opened.update_fields(m.id, {"deleted_at": None, "superseded_by": other.id})
        assert _hit_ids(opened.knn(vectors[4], 5, MemoryFilter(include_superseded=False))) == {other.id}
        assert opened.knn(vectors[4], 1, SEARCH)[0][0] == m.id
        opened.update_fields(m.id, {"superseded_by": None, "namespace": "moved"})
        for v in vectors[:5]:
            assert [i for i, _ in opened.knn(v, 5, SEARCH)] == [other.id]
            assert [i for i, _ in opened.knn(v, 5, MemoryFilter(namespace="moved"))] == [m.id]

    def test_passages_purge_removes_every_vector(self, opened: Store) -> None:
        """Troubleshooting: ``purge`` removes the row and EVERY vector of the memory (and its keyword
        entries); returns how many memories were removed (unknown and repeated ids count once or not at
        all). Leftover vectors show up as unknown ids in knn or as fewer than k results."""
        query = unit_vectors(1, self.dimensions, 91)[0]
        gone, kept = memory(1, content="doomed heron"), memory(2, content="kept heron")
        vectors = np.stack([near(query, 910 + j, noise=0.05) for j in range(6)] + [-query])
        self.add_passages(opened, [gone, kept], vectors, [0, 0, 0, 0, 0, 0, 1])
        missing = "99999999-9999-9999-9999-999999999999"
        assert opened.purge([gone.id, missing, gone.id]) == 1
        assert opened.purge([gone.id]) == 0
        assert opened.purge([]) == 0
        assert opened.get([gone.id]) == {}
        for v in vectors[:6]:
            assert [i for i, _ in opened.knn(v, 10, ALL)] == [kept.id]
        assert opened.count(ALL) == 1
        assert _row_ids(opened.list(ALL, 10)) == {kept.id}
        if opened.capabilities.keyword_search:
            assert _hit_ids(opened.keyword_search("heron", 10, ALL)) == {kept.id}
            assert opened.keyword_search("doomed", 10, ALL) == []

    def test_vectors_read_back_in_insert_order(self, opened: Store) -> None:
        """Troubleshooting (stores declaring ``capabilities.read_vectors``): ``vectors(ids)`` returns,
        for each known id, an (n, dimensions) float32 array of exactly the rows ``insert`` was given
        for it, in the order given (interleaved owners included), bit for bit; unknown and repeated
        ids are harmless; a purged memory has none. An export with vectors relies on this: an import
        reuses them as the memory's whole text and passages, in that order."""
        if not opened.capabilities.read_vectors:
            pytest.skip("the store does not read its vectors back (capabilities.read_vectors)")
        reader = getattr(opened, "vectors", None)
        assert callable(reader), "capabilities.read_vectors is true but the store has no vectors() method"
        a, b, c = memory(1, content="alpha"), memory(2, content="beta"), memory(3, content="gamma")
        vectors = unit_vectors(6, self.dimensions, 131)
        owners = [1, 0, 1, 2, 0, 1]
        self.add_passages(opened, [a, b, c], vectors, owners)
        missing = "99999999-9999-9999-9999-999999999999"
        got = reader([c.id, a.id, missing, a.id, b.id])
        assert set(got) == {a.id, b.id, c.id}
        for index, item in enumerate((a, b, c)):
            rows = [row for row, owner in enumerate(owners) if owner == index]
            array = np.asarray(got[item.id])
            assert array.dtype == np.float32
            assert array.shape == (len(rows), self.dimensions)
            assert np.array_equal(array, vectors[rows])
        assert reader([]) == {}
        opened.purge([b.id])
        assert set(reader([a.id, b.id])) == {a.id}

    def test_insert_owners_validated(self, opened: Store) -> None:
        """Troubleshooting: ``insert`` must refuse, with ValueError and without storing anything,
        ``owners`` of the wrong length, owners that do not index ``memories``, a memory without any
        vector, and vectors of the wrong dimension."""
        a, b = memory(1), memory(2)
        v = unit_vectors(3, self.dimensions, 95)
        bad_calls: list[tuple[np.ndarray, list[int] | None]] = [
            (v, [0, 1]),  # one owner short
            (v, [0, 1, 2]),  # 2 is not a memory
            (v, [0, 0, 0]),  # b has no vector
            (v, [0, 1, -1]),  # negative owner
            (v, None),  # three vectors for two memories
            (unit_vectors(2, self.dimensions + 1, 96), [0, 1]),  # wrong dimension
        ]
        for vectors, owners in bad_calls:
            with pytest.raises(ValueError):
                opened.insert([a, b], vectors, owners)
        assert opened.count(ALL) == 0 and opened.get([a.id, b.id]) == {}
        opened.insert([a, b], v, [1, 0, 1])
        assert opened.knn(v[1], 1, SEARCH)[0][0] == a.id
        assert opened.knn(v[2], 1, SEARCH)[0][0] == b.id

    # -- filter fields ---------------------------------------------------------------------------
    def _filter_corpus(self, store: Store) -> tuple[list[Memory], np.ndarray]:
        kinds = list(MemoryType)
        pool = ["red", "green", "blue", "ünï code", "with space", "emoji 🙂"]
        items = []
        for i in range(48):
            metadata: dict[str, Any] = {"n": i % 3, "s": str(i % 3), "flag": i % 2 == 0, "f": (i % 3) * 1.0}
            if i % 5 == 0:
                metadata["nullable"] = None
            if i % 6 == 0:
                metadata['we"ird.key $[0]'] = "x"
            items.append(
                memory(
                    i,
                    content=f"kiwi note {i}",
                    type=kinds[i % 4],
                    tags=tuple(tag for j, tag in enumerate(pool) if (i >> j) & 1),
                    metadata=metadata,
                    namespace="other" if i % 7 == 6 else "default",
                    deleted_at=BASE_TIME if i % 11 == 3 else None,
                    superseded_by="11111111-2222-3333-4444-555555555555" if i % 13 == 5 else None,
                    occurred_at=BASE_TIME - timedelta(days=48 - i),  # happened long before it was stored
                    thread=None if i % 4 == 3 else f"thread {i % 4}",
                )
            )
        owners = [i for i in range(48) for _ in range(1 + i % 3)]
        vectors = unit_vectors(len(owners), self.dimensions, 97)
        self.add_passages(store, items, vectors, owners)
        return items, vectors

    def _check_filter(
        self, store: Store, items: Sequence[Memory], where: MemoryFilter, label: str, word: str = "kiwi"
    ) -> set[str]:
        """count, list, knn and keyword_search (for ``word``) all give the reference set; returns it."""
        expected = {m.id for m in items if where.matches(m)}
        query = unit_vectors(1, self.dimensions, 98)[0]
        assert store.count(where) == len(expected), label
        assert _row_ids(store.list(where, 1000)) == expected, label
        assert _hit_ids(store.knn(query, 200, where)) == expected, label
        if store.capabilities.keyword_search:
            assert _hit_ids(store.keyword_search(word, 200, where)) == expected, label
        return expected

    def test_filter_fields_alone_and_combined(self, opened: Store) -> None:
        """Troubleshooting: every MemoryFilter field (types, tags_any, tags_all, created_after,
        created_before, occurred_after, occurred_before, threads, metadata, ids; with namespace and
        the lifecycle flags) must give the same set in
        ``knn``, ``keyword_search``, ``list`` and ``count`` as ``MemoryFilter.matches`` (the reference
        semantics). Usual culprits: tags matched as substrings of a JSON text (use exact elements),
        ``tags_all`` of an empty set (matches everything), ``types`` stored as text vs codes, metadata
        compared as text (``1`` must not match ``"1"``), bool treated as int."""
        items, _ = self._filter_corpus(opened)
        t10 = BASE_TIME + timedelta(seconds=10)
        t30 = BASE_TIME + timedelta(seconds=30)
        some_ids = frozenset(m.id for m in items[::5])
        fields: dict[str, dict[str, Any]] = {
            "one type": {"types": frozenset({MemoryType.EPISODIC})},
            "two types": {"types": frozenset({MemoryType.WORKING, MemoryType.PROCEDURAL})},
            "no types": {"types": frozenset()},
            "tags_any": {"tags_any": frozenset({"red"})},
            "tags_any unicode": {"tags_any": frozenset({"ünï code", "with space"})},
            "tags_any unknown": {"tags_any": frozenset({"nope", "with"})},
            "tags_any empty": {"tags_any": frozenset()},
            "tags_all": {"tags_all": frozenset({"red", "green"})},
            "tags_all three": {"tags_all": frozenset({"green", "emoji 🙂", "with space"})},
            "tags_all empty": {"tags_all": frozenset()},
            "after": {"created_after": t10},
            "before": {"created_before": t10},
            "window": {"created_after": t10, "created_before": t30},
            "occurred after": {"occurred_after": BASE_TIME - timedelta(days=20)},
            "occurred before": {"occurred_before": BASE_TIME - timedelta(days=20)},
            "occurred window": {
                "occurred_after": BASE_TIME - timedelta(days=30),
                "occurred_before": BASE_TIME - timedelta(days=10),
            },
            "one thread": {"threads": frozenset({"thread 1"})},
            "two threads": {"threads": frozenset({"thread 0", "thread 2", "no such thread"})},
            "no threads": {"threads": frozenset()},
            "metadata int": {"metadata": (("n", 1),)},
            "metadata str": {"metadata": (("s", "1"),)},
            "metadata float vs int": {"metadata": (("f", 2),)},
            "metadata bool": {"metadata": (("flag", True),)},
            "metadata two keys": {"metadata": (("n", 1), ("flag", False))},
            "metadata null": {"metadata": (("nullable", None),)},
            "metadata quoted key": {"metadata": (('we"ird.key $[0]', "x"),)},
            "metadata missing key": {"metadata": (("absent", None),)},
            "ids": {"ids": some_ids},
            "combined": {
                "types": frozenset({MemoryType.WORKING, MemoryType.SEMANTIC}),
                "tags_any": frozenset({"red", "blue"}),
                "created_after": BASE_TIME + timedelta(seconds=4),
                "metadata": (("flag", True),),
                "threads": frozenset({"thread 0", "thread 1"}),
            },
            "combined all": {
                "tags_all": frozenset({"green"}),
                "created_before": BASE_TIME + timedelta(seconds=40),
                "metadata": (("s", "0"),),
                "ids": some_ids | frozenset(m.id for m in items[::3]),
            },
        }
        views: dict[str, dict[str, Any]] = {
            "search": {},
            "heads": {"include_superseded": False},
            "everything": {"namespace": None, "include_deleted": True},
        }
        for label, values in fields.items():
            for view, flags in views.items():
                self._check_filter(opened, items, MemoryFilter(**values, **flags), f"{label} / {view}")

    def test_filters_apply_before_top_k(self, opened: Store) -> None:
        """Troubleshooting: EVERY filter field applies before the top-k. With 200 non-matching memories
        closer to the query (and better keyword matches, and newer) than 5 matching ones, ``k=5`` must
        return exactly the 5 matching ones from knn, keyword_search and list. With sqlite-vec, a JOIN or
        WHERE on the rows table filters AFTER the KNN: put the field in a vec0 metadata column, or
        compute the matching rows first and pass ``rowid IN (…)`` or scan them exactly."""
        query = unit_vectors(1, self.dimensions, 101)[0]
        old = BASE_TIME - timedelta(days=1)
        wanted = [
            memory(
                i,
                content="quokka " + " ".join(f"filler{j}" for j in range(30)),
                created_at=old + timedelta(seconds=i),
                type=MemoryType.PROCEDURAL,
                tags=("wanted one",),
                metadata={"k": "yes"},
                occurred_at=old - timedelta(days=365),
                thread="wanted",
            )
            for i in range(5)
        ]
        crowd = [
            memory(
                100 + i,
                content="quokka quokka",
                type=MemoryType.SEMANTIC,
                tags=("other",),
                metadata={"k": "no"},
            )
            for i in range(200)
        ]
        self.add(opened, wanted, vectors=self._far_from(query, 5, 102))
        self.add(opened, crowd, vectors=np.stack([near(query, 1000 + i) for i in range(200)]))
        expected = {m.id for m in wanted}
        filters = {
            "types": MemoryFilter(types=frozenset({MemoryType.PROCEDURAL})),
            "tags_any": MemoryFilter(tags_any=frozenset({"wanted one"})),
            "tags_all": MemoryFilter(tags_all=frozenset({"wanted one"})),
            "metadata": MemoryFilter(metadata=(("k", "yes"),)),
            "created_before": MemoryFilter(created_before=BASE_TIME),
            "created window": MemoryFilter(created_after=old, created_before=old + timedelta(hours=1)),
            "ids": MemoryFilter(ids=frozenset(expected)),
            "occurred_before": MemoryFilter(occurred_before=old),
            "threads": MemoryFilter(threads=frozenset({"wanted"})),
        }
        for label, where in filters.items():
            assert _hit_ids(opened.knn(query, 5, where)) == expected, label
            assert _row_ids(opened.list(where, 5)) == expected, label
            assert opened.count(where) == 5, label
            if opened.capabilities.keyword_search:
                assert _hit_ids(opened.keyword_search("quokka", 5, where)) == expected, label
        crowd_only = MemoryFilter(created_after=BASE_TIME - timedelta(seconds=1))
        assert _hit_ids(opened.knn(-query, 300, crowd_only)) == {m.id for m in crowd}

    def test_thread_neighbours(self, opened: Store) -> None:
        """Troubleshooting: ``thread_neighbours`` orders a thread by ``(occurred_at, created_at, id)``
        (a conversation imported later keeps the order it was held in; memories of one moment keep
        the order they were stored in), counts only memories matching ``where`` (a deleted turn, a
        superseded version or another namespace is skipped over, not returned), and leaves out ids
        without a thread or outside ``where``. SQL: ``LAG``/``LEAD`` over ``PARTITION BY thread``."""
        said = BASE_TIME - timedelta(days=30)
        items = [
            memory(
                9, content="turn 3", thread="chat", occurred_at=said + timedelta(minutes=2)
            ),  # stored last
            memory(1, content="turn 1", thread="chat", occurred_at=said),  # same moment: stored first
            memory(2, content="turn 2", thread="chat", occurred_at=said),
            memory(3, content="deleted turn", thread="chat", occurred_at=said, deleted_at=BASE_TIME),
            memory(4, content="elsewhere", thread="chat", occurred_at=said, namespace="other"),
            memory(6, content="turn 4", thread="chat", occurred_at=said + timedelta(minutes=3)),
            memory(7, content="alone", thread="other chat"),
            memory(8, content="no thread"),
        ]
        self.add(opened, items)
        turn3, turn1, turn2, _deleted, elsewhere, turn4, alone, _unthreaded = (m.id for m in items)
        got = opened.thread_neighbours([m.id for m in items] + ["no-such-id"], MemoryFilter())
        assert got == {
            turn1: (None, turn2),
            turn2: (turn1, turn3),
            turn3: (turn2, turn4),
            turn4: (turn3, None),
            alone: (None, None),
        }
        both = MemoryFilter(namespace=None, namespaces=frozenset({"default", "other"}))
        assert opened.thread_neighbours([turn2, elsewhere], both) == {
            turn2: (turn1, elsewhere),  # same moment, stored after turn 2
            elsewhere: (turn2, turn3),
        }
        assert opened.thread_neighbours([], MemoryFilter()) == {}
        # Against the reference semantics, under filters: the filter corpus has four threads.
        corpus, _ = self._filter_corpus(opened)
        for where in (
            MemoryFilter(namespace="default"),
            MemoryFilter(namespace=None, include_superseded=False),
            MemoryFilter(namespace=None, types=frozenset({MemoryType.EPISODIC, MemoryType.SEMANTIC})),
        ):
            expected = _reference_neighbours(corpus, where)
            assert opened.thread_neighbours([m.id for m in corpus], where) == expected, where

    def test_metadata_filter_json_equality(self, opened: Store) -> None:
        """Troubleshooting: metadata filters use JSON equality on top-level keys: ``1`` matches 1 and
        1.0 but not ``"1"`` nor ``true``; ``True`` matches only true; ``None`` matches a JSON null, not a
        missing key; nested values never equal a scalar. In SQLite check ``json_type`` (or json_each's
        ``type``) besides the value: ``json_extract`` turns true into 1 and null/missing into NULL."""
        values: list[Any] = [1, 1.0, "1", True, False, 0, None, [1], {"v": 1}, "true", 2.5]
        items = [memory(i, metadata={"v": value}) for i, value in enumerate(values)]
        items.append(memory(len(values), metadata={"other": 1}))
        self.add(opened, items)
        by_value: list[tuple[Any, set[int]]] = [
            (1, {0, 1}),
            (1.0, {0, 1}),
            ("1", {2}),
            (True, {3}),
            (False, {4}),
            (0, {5}),
            (None, {6}),
            ("true", {9}),
            (2.5, {10}),
            ("missing", set()),
        ]
        query = unit_vectors(1, self.dimensions, 111)[0]
        for value, positions in by_value:
            where = MemoryFilter(metadata=(("v", value),))
            expected = {items[p].id for p in positions}
            assert {m.id for m in items if where.matches(m)} == expected, value  # the reference agrees
            assert _row_ids(opened.list(where, 100)) == expected, value
            assert _hit_ids(opened.knn(query, 100, where)) == expected, value
            assert opened.count(where) == len(expected), value

    def test_created_boundaries(self, opened: Store) -> None:
        """Troubleshooting: ``created_after`` is inclusive and ``created_before`` exclusive, to the
        microsecond, whatever timezone the bound is written in. Off-by-one here usually means
        datetimes compared as text, truncated to milliseconds, or compared in local time."""
        t0 = BASE_TIME + timedelta(hours=2)
        tick = timedelta(microseconds=1)
        before, at, after = (
            memory(i, created_at=t0 + d, updated_at=t0) for i, d in enumerate((-tick, 0 * tick, tick))
        )
        self.add(opened, [before, at, after])
        shifted = t0.astimezone(timezone(timedelta(hours=-7)))
        query = unit_vectors(1, self.dimensions, 121)[0]
        cases = [
            (MemoryFilter(created_after=t0), {at.id, after.id}),
            (MemoryFilter(created_after=shifted), {at.id, after.id}),
            (MemoryFilter(created_before=t0), {before.id}),
            (MemoryFilter(created_before=shifted), {before.id}),
            (MemoryFilter(created_after=t0, created_before=t0 + tick), {at.id}),
            (MemoryFilter(created_after=t0, created_before=t0), set()),
        ]
        for where, expected in cases:
            assert _row_ids(opened.list(where, 10)) == expected, where
            assert _hit_ids(opened.knn(query, 10, where)) == expected, where
            assert opened.count(where) == len(expected), where

    def test_tags_exact_unicode_and_updates(self, opened: Store) -> None:
        """Troubleshooting: tags match as whole, case-sensitive strings: unicode, spaces, quotes and
        JSON-looking text included; a word inside a tag is not the tag. Tag filters must follow
        ``update_fields(tags=…)`` (an index of tags kept beside the rows must be rewritten)."""
        tags = ("ünï code", "with space", "emoji 🙂", "CJK 記憶", 'quote "x"', '["json"]', "%_like")
        items = [memory(i, tags=(tag,)) for i, tag in enumerate(tags)]
        self.add(opened, items)
        for item, tag in zip(items, tags, strict=True):
            assert _row_ids(opened.list(MemoryFilter(tags_any=frozenset({tag})), 10)) == {item.id}, tag
            assert _row_ids(opened.list(MemoryFilter(tags_all=frozenset({tag})), 10)) == {item.id}, tag
        for wrong in ("with", "Ünï code", "space", "json", "%", "_like", "x"):
            assert opened.count(MemoryFilter(tags_any=frozenset({wrong}))) == 0, wrong
        opened.update_fields(items[0].id, {"tags": ("with space", "new tag")})
        both = MemoryFilter(tags_all=frozenset({"with space", "new tag"}))
        assert _row_ids(opened.list(both, 10)) == {items[0].id}
        assert opened.count(MemoryFilter(tags_any=frozenset({"ünï code"}))) == 0
        assert _row_ids(opened.list(MemoryFilter(tags_any=frozenset({"with space"})), 10)) == {
            items[0].id,
            items[1].id,
        }
        query = unit_vectors(1, self.dimensions, 131)[0]
        assert _hit_ids(opened.knn(query, 10, both)) == {items[0].id}

    # -- record_access / purge -------------------------------------------------------------------
    def test_record_access(self, opened: Store) -> None:
        """Troubleshooting: ``record_access(counts, when)`` ADDS ``counts[id]`` to ``access_count``
        (as an SQL increment ``access_count = access_count + ?``, never read-modify-write across
        processes), sets ``last_accessed = when``, ignores unknown ids (no error, no new row), and
        leaves every other field alone."""
        a, b, c = memory(1, access_count=7), memory(2), memory(3)
        self.add(opened, [a, b, c])
        t1, t2 = BASE_TIME + timedelta(days=1), BASE_TIME + timedelta(days=2, microseconds=3)
        missing = "99999999-9999-9999-9999-999999999999"
        opened.record_access({a.id: 2, missing: 5}, t1)
        opened.record_access({a.id: 3, b.id: 1}, t2)
        opened.record_access({}, t2)
        got = opened.get([a.id, b.id, c.id, missing])
        assert set(got) == {a.id, b.id, c.id}
        assert got[a.id] == a.model_copy(update={"access_count": 12, "last_accessed": t2})
        assert got[b.id] == b.model_copy(update={"access_count": 1, "last_accessed": t2})
        assert got[c.id] == c
        assert opened.count(ALL) == 3
        with opened.transaction():
            opened.record_access({c.id: 4}, t1)
        assert opened.get([c.id])[c.id].access_count == 4

    def test_purge_everywhere(self, opened: Store) -> None:
        """Troubleshooting: after ``purge`` a memory is gone from get, knn, keyword_search, list and
        count (with every filter, tombstones included), and the id can be inserted again. ``purge``
        returns the number of memories it removed."""
        items = [memory(i, content=f"pelican fact {i}", tags=("bird",)) for i in range(4)]
        vectors = self.add(opened, items)
        opened.update_fields(items[1].id, {"deleted_at": BASE_TIME})
        assert opened.purge([items[0].id, items[1].id]) == 2
        gone = {items[0].id, items[1].id}
        assert opened.get(list(gone)) == {}
        for where in (ALL, SEARCH, MemoryFilter(tags_any=frozenset({"bird"}), include_deleted=True)):
            assert not gone & _hit_ids(opened.knn(vectors[0], 10, where))
            assert not gone & _row_ids(opened.list(where, 10))
            assert opened.count(where) == 2
            if opened.capabilities.keyword_search:
                assert not gone & _hit_ids(opened.keyword_search("pelican", 10, where))
        self.add(opened, [items[0]], vectors=vectors[:1])
        assert opened.knn(vectors[0], 1, SEARCH)[0][0] == items[0].id

    def test_lifecycle_filters_pinned_and_predecessors(self, opened: Store) -> None:
        """Troubleshooting: ``pinned`` (True/False, None = either) and ``superseded_by_in`` (memories
        whose ``superseded_by`` is one of these ids) must filter in knn, list and count like every other
        field, before the top-k. The engine finds a chain's predecessors and expirable memories with them."""
        head = memory(10)
        old = memory(1, superseded_by=head.id)
        older = memory(0, superseded_by=old.id)
        pinned = memory(5, pinned=True)
        items = [older, old, head, pinned, *(memory(20 + i) for i in range(6))]
        vectors = self.add(opened, items)
        base = MemoryFilter(namespace=None, include_superseded=True)
        by_pred = MemoryFilter(namespace=None, superseded_by_in=frozenset({head.id, old.id}))
        assert _row_ids(opened.list(by_pred, 10)) == {old.id, older.id}
        assert _hit_ids(opened.knn(vectors[9], 2, by_pred)) == {old.id, older.id}
        assert opened.count(by_pred) == 2
        assert opened.list(MemoryFilter(namespace=None, superseded_by_in=frozenset()), 10) == []
        only_pinned = MemoryFilter(namespace=None, pinned=True)
        assert _row_ids(opened.list(only_pinned, 10)) == {pinned.id}
        assert _hit_ids(opened.knn(vectors[9], 3, only_pinned)) == {pinned.id}
        unpinned = MemoryFilter(namespace=None, pinned=False)
        assert opened.count(unpinned) == opened.count(base) - 1

    def test_namespaces_count_current_memories(self, opened: Store) -> None:
        """Troubleshooting: ``namespaces()`` maps every namespace that holds rows to its number of
        CURRENT memories (not superseded, not deleted); a namespace of only tombstones maps to 0."""
        assert opened.namespaces() == {}
        head = memory(3, namespace="work")
        items = [
            memory(1, namespace="work", superseded_by=head.id),
            head,
            memory(2, namespace="home"),
            memory(4, namespace="gone", deleted_at=BASE_TIME),
        ]
        self.add(opened, items)
        assert opened.namespaces() == {"work": 1, "home": 1, "gone": 0}

    # -- who may see what (the engine's Scope, rendered by the store) ------------------------------
    def _scope_corpus(self, store: Store) -> tuple[list[Memory], np.ndarray]:
        """48 memories of four owners, every privacy scope, three namespaces, some superseded or
        deleted, several vectors each."""
        owners = ["alice", "bob", "carol", "local"]
        scopes = list(PrivacyScope)
        namespaces = ["user", "atlas", "zephyr"]
        items = [
            memory(
                i,
                content=f"mango fact {i}",
                owner=owners[i % 4],
                privacy_scope=scopes[(i // 4) % 3],
                namespace=namespaces[(i // 12) % 3],
                deleted_at=BASE_TIME if i % 11 == 3 else None,
                superseded_by="11111111-2222-3333-4444-555555555555" if i % 13 == 5 else None,
            )
            for i in range(48)
        ]
        rows = [i for i in range(48) for _ in range(1 + i % 2)]
        vectors = unit_vectors(len(rows), self.dimensions, 91)
        self.add_passages(store, items, vectors, rows)
        return items, vectors

    def test_scope_filters_everywhere(self, opened: Store) -> None:
        """Troubleshooting: ``visible_to`` (own memories, public ones, team ones of teammates),
        ``owner`` and ``namespaces`` (any of) must give the same set in ``knn``, ``keyword_search``,
        ``list``, ``count`` and ``namespaces(where)`` as ``MemoryFilter.matches``, applied BEFORE the
        top-k. This is what keeps one user's private memories from another: a store that filters
        after its top-k, or ignores a field, leaks. Usual culprits: visibility applied in Python
        after KNN, ``privacy_scope`` compared with a different spelling, ``namespaces`` treated as
        one namespace, an empty teammates set rendered as "no condition"."""
        items, _ = self._scope_corpus(opened)
        cases: dict[str, dict[str, Any]] = {
            "alone": {"visible_to": Visibility("alice")},
            "with teammates": {"visible_to": Visibility("alice", frozenset({"bob"}))},
            "teammates, one namespace": {
                "visible_to": Visibility("carol", frozenset({"alice", "bob"})),
                "namespaces": frozenset({"atlas"}),
            },
            "stranger": {"visible_to": Visibility("mallory")},
            "owner": {"owner": "bob"},
            "owner and namespaces": {"owner": "local", "namespaces": frozenset({"user", "zephyr"})},
            "namespaces": {"namespaces": frozenset({"user", "atlas"})},
            "unknown namespaces": {"namespaces": frozenset({"nowhere"})},
            "no namespaces": {"namespaces": frozenset()},
        }
        views: dict[str, dict[str, Any]] = {
            "search": {"namespace": None},
            "heads": {"namespace": None, "include_superseded": False},
            "everything": {"namespace": None, "include_deleted": True},
        }
        for label, values in cases.items():
            for view, flags in views.items():
                where = MemoryFilter(**values, **flags)
                self._check_scope(opened, items, where, f"{label} / {view}")

    def _check_scope(self, store: Store, items: Sequence[Memory], where: MemoryFilter, label: str) -> None:
        expected = self._check_filter(store, items, where, label, word="mango")
        top = store.knn(unit_vectors(1, self.dimensions, 92)[0], 3, where)
        assert len(top) == min(3, len(expected)) and _hit_ids(top) <= expected, f"{label}: top-k"
        counted = store.namespaces(where)
        assert set(counted) == {m.namespace for m in items if where.matches(m)}, label
        for name, current in counted.items():
            assert current == sum(
                1 for m in items if where.matches(m) and m.namespace == name and m.is_current
            ), f"{label}: namespace {name}"

    def test_scope_visibility_follows_updates(self, opened: Store) -> None:
        """Troubleshooting: changing ``privacy_scope`` (or ``owner``) with ``update_fields`` must move
        the memory in or out of ``visible_to`` at once, in every method (a vector index or cache that
        keeps the old value leaks a memory made private)."""
        shared = memory(1, content="papaya shared", owner="alice", privacy_scope=PrivacyScope.PUBLIC)
        other = memory(2, content="papaya private", owner="alice")
        vectors = unit_vectors(2, self.dimensions, 93)
        self.add(opened, [shared, other], vectors)
        bob = MemoryFilter(namespace=None, visible_to=Visibility("bob"))
        assert _hit_ids(opened.knn(vectors[0], 5, bob)) == {shared.id}
        opened.update_fields(shared.id, {"privacy_scope": PrivacyScope.PRIVATE})
        assert opened.knn(vectors[0], 5, bob) == []
        assert opened.count(bob) == 0 and opened.list(bob, 5) == []
        if opened.capabilities.keyword_search:
            assert opened.keyword_search("papaya", 5, bob) == []
        opened.update_fields(other.id, {"privacy_scope": PrivacyScope.TEAM})
        team = MemoryFilter(namespace=None, visible_to=Visibility("bob", frozenset({"alice"})))
        assert _hit_ids(opened.knn(vectors[1], 5, team)) == {other.id}

    # -- re-embedding in place (capabilities.reembed) ----------------------------------------------
    NEW_MODEL = "conformance-new-model"
    NEW_DIMENSIONS = 24

    def _reembedding(self, opened: Store) -> Any:
        if not opened.capabilities.reembed:
            pytest.skip("the store does not re-embed in place (capabilities.reembed)")
        for name in ("reembed_open", "reembed_pending", "reembed_put", "reembed_progress", "reembed_finish"):
            assert callable(getattr(opened, name, None)), (
                f"capabilities.reembed is true but {name}() is missing"
            )
        return opened

    def _new_rows(self, memories: Sequence[Memory]) -> tuple[np.ndarray, list[int]]:
        """Two rows per memory (its whole text, one passage), of the new model, deterministic per id."""
        rows: list[np.ndarray] = []
        owners: list[int] = []
        for index, item in enumerate(memories):
            seed = int(item.id.replace("-", "")[:8], 16)
            rows.extend(unit_vectors(2, self.NEW_DIMENSIONS, seed))
            owners += [index, index]
        return np.stack(rows).astype(np.float32), owners

    def _run(self, store: Any, batch: int = 2) -> None:
        while pending := store.reembed_pending(batch):
            vectors, owners = self._new_rows(pending)
            store.reembed_put(pending, vectors, owners)

    def test_reembed_switches_every_memory_to_the_new_model(self, opened: Store) -> None:
        """Troubleshooting (stores declaring ``capabilities.reembed``): ``reembed_open(new, dims)`` on
        a store holding another model's vectors returns that model and leaves the store usable with
        it; every memory — deleted and superseded ones too — comes out of ``reembed_pending`` once;
        after ``reembed_finish`` the store holds only the new model's rows (``knn`` with a new-model
        query finds them; ``vectors`` returns them), a new instance opens with the new model and
        refuses the old one."""
        store: Any = self._reembedding(opened)
        live, gone, old = memory(1, content="live"), memory(2, content="gone"), memory(3, content="old")
        newer = memory(4, content="newer")
        self.add(opened, [live, gone, old, newer])
        opened.update_fields(gone.id, {"deleted_at": BASE_TIME})
        opened.update_fields(old.id, {"superseded_by": newer.id})
        opened.close()
        store = self.reopen_store(opened)
        assert store.reembed_open(self.NEW_MODEL, self.NEW_DIMENSIONS) == (self.model_id, self.dimensions)
        try:
            assert store.count(ALL) == 4  # usable, still bound to the old model
            assert store.reembed_progress() == (0, 4)
            seen: list[str] = []
            while pending := store.reembed_pending(3):
                seen += [m.id for m in pending]
                store.reembed_put(pending, *self._new_rows(pending))
            assert sorted(seen) == sorted(m.id for m in (live, gone, old, newer))
            assert store.reembed_progress() == (4, 4)
            assert store.reembed_finish(lambda batch: self._new_rows(batch)) == 0
            new_rows, _ = self._new_rows([live, gone, old, newer])
            got = store.vectors([live.id, newer.id])
            assert np.array_equal(got[live.id], new_rows[0:2]) and np.array_equal(
                got[newer.id], new_rows[6:8]
            )
            hits = store.knn(new_rows[1], 2, SEARCH)  # the live memory's passage row
            assert hits[0][0] == live.id and hits[0][1] == pytest.approx(1.0, abs=1e-5)
            store.insert([memory(5, content="after")], unit_vectors(1, self.NEW_DIMENSIONS, 7))
        finally:
            store.close()
        again = self.reopen_store(store)
        with pytest.raises(ModelMismatchError):
            again.open(self.model_id, self.dimensions)
        again.open(self.NEW_MODEL, self.NEW_DIMENSIONS)
        try:
            assert again.count(ALL) == 5
        finally:
            again.close()

    def test_reembed_resumes_and_catches_up_with_another_instance(self, opened: Store) -> None:
        """Troubleshooting: new rows put before an interruption are kept (a new run resumes, and does
        not embed them again); memories another instance still on the old model stores or purges
        meanwhile are embedded at ``reembed_finish`` (through its ``embed`` callback) or dropped;
        after the switch that instance's next ``knn`` and ``insert`` raise ModelMismatchError, never
        comparing an old-model query with new-model vectors."""
        self._reembedding(opened)
        items = [memory(i, content=f"fact {i}") for i in range(5)]
        self.add(opened, items)
        opened.close()
        first: Any = self.reopen_store(opened)
        if first is opened:
            pytest.skip("needs a second instance on the same data: override reopen_store")
        first.reembed_open(self.NEW_MODEL, self.NEW_DIMENSIONS)
        batch = first.reembed_pending(2)
        first.reembed_put(batch, *self._new_rows(batch))
        first.close()  # interrupted
        old: Any = self.reopen_store(opened)
        old.open(self.model_id, self.dimensions)  # a server still on the old model
        second: Any = self.reopen_store(opened)
        try:
            assert second.reembed_open(self.NEW_MODEL, self.NEW_DIMENSIONS) == (
                self.model_id,
                self.dimensions,
            )
            assert second.reembed_progress() == (2, 5)
            early = memory(10, content="stored during the run")
            old.insert([early], unit_vectors(1, self.dimensions, 11))
            old.purge([batch[0].id])  # had new rows already
            self._run(second)
            late = memory(11, content="stored just before the switch")
            old.insert([late], unit_vectors(1, self.dimensions, 12))
            asked: list[str] = []

            def embed(memories: Sequence[Memory]) -> tuple[np.ndarray, list[int]]:
                asked.extend(m.id for m in memories)
                return self._new_rows(memories)

            assert second.reembed_finish(embed) == 1 and asked == [late.id]
            assert second.count(ALL) == 6
            rows = second.vectors([m.id for m in (*items, early, late)])
            assert batch[0].id not in rows and len(rows) == 6
            assert all(np.asarray(r).shape == (2, self.NEW_DIMENSIONS) for r in rows.values())
            with pytest.raises(ModelMismatchError):
                old.knn(unit_vectors(1, self.dimensions, 13)[0], 3, SEARCH)
            with pytest.raises(ModelMismatchError):
                old.insert([memory(12)], unit_vectors(1, self.dimensions, 14))
            assert second.count(ALL) == 6
        finally:
            for instance in (old, second):
                with contextlib.suppress(Exception):
                    instance.close()

    def test_reembed_of_the_model_it_holds_is_a_no_op(self, opened: Store) -> None:
        """Troubleshooting: ``reembed_open`` with the model the store holds (or on an empty store)
        returns None and leaves the store open with that model; a side table of a run for another
        model, abandoned, is dropped (its model never mixes in later)."""
        self._reembedding(opened)
        self.add(opened, [memory(1)])
        opened.close()
        store: Any = self.reopen_store(opened)
        store.reembed_open(self.NEW_MODEL, self.NEW_DIMENSIONS)
        self._run(store)
        store.close()  # abandoned before the switch
        store = self.reopen_store(opened)
        try:
            assert store.reembed_open(self.model_id, self.dimensions) is None
            assert store.count(ALL) == 1
            store.insert([memory(2)], unit_vectors(1, self.dimensions, 3))
            assert store.reembed_open(self.model_id, self.dimensions) is None
        finally:
            store.close()
        store = self.reopen_store(opened)
        try:  # a new run for the new model starts from nothing
            store.reembed_open(self.NEW_MODEL, self.NEW_DIMENSIONS)
            assert store.reembed_progress() == (0, 2)
        finally:
            store.close()


StoreConformance._suite = StoreConformance
