"""The reference InMemoryStore passes StoreConformance (so the suite itself can pass)."""

from __future__ import annotations

import pytest

from mcp_memory_testing.fakes import BackloggedStore, InMemoryStore
from mcp_memory_testing.guard import troubleshooting_documented
from mcp_memory_testing.store_suite import StoreConformance


class TestInMemoryStore(StoreConformance):
    @pytest.fixture
    def store(self) -> InMemoryStore:
        return InMemoryStore()


class TestBackloggedStore(StoreConformance):
    @pytest.fixture
    def store(self) -> BackloggedStore:
        return BackloggedStore()


def test_every_store_test_has_troubleshooting() -> None:
    assert troubleshooting_documented(StoreConformance) == []


class _PostFilteringStore(InMemoryStore):
    """Deliberately wrong: takes the top-k over everything, then filters (the classic sqlite-vec bug)."""

    def knn(self, vector, k, where):
        from mcp_memory_core import MemoryFilter

        everything = super().knn(vector, k, MemoryFilter(namespace=None, include_deleted=True))
        rows = self.get([i for i, _ in everything])
        return [(i, s) for i, s in everything if where.matches(rows[i])]


def test_suite_catches_filter_after_top_k() -> None:
    suite = StoreConformance()
    store = _PostFilteringStore()
    store.open(suite.model_id, suite.dimensions)
    with pytest.raises(AssertionError):
        suite.test_knn_filters_before_top_k_tombstones(store)
