"""The optional capabilities the vault offers, as the engine and the server check them."""

from pathlib import Path

from mcp_memory_core import (
    Diagnosable,
    IndexRebuilding,
    LayoutInitializing,
    Refreshing,
    VectorReading,
    Warmable,
)
from mcp_memory_markdown import MarkdownStore


def test_the_vault_refreshes_rebuilds_its_index_creates_its_layout_and_diagnoses(tmp_path: Path) -> None:
    store = MarkdownStore(tmp_path / "vault", namespace="proj", owner="local", watch=False)
    for offered in (Refreshing, IndexRebuilding, LayoutInitializing, Diagnosable, VectorReading, Warmable):
        assert isinstance(store, offered), offered.__name__
    assert store.capabilities.derived_index and store.capabilities.read_vectors
