"""The store called from the server's worker threads."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from mcp_memory_core import Store

from .base import StoreSuite
from .data import ALL, SEARCH, hit_ids, memory, row_ids, unit_vectors


class ConcurrencyTests(StoreSuite):
    """Writes from several threads; with ``capabilities.thread_safe``, reads beside an open write."""

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
                seen["list"] = row_ids(opened.list(ALL, 10))
                seen["count"] = opened.count(ALL)
                seen["knn"] = hit_ids(opened.knn(vectors[0], 5, ALL))
                if opened.capabilities.keyword_search:
                    seen["keyword"] = hit_ids(opened.keyword_search("heron", 5, ALL))
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
        assert hit_ids(opened.knn(vectors[0], 5, ALL)) == {committed.id, pending.id}
