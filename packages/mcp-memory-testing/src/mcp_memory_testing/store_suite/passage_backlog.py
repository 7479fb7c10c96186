"""The passage backlog (a capability: :class:`~mcp_memory_core.protocols.PassageBacklog`): memories
written with their whole text's vector only, whose passages' vectors come later."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from mcp_memory_core import MemoryFilter, PassageBacklog, Store, VectorReading

from .base import StoreSuite
from .data import ALL, BASE_TIME, SEARCH, memory, unit_vectors


class PassageBacklogTests(StoreSuite):
    """Marks commit with the insert, are listed oldest first, survive a reopen; completing adds the
    passages with the memory's current state, once; a purged memory leaves no mark. Skipped unless
    the store is a ``PassageBacklog``."""

    def _backlog(self, opened: Store) -> Any:
        if not isinstance(opened, PassageBacklog):
            pytest.skip("the store keeps no passage backlog (PassageBacklog)")
        return opened

    def _pending(self, store: Any, content: str, i: int, seed: int) -> tuple[Any, np.ndarray]:
        """A memory inserted with one vector (its whole text) and marked, in one transaction; its
        whole text's vector, then two passage vectors."""
        item = memory(i, content=content)
        rows = unit_vectors(3, self.dimensions, seed)
        with store.transaction():
            store.insert([item], rows[:1])
            store.mark_passages_pending([item.id])
        return item, rows

    def test_backlog_mark_commits_or_rolls_back_with_the_insert(self, opened: Store) -> None:
        """Troubleshooting: ``mark_passages_pending`` joins the open transaction: the memory and its
        mark commit together, and an exception in the block undoes both (a mark without its memory,
        or a memory whose mark was lost, breaks the promise that its passages come). An id that is
        not stored is ignored."""
        store = self._backlog(opened)
        kept, _ = self._pending(store, "Kept one. It has two sentences.", 1, 11)
        doomed = memory(2, content="Doomed one. It never commits.")
        with pytest.raises(RuntimeError, match="boom"), store.transaction():
            store.insert([doomed], unit_vectors(1, self.dimensions, 12))
            store.mark_passages_pending([doomed.id])
            raise RuntimeError("boom")
        with store.transaction():
            store.mark_passages_pending(["00000000-0000-0000-0000-000000000000"])
        assert store.get([doomed.id]) == {}
        assert store.pending_passages(10) == [(kept.id, kept.content)]
        assert store.count_pending_passages() == 1

    def test_backlog_lists_the_oldest_first_within_the_limit(self, opened: Store) -> None:
        """Troubleshooting: ``pending_passages(limit)`` gives (id, content) of marked memories in the
        order they were marked, at most ``limit`` of them; marking a memory twice lists it once."""
        store = self._backlog(opened)
        items = [self._pending(store, f"Note {i}. It has sentences.", i, 20 + i)[0] for i in range(4)]
        with store.transaction():
            store.mark_passages_pending([items[0].id])
        assert store.pending_passages(3) == [(m.id, m.content) for m in items[:3]]
        assert [i for i, _ in store.pending_passages(10)] == [m.id for m in items]
        assert store.count_pending_passages() == 4

    def test_backlog_complete_adds_the_passages_once(self, opened: Store) -> None:
        """Troubleshooting: ``complete_passages(id, rows)`` adds the rows as further vectors of the
        memory (a KNN with one of them finds the memory; ``vectors`` lists them after its whole text)
        and clears the mark, in one transaction. A second call, as another process's filler would
        make, finds no mark and changes nothing (False)."""
        store = self._backlog(opened)
        item, rows = self._pending(store, "Alpha moved. Beta stayed.", 1, 31)
        assert store.complete_passages(item.id, rows[1:]) is True
        assert store.count_pending_passages() == 0 and store.pending_passages(10) == []
        top = store.knn(rows[2], 1, SEARCH)
        assert top[0][0] == item.id and abs(top[0][1] - 1.0) < 1e-4
        assert store.complete_passages(item.id, unit_vectors(2, self.dimensions, 32)) is False
        if isinstance(store, VectorReading):
            assert np.allclose(store.vectors([item.id])[item.id], rows, atol=1e-6)

    def test_backlog_complete_follows_the_memory_state(self, opened: Store) -> None:
        """Troubleshooting: the passages are added with the memory's state at completion, not at
        insert: a memory tombstoned (or moved, superseded) while pending must stay out of searches
        that exclude it through every one of its vectors. Read the memory's row when completing."""
        store = self._backlog(opened)
        item, rows = self._pending(store, "Gamma left. Delta came.", 1, 41)
        store.update_fields(item.id, {"deleted_at": BASE_TIME})
        assert store.complete_passages(item.id, rows[1:]) is True
        assert [i for i, _ in store.knn(rows[1], 5, SEARCH)] == []
        assert store.knn(rows[1], 1, ALL)[0][0] == item.id

    def test_backlog_purged_or_already_embedded_memory_only_clears_the_mark(self, opened: Store) -> None:
        """Troubleshooting: purging a marked memory removes its mark too (nothing is listed for a
        memory that is gone); a marked memory that already has more than one vector (re-embedded in
        place meanwhile) keeps them: ``complete_passages`` returns False and only clears the mark."""
        store = self._backlog(opened)
        gone, gone_rows = self._pending(store, "Epsilon one. Epsilon two.", 1, 51)
        full = memory(2, content="Zeta one. Zeta two.")
        full_rows = unit_vectors(3, self.dimensions, 52)
        with store.transaction():
            store.insert([full], full_rows, [0, 0, 0])
            store.mark_passages_pending([full.id])
        store.purge([gone.id])
        assert store.pending_passages(10) == [(full.id, full.content)]
        assert store.complete_passages(gone.id, gone_rows[1:]) is False
        assert store.complete_passages(full.id, unit_vectors(2, self.dimensions, 53)) is False
        assert store.count_pending_passages() == 0
        if isinstance(store, VectorReading):
            assert np.allclose(store.vectors([full.id])[full.id], full_rows, atol=1e-6)

    def test_backlog_survives_a_reopen(self, opened: Store) -> None:
        """Troubleshooting: the backlog is durable: a mark committed before the store closes (or its
        process dies) is listed by the next instance on the same data, which completes it."""
        store = self._backlog(opened)
        item, rows = self._pending(store, "Eta stays. Theta waits.", 1, 61)
        store.close()
        again: Any = self.reopen_store(store)
        again.open(self.model_id, self.dimensions)
        try:
            assert again.pending_passages(10) == [(item.id, item.content)]
            assert again.complete_passages(item.id, rows[1:]) is True
            assert again.knn(rows[1], 1, MemoryFilter(namespace=None))[0][0] == item.id
        finally:
            again.close()
