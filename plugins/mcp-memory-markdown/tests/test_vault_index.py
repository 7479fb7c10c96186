"""The vault's index store comes from the plugin manager (the store named sqlite-vec), not an import."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_memory_core import MemoryEngine
from mcp_memory_core.errors import PluginError
from mcp_memory_markdown import MarkdownStore
from mcp_memory_markdown.index import IndexStore, plugin_index
from mcp_memory_testing import HashEmbedder, SimilarityRanker


def test_the_vault_builds_its_index_with_the_factory_it_is_given(tmp_path: Path) -> None:
    made: list[Path] = []
    from_plugins = plugin_index()

    def index(path: Path) -> IndexStore:
        made.append(path)
        return from_plugins(path)

    store = MarkdownStore(tmp_path / "vault", namespace="proj", owner="local", watch=False, index=index)
    engine = MemoryEngine(store, HashEmbedder(64), SimilarityRanker(), namespace="proj", track_access=False)
    engine.open()
    try:
        engine.store_memory("The vault index is built by the factory it was given")
        hits = engine.search("vault index factory", limit=3).hits
        assert [hit.memory.content for hit in hits][:1] == [
            "The vault index is built by the factory it was given"
        ]
    finally:
        engine.close()
    assert made[-1] == store.index_path
    assert made[-1].parent == (tmp_path / "vault" / ".mcp-memory").resolve()


def test_the_default_index_is_the_sqlite_vec_store_from_the_plugins(tmp_path: Path) -> None:
    store = MarkdownStore(tmp_path / "vault", namespace="proj", owner="local", watch=False)
    store.open("hash-64", 64)
    try:
        assert type(store._index).__name__ == "SqliteVecStore"
        assert store.index_path.parent == (tmp_path / "vault" / ".mcp-memory").resolve()
    finally:
        store.close()


def test_a_vault_without_its_index_store_says_which_plugin_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_MEMORY_DISABLE_PLUGINS", "sqlite-vec")
    with pytest.raises(PluginError, match=r"install mcp-memory-sqlite-vec"):
        MarkdownStore(tmp_path / "vault", namespace="proj", owner="local", watch=False)


def test_the_plugin_builds_the_index_with_the_servers_plugin_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcp_memory_core.settings import Settings
    from mcp_memory_markdown.plugin import _make

    monkeypatch.setenv("MCP_MEMORY_VAULT", str(tmp_path / "vault"))
    monkeypatch.delenv("MCP_MEMORY_DISABLE_PLUGINS", raising=False)
    assert isinstance(_make(Settings()), MarkdownStore)
    with pytest.raises(PluginError, match=r"leave it out of MCP_MEMORY_DISABLE_PLUGINS"):
        _make(Settings(disable_plugins="sqlite-vec"))
