"""Transactions: commit, rollback, nesting."""

from __future__ import annotations

import numpy as np
import pytest

from mcp_memory_core import Store

from .base import StoreSuite
from .data import ALL, BASE_TIME, memory


class TransactionTests(StoreSuite):
    """``transaction()``: commit on exit, undo every write of the block on an exception, nest."""

    def test_transaction_commits(self, opened: Store) -> None:
        """Troubleshooting: writes inside ``with store.transaction():`` must all be visible after the
        block exits normally (commit on exit), including reads made inside the block."""
        a, b = memory(1), memory(2)
        with opened.transaction():
            self.add(opened, [a])
            self.add(opened, [b], seed=1)
            opened.update_fields(a.id, {"pinned": True})
            assert set(opened.get([a.id, b.id])) == {a.id, b.id}
        assert opened.get([a.id])[a.id].pinned is True
        assert opened.count(ALL) == 2

    def test_transaction_rollback(self, opened: Store) -> None:
        """Troubleshooting: an exception inside ``transaction()`` must undo EVERY write of the block
        (inserts, their vectors and keyword entries, and updates) and propagate the exception. If rows
        remain, each write probably commits on its own instead of joining the open transaction."""
        keep = memory(1, content="kept ocelot")
        vectors = self.add(opened, [keep])
        doomed = [memory(2, content="doomed ocelot"), memory(3, content="doomed ocelot too")]
        with pytest.raises(RuntimeError, match="boom"), opened.transaction():
            self.add(opened, doomed, vectors=np.stack([vectors[0], vectors[0]]))
            opened.update_fields(keep.id, {"pinned": True, "deleted_at": BASE_TIME})
            raise RuntimeError("boom")
        assert opened.get([m.id for m in doomed]) == {}
        assert opened.get([keep.id])[keep.id] == keep
        assert opened.count(ALL) == 1
        assert [i for i, _ in opened.knn(vectors[0], 5, ALL)] == [keep.id]
        if opened.capabilities.keyword_search:
            assert [i for i, _ in opened.keyword_search("ocelot", 5, ALL)] == [keep.id]
        self.add(opened, doomed, seed=9)  # the store is still usable, and the ids are free again
        assert opened.count(ALL) == 3

    def test_nested_transaction(self, opened: Store) -> None:
        """Troubleshooting: ``transaction()`` may nest; the inner block is a no-op (it neither commits
        nor starts a new transaction), so an exception escaping the OUTER block undoes the inner
        block's writes too. Keep a depth counter; only the outermost block begins/commits/rolls back."""
        a, b, c = memory(1), memory(2), memory(3)
        with opened.transaction():
            with opened.transaction():
                self.add(opened, [a])
            self.add(opened, [b], seed=1)
        assert opened.count(ALL) == 2
        with pytest.raises(RuntimeError), opened.transaction():
            with opened.transaction():
                self.add(opened, [c], seed=2)
            raise RuntimeError("outer fails")
        assert opened.get([c.id]) == {}
        assert opened.count(ALL) == 2
