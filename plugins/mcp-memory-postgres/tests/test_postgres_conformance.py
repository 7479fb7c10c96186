"""PostgresStore passes the store conformance suite against a real PostgreSQL 16 with pgvector,
started by the tests (mcp_memory_testing.postgres: the pgserver wheel's binaries as an unprivileged
user), a fresh database per test."""

from __future__ import annotations

import pytest

from mcp_memory_postgres import PostgresStore
from mcp_memory_testing.store_suite import StoreConformance


class TestPostgresStore(StoreConformance):
    """Small stores: KNN scans exactly (the suite compares it with numpy)."""

    @pytest.fixture
    def store(self, postgres_url: str) -> PostgresStore:
        return PostgresStore(postgres_url)

    def reopen_store(self, store: PostgresStore) -> PostgresStore:  # type: ignore[override]
        return PostgresStore(store._url)


class TestPostgresStoreThroughTheIndex(StoreConformance):
    """The HNSW path forced on tiny data (exact_rows=0): every KNN asks the index first, grows its
    candidate rows under filters, and falls back to the exact scan when the index cannot find k."""

    @pytest.fixture
    def store(self, postgres_url: str) -> PostgresStore:
        return PostgresStore(postgres_url, exact_rows=0)

    def reopen_store(self, store: PostgresStore) -> PostgresStore:  # type: ignore[override]
        return PostgresStore(store._url, exact_rows=0)
