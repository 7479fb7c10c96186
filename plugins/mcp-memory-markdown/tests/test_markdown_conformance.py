"""MarkdownStore passes the store conformance suite, with and without inotify."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_memory_markdown import MarkdownStore
from mcp_memory_testing.store_suite import StoreConformance


class TestMarkdownStore(StoreConformance):
    @pytest.fixture
    def store(self, tmp_path: Path) -> MarkdownStore:
        return MarkdownStore(tmp_path / "vault", namespace="default", owner="local")

    def reopen_store(self, store: MarkdownStore) -> MarkdownStore:  # type: ignore[override]
        return MarkdownStore(store.location, namespace="default", owner="local")


class TestMarkdownStoreScanning(StoreConformance):
    """Without inotify (macOS, Windows, MCP_MEMORY_VAULT_WATCH=false): every refresh scans."""

    @pytest.fixture
    def store(self, tmp_path: Path) -> MarkdownStore:
        return MarkdownStore(tmp_path / "vault", namespace="default", owner="local", watch=False)

    def reopen_store(self, store: MarkdownStore) -> MarkdownStore:  # type: ignore[override]
        return MarkdownStore(store.location, namespace="default", owner="local", watch=False)
