"""The store's lifecycle: the ``Store`` protocol, open and close, the model a store is bound to."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from mcp_memory_core import Memory, ModelMismatchError, Store, StoreCapabilities

from .base import StoreSuite
from .data import ALL, SEARCH, memory, unit_vectors


class BasicsTests(StoreSuite):
    """A store opens empty, remembers its model (``capabilities.derived_index``: one index per model)
    and keeps its data across close and reopen."""

    def test_implements_protocol(self, store: Store) -> None:
        """Troubleshooting: a store needs every member of ``mcp_memory_core.Store``: ``capabilities``
        (a StoreCapabilities), ``location`` (a str for humans), open/close/transaction/insert/get/
        update_fields/knn/keyword_search/list/count/iter_all. ``capabilities`` and ``location`` must work
        before ``open()``."""
        assert isinstance(store, Store)
        assert isinstance(store.capabilities, StoreCapabilities)
        assert isinstance(store.location, str) and store.location

    def test_new_store_is_empty(self, opened: Store) -> None:
        """Troubleshooting: the ``store`` fixture must return an EMPTY store (use ``tmp_path`` for a
        fresh file or database per test); ``count``, ``list`` and ``iter_all`` must work on no rows."""
        assert opened.count(ALL) == 0
        assert opened.list(ALL, 10) == []
        assert list(opened.iter_all()) == []
        assert opened.get(["00000000-0000-0000-0000-000000000000"]) == {}
        assert opened.knn(unit_vectors(1, self.dimensions, 1)[0], 5, ALL) == []

    def test_open_twice_same_model(self, opened: Store) -> None:
        """Troubleshooting: ``open()`` with the model the store is already bound to must be a no-op
        (the engine may call it more than once); only a DIFFERENT model is an error."""
        opened.open(self.model_id, self.dimensions)
        self.add(opened, [memory(1)])
        assert opened.count(ALL) == 1

    def test_close_reopen_persists(self, opened: Store) -> None:
        """Troubleshooting: data must survive ``close()`` and a new ``open()`` with the same model (and a
        new instance, when ``reopen_store`` is overridden). If rows are missing, commit before close
        (autocommit off?), or don't recreate/truncate tables when they already exist."""
        items = [memory(i, content=f"persistent fact {i}") for i in range(3)]
        vectors = self.add(opened, items)
        opened.close()
        again = self.reopen_store(opened)
        again.open(self.model_id, self.dimensions)
        try:
            assert again.get([m.id for m in items]) == {m.id: m for m in items}
            hits = again.knn(vectors[1], 1, SEARCH)
            assert hits and hits[0][0] == items[1].id
            assert again.count(SEARCH) == 3
        finally:
            again.close()

    def test_model_mismatch_refused(self, opened: Store) -> None:
        """Troubleshooting: the store must remember the embedding model it was opened with (persist it
        next to the data) and raise ``ModelMismatchError(location, stored, configured)`` when opened with
        another ``model_id``. Opening again with the right model must still work afterwards."""
        items = [memory(1)]
        self.add(opened, items)
        opened.close()
        again = self.reopen_store(opened)
        if opened.capabilities.derived_index:
            self._check_index_per_model(again, items)
            return
        with pytest.raises(ModelMismatchError) as info:
            again.open("some-other-model", self.dimensions)
        assert info.value.stored == self.model_id
        assert info.value.configured == "some-other-model"
        again.open(self.model_id, self.dimensions)
        try:
            assert set(again.get([items[0].id])) == {items[0].id}
        finally:
            again.close()

    def _check_index_per_model(self, store: Any, items: Sequence[Memory]) -> None:
        """A store with ``capabilities.derived_index`` opened with another model: its ``refresh``
        builds that model's index from its own data (asking ``embed`` for every text), whose vectors
        are the new model's only; opened with the first model again, the first index answers."""
        assert callable(getattr(store, "refresh", None)), "capabilities.derived_index needs refresh(embed)"
        asked: list[str] = []

        def embed(texts: Sequence[str]) -> tuple[np.ndarray, None]:
            asked.extend(texts)
            return unit_vectors(len(texts), self.dimensions + 8, 321), None

        store.open("some-other-model", self.dimensions + 8)
        try:
            store.refresh(embed)
            assert sorted(asked) == sorted(m.content for m in items)
            assert set(store.get([m.id for m in items])) == {m.id for m in items}
            rows = store.vectors([items[0].id]) if store.capabilities.read_vectors else None
            assert rows is None or np.asarray(rows[items[0].id]).shape[1] == self.dimensions + 8
        finally:
            store.close()
        store.open(self.model_id, self.dimensions)
        try:
            assert set(store.get([m.id for m in items])) == {m.id for m in items}
            assert store.knn(unit_vectors(1, self.dimensions, 5)[0], 1, ALL)
        finally:
            store.close()
