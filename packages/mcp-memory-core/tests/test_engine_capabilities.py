"""A store's and an embedder's optional capabilities are protocols the engine checks with isinstance."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator

import pytest

from mcp_memory_core import (
    BulkLoading,
    InPlaceReembedding,
    InvalidInputError,
    Memory,
    MemoryEngine,
    Refreshing,
    StoreCapabilities,
    TokenCounting,
    VectorReading,
    Warmable,
    WriteLocking,
)
from mcp_memory_rankers import SimilarityRanker
from mcp_memory_testing import HashEmbedder, InMemoryStore


def engine_over(store: InMemoryStore) -> MemoryEngine:
    return MemoryEngine(store, HashEmbedder(), SimilarityRanker())


def test_the_reference_store_and_embedder_declare_what_they_offer() -> None:
    store, embedder = InMemoryStore(), HashEmbedder()
    assert isinstance(store, VectorReading) and isinstance(embedder, TokenCounting)
    for missing in (Warmable, BulkLoading, WriteLocking, Refreshing, InPlaceReembedding):
        assert not isinstance(store, missing), missing.__name__


class ClaimsReembed(InMemoryStore):
    """Says it re-embeds in place, without the methods that do it."""

    @property
    def capabilities(self) -> StoreCapabilities:
        return StoreCapabilities(keyword_search=True, reembed=True)


def test_a_store_that_claims_to_reembed_without_the_methods_is_told_so_in_one_sentence() -> None:
    with pytest.raises(InvalidInputError, match="cannot re-embed its memories in place"):
        engine_over(ClaimsReembed()).reindex()


class Locking(InMemoryStore):
    def __init__(self) -> None:
        super().__init__()
        self.locked: list[str] = []

    def write_lock(self, key: str) -> None:
        self.locked.append(key)


def test_a_write_locking_store_locks_the_owner_namespace_and_text_of_each_new_memory() -> None:
    store = Locking()
    assert isinstance(store, WriteLocking)
    engine_over(store).store_memory("Lunch  at NOON")
    assert [json.loads(key) for key in store.locked] == [["local", "default", "lunch at noon"]]


class Bulk(InMemoryStore):
    def __init__(self) -> None:
        super().__init__()
        self.sizes: list[int] = []

    @contextlib.contextmanager
    def bulk_load(self, rows: int) -> Iterator[None]:
        self.sizes.append(rows)
        yield


def test_a_bulk_loading_store_is_told_how_many_memories_an_import_adds() -> None:
    store = Bulk()
    assert isinstance(store, BulkLoading)
    engine = engine_over(store)
    kept = engine.store_memory("already here").memory
    engine.import_memories([kept, Memory(content="new one"), Memory(content="another")])
    assert store.sizes == [2]
