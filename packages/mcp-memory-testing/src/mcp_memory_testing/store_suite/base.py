"""What every group of store tests stands on: the ``store`` fixture a plugin overrides, the opened store,
and the helpers that write the data the tests read back."""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Iterator, Sequence
from datetime import timedelta
from typing import Any

import numpy as np
import pytest

from mcp_memory_core import Memory, MemoryFilter, MemoryType, Store, TagCounting

from ..guard import OverrideGuard
from .data import BASE_TIME, hit_ids, memory, row_ids, unit_vectors


class StoreSuite(OverrideGuard):
    """The fixtures and helpers every group of store tests shares (``StoreConformance`` documents them)."""

    model_id: str = "hash-64"
    dimensions: int = 64

    # -- fixtures and hooks ----------------------------------------------------------------------
    @pytest.fixture
    def store(self) -> Store:
        raise NotImplementedError("Override the `store` fixture to return an empty, un-opened store.")

    @pytest.fixture
    def opened(self, store: Store) -> Iterator[Store]:
        store.open(self.model_id, self.dimensions)
        yield store
        with contextlib.suppress(Exception):  # a test may already have closed it
            store.close()

    def reopen_store(self, store: Store) -> Store:
        """A store instance over the same data as ``store`` (which is closed). Default: ``store`` itself."""
        return store

    # -- helpers ---------------------------------------------------------------------------------
    def add(
        self, store: Store, memories: Sequence[Memory], vectors: np.ndarray | None = None, seed: int = 0
    ) -> np.ndarray:
        if vectors is None:
            vectors = unit_vectors(len(memories), self.dimensions, seed)
        store.insert(list(memories), np.asarray(vectors, dtype=np.float32))
        return vectors

    def add_passages(
        self, store: Store, memories: Sequence[Memory], vectors: np.ndarray, owners: Sequence[int]
    ) -> None:
        store.insert(list(memories), np.asarray(vectors, dtype=np.float32), list(owners))

    def _far_from(self, query: np.ndarray, n: int, seed: int) -> np.ndarray:
        """``n`` unit vectors with cosine similarity < 0.3 to ``query``."""
        out = []
        for v in unit_vectors(4 * n + 8, self.dimensions, seed):
            if float(v @ query) < 0.3:
                out.append(v)
            if len(out) == n:
                break
        return np.stack(out)

    def _filter_corpus(self, store: Store) -> tuple[list[Memory], np.ndarray]:
        """48 memories spread over every filter field and four threads, one to three vectors each."""
        kinds = list(MemoryType)
        pool = ["red", "green", "blue", "ünï code", "with space", "emoji 🙂"]
        items = []
        for i in range(48):
            metadata: dict[str, Any] = {"n": i % 3, "s": str(i % 3), "flag": i % 2 == 0, "f": (i % 3) * 1.0}
            if i % 5 == 0:
                metadata["nullable"] = None
            if i % 6 == 0:
                metadata['we"ird.key $[0]'] = "x"
            items.append(
                memory(
                    i,
                    content=f"kiwi note {i}",
                    type=kinds[i % 4],
                    tags=tuple(tag for j, tag in enumerate(pool) if (i >> j) & 1),
                    metadata=metadata,
                    namespace="other" if i % 7 == 6 else "default",
                    deleted_at=BASE_TIME if i % 11 == 3 else None,
                    superseded_by="11111111-2222-3333-4444-555555555555" if i % 13 == 5 else None,
                    occurred_at=BASE_TIME - timedelta(days=48 - i),  # happened long before it was stored
                    thread=None if i % 4 == 3 else f"thread {i % 4}",
                )
            )
        owners = [i for i in range(48) for _ in range(1 + i % 3)]
        vectors = unit_vectors(len(owners), self.dimensions, 97)
        self.add_passages(store, items, vectors, owners)
        return items, vectors

    def _check_filter(
        self, store: Store, items: Sequence[Memory], where: MemoryFilter, label: str, word: str = "kiwi"
    ) -> set[str]:
        """count, list, knn and keyword_search (for ``word``) all give the reference set, and a store
        that counts tags (``TagCounting``) counts the tags of that set; returns it."""
        expected = {m.id for m in items if where.matches(m)}
        if isinstance(store, TagCounting):
            tags = Counter(tag for m in items if m.id in expected for tag in set(m.tags))
            assert dict(store.tag_counts(where)) == dict(tags), label
        query = unit_vectors(1, self.dimensions, 98)[0]
        assert store.count(where) == len(expected), label
        assert row_ids(store.list(where, 1000)) == expected, label
        assert hit_ids(store.knn(query, 200, where)) == expected, label
        if store.capabilities.keyword_search:
            assert hit_ids(store.keyword_search(word, 200, where)) == expected, label
        return expected
