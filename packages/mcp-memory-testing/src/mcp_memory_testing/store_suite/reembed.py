"""Re-embedding in place (a capability: ``capabilities.reembed``)."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from mcp_memory_core import Memory, ModelMismatchError, Store

from .base import StoreSuite
from .data import ALL, BASE_TIME, SEARCH, memory, unit_vectors


class ReembedTests(StoreSuite):
    """Switch to a new model, resume an interrupted run, catch up with another instance, no-op;
    skipped unless ``capabilities.reembed``."""

    NEW_MODEL = "conformance-new-model"
    NEW_DIMENSIONS = 24

    def _reembedding(self, opened: Store) -> Any:
        if not opened.capabilities.reembed:
            pytest.skip("the store does not re-embed in place (capabilities.reembed)")
        for name in ("reembed_open", "reembed_pending", "reembed_put", "reembed_progress", "reembed_finish"):
            assert callable(getattr(opened, name, None)), (
                f"capabilities.reembed is true but {name}() is missing"
            )
        return opened

    def _new_rows(self, memories: Sequence[Memory]) -> tuple[np.ndarray, list[int]]:
        """Two rows per memory (its whole text, one passage), of the new model, deterministic per id."""
        rows: list[np.ndarray] = []
        owners: list[int] = []
        for index, item in enumerate(memories):
            seed = int(item.id.replace("-", "")[:8], 16)
            rows.extend(unit_vectors(2, self.NEW_DIMENSIONS, seed))
            owners += [index, index]
        return np.stack(rows).astype(np.float32), owners

    def _run(self, store: Any, batch: int = 2) -> None:
        while pending := store.reembed_pending(batch):
            vectors, owners = self._new_rows(pending)
            store.reembed_put(pending, vectors, owners)

    def test_reembed_switches_every_memory_to_the_new_model(self, opened: Store) -> None:
        """Troubleshooting (stores declaring ``capabilities.reembed``): ``reembed_open(new, dims)`` on
        a store holding another model's vectors returns that model and leaves the store usable with
        it; every memory — deleted and superseded ones too — comes out of ``reembed_pending`` once;
        after ``reembed_finish`` the store holds only the new model's rows (``knn`` with a new-model
        query finds them; ``vectors`` returns them), a new instance opens with the new model and
        refuses the old one."""
        store: Any = self._reembedding(opened)
        live, gone, old = memory(1, content="live"), memory(2, content="gone"), memory(3, content="old")
        newer = memory(4, content="newer")
        self.add(opened, [live, gone, old, newer])
        opened.update_fields(gone.id, {"deleted_at": BASE_TIME})
        opened.update_fields(old.id, {"superseded_by": newer.id})
        opened.close()
        store = self.reopen_store(opened)
        assert store.reembed_open(self.NEW_MODEL, self.NEW_DIMENSIONS) == (self.model_id, self.dimensions)
        try:
            assert store.count(ALL) == 4  # usable, still bound to the old model
            assert store.reembed_progress() == (0, 4)
            seen: list[str] = []
            while pending := store.reembed_pending(3):
                seen += [m.id for m in pending]
                store.reembed_put(pending, *self._new_rows(pending))
            assert sorted(seen) == sorted(m.id for m in (live, gone, old, newer))
            assert store.reembed_progress() == (4, 4)
            assert store.reembed_finish(lambda batch: self._new_rows(batch)) == 0
            new_rows, _ = self._new_rows([live, gone, old, newer])
            got = store.vectors([live.id, newer.id])
            assert np.array_equal(got[live.id], new_rows[0:2]) and np.array_equal(
                got[newer.id], new_rows[6:8]
            )
            hits = store.knn(new_rows[1], 2, SEARCH)  # the live memory's passage row
            assert hits[0][0] == live.id and hits[0][1] == pytest.approx(1.0, abs=1e-5)
            store.insert([memory(5, content="after")], unit_vectors(1, self.NEW_DIMENSIONS, 7))
        finally:
            store.close()
        again = self.reopen_store(store)
        with pytest.raises(ModelMismatchError):
            again.open(self.model_id, self.dimensions)
        again.open(self.NEW_MODEL, self.NEW_DIMENSIONS)
        try:
            assert again.count(ALL) == 5
        finally:
            again.close()

    def test_reembed_resumes_and_catches_up_with_another_instance(self, opened: Store) -> None:
        """Troubleshooting: new rows put before an interruption are kept (a new run resumes, and does
        not embed them again); memories another instance still on the old model stores or purges
        meanwhile are embedded at ``reembed_finish`` (through its ``embed`` callback) or dropped;
        after the switch that instance's next ``knn`` and ``insert`` raise ModelMismatchError, never
        comparing an old-model query with new-model vectors."""
        self._reembedding(opened)
        items = [memory(i, content=f"fact {i}") for i in range(5)]
        self.add(opened, items)
        opened.close()
        first: Any = self.reopen_store(opened)
        if first is opened:
            pytest.skip("needs a second instance on the same data: override reopen_store")
        first.reembed_open(self.NEW_MODEL, self.NEW_DIMENSIONS)
        batch = first.reembed_pending(2)
        first.reembed_put(batch, *self._new_rows(batch))
        first.close()  # interrupted
        old: Any = self.reopen_store(opened)
        old.open(self.model_id, self.dimensions)  # a server still on the old model
        second: Any = self.reopen_store(opened)
        try:
            assert second.reembed_open(self.NEW_MODEL, self.NEW_DIMENSIONS) == (
                self.model_id,
                self.dimensions,
            )
            assert second.reembed_progress() == (2, 5)
            early = memory(10, content="stored during the run")
            old.insert([early], unit_vectors(1, self.dimensions, 11))
            old.purge([batch[0].id])  # had new rows already
            self._run(second)
            late = memory(11, content="stored just before the switch")
            old.insert([late], unit_vectors(1, self.dimensions, 12))
            asked: list[str] = []

            def embed(memories: Sequence[Memory]) -> tuple[np.ndarray, list[int]]:
                asked.extend(m.id for m in memories)
                return self._new_rows(memories)

            assert second.reembed_finish(embed) == 1 and asked == [late.id]
            assert second.count(ALL) == 6
            rows = second.vectors([m.id for m in (*items, early, late)])
            assert batch[0].id not in rows and len(rows) == 6
            assert all(np.asarray(r).shape == (2, self.NEW_DIMENSIONS) for r in rows.values())
            with pytest.raises(ModelMismatchError):
                old.knn(unit_vectors(1, self.dimensions, 13)[0], 3, SEARCH)
            with pytest.raises(ModelMismatchError):
                old.insert([memory(12)], unit_vectors(1, self.dimensions, 14))
            assert second.count(ALL) == 6
        finally:
            for instance in (old, second):
                with contextlib.suppress(Exception):
                    instance.close()

    def test_reembed_of_the_model_it_holds_is_a_no_op(self, opened: Store) -> None:
        """Troubleshooting: ``reembed_open`` with the model the store holds (or on an empty store)
        returns None and leaves the store open with that model; a side table of a run for another
        model, abandoned, is dropped (its model never mixes in later)."""
        self._reembedding(opened)
        self.add(opened, [memory(1)])
        opened.close()
        store: Any = self.reopen_store(opened)
        store.reembed_open(self.NEW_MODEL, self.NEW_DIMENSIONS)
        self._run(store)
        store.close()  # abandoned before the switch
        store = self.reopen_store(opened)
        try:
            assert store.reembed_open(self.model_id, self.dimensions) is None
            assert store.count(ALL) == 1
            store.insert([memory(2)], unit_vectors(1, self.dimensions, 3))
            assert store.reembed_open(self.model_id, self.dimensions) is None
        finally:
            store.close()
        store = self.reopen_store(opened)
        try:  # a new run for the new model starts from nothing
            store.reembed_open(self.NEW_MODEL, self.NEW_DIMENSIONS)
            assert store.reembed_progress() == (0, 2)
        finally:
            store.close()
