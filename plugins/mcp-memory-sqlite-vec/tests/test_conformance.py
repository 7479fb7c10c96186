"""SqliteVecStore passes the store conformance suite."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_memory_sqlite_vec import SqliteVecStore
from mcp_memory_testing.store_suite import StoreConformance


class TestSqliteVecStore(StoreConformance):
    @pytest.fixture
    def store(self, tmp_path: Path) -> SqliteVecStore:
        return SqliteVecStore(tmp_path / "sub" / "memories.db")

    def reopen_store(self, store: SqliteVecStore) -> SqliteVecStore:  # type: ignore[override]
        return SqliteVecStore(store.location)


class TestSqliteVecStoreWithoutVectorCache(StoreConformance):
    """The vec0 path (MCP_MEMORY_SQLITE_VECTOR_CACHE=0, or a cache over its size cap)."""

    @pytest.fixture
    def store(self, tmp_path: Path) -> SqliteVecStore:
        return SqliteVecStore(tmp_path / "sub" / "memories.db", vector_cache=False)

    def reopen_store(self, store: SqliteVecStore) -> SqliteVecStore:  # type: ignore[override]
        return SqliteVecStore(store.location, vector_cache=False)


class TestSqliteVecStoreInt8Cache(StoreConformance):
    """The int8 pass + exact rerank, forced on tiny data (exact threshold 0). Where a set is smaller
    than the rerank count every vector is reranked; larger sets go through the int8 pass."""

    @pytest.fixture
    def store(self, tmp_path: Path) -> SqliteVecStore:
        return SqliteVecStore(tmp_path / "sub" / "memories.db", exact_threshold=0)

    def reopen_store(self, store: SqliteVecStore) -> SqliteVecStore:  # type: ignore[override]
        return SqliteVecStore(store.location, exact_threshold=0)


class TestSqliteVecStoreCoarseCache(StoreConformance):
    """The sign-bit coarse pass + exact rerank, forced on tiny data (threshold 0). The suite's sets are
    smaller than the candidate count, so every vector is reranked: answers must be exact."""

    @pytest.fixture
    def store(self, tmp_path: Path) -> SqliteVecStore:
        return SqliteVecStore(tmp_path / "sub" / "memories.db", coarse_threshold=0)

    def reopen_store(self, store: SqliteVecStore) -> SqliteVecStore:  # type: ignore[override]
        return SqliteVecStore(store.location, coarse_threshold=0)
