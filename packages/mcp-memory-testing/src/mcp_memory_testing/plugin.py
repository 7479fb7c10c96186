"""Registers the fakes as plugins, so a server can run on them in fast tests:
``MCP_MEMORY_STORE=memory MCP_MEMORY_EMBEDDER=hash``. Not for real use: nothing persists."""

from __future__ import annotations

from collections.abc import Iterator

from mcp_memory_core import EmbedderSpec, StoreSpec, hookimpl

from .fakes import HashEmbedder, InMemoryStore


@hookimpl
def mcp_memory_embedders() -> Iterator[EmbedderSpec]:
    yield EmbedderSpec(
        name="hash", factory=lambda settings: HashEmbedder(), description="Testing only: hashed bag of words"
    )


@hookimpl
def mcp_memory_stores() -> Iterator[StoreSpec]:
    yield StoreSpec(
        name="memory", factory=lambda settings: InMemoryStore(), description="Testing only: not persisted"
    )
