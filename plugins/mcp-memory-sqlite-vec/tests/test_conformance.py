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
