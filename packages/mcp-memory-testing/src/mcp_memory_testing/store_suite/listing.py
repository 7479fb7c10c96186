"""Listing and counting: ``list``, ``count``, ``iter_all``, ``namespaces``."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from mcp_memory_core import Memory, MemoryFilter, Store
from mcp_memory_core.list_order import ListOrder, SortKey, sort_key

from .base import StoreSuite
from .data import ALL, BASE_TIME, SEARCH, memory, row_ids


class ListingTests(StoreSuite):
    """``list`` (newest first, keyset pages), ``count``, ``iter_all`` and ``namespaces``."""

    def test_list_order(self, opened: Store) -> None:
        """Troubleshooting: ``list`` orders newest first by (created_at DESC, id DESC). If equal
        timestamps come back in insertion order, add ``id DESC`` as the tie-breaker; if timestamps sort
        wrongly, they are stored as text of varying width or in local time."""
        same = BASE_TIME + timedelta(hours=1)
        items = [memory(i) for i in range(5)] + [
            memory(10 + i, created_at=same, updated_at=same) for i in range(4)
        ]
        items.append(memory(11, created_at=BASE_TIME - timedelta(days=400)))
        self.add(opened, items)
        got = opened.list(SEARCH, 100)
        expected = sorted(items, key=lambda m: (m.created_at, m.id), reverse=True)
        assert [m.id for m in got] == [m.id for m in expected]
        assert got == expected
        assert [m.id for m in opened.list(SEARCH, 3)] == [m.id for m in expected[:3]]

    def test_list_keyset_paging(self, opened: Store) -> None:
        """Troubleshooting: ``after=(created_at, id)`` of the last row of a page must start the next page
        right after it: rows with ``(created_at, id) < after`` only. Pages must neither repeat nor skip
        rows, also when many rows share one created_at (compare the pair, not created_at alone)."""
        items = []
        for i in range(27):
            stamp = BASE_TIME + timedelta(seconds=i // 4)  # groups of 4 share a timestamp
            items.append(memory(i, created_at=stamp, updated_at=stamp))
        self.add(opened, items)
        seen: list[str] = []
        after: tuple[datetime, str] | None = None
        for _ in range(100):
            page = opened.list(SEARCH, 5, after)
            if not page:
                break
            assert len(page) <= 5
            seen.extend(m.id for m in page)
            after = (page[-1].created_at, page[-1].id)
        expected = sorted(items, key=lambda m: (m.created_at, m.id), reverse=True)
        assert seen == [m.id for m in expected]

    def test_list_orders_page_without_repeats_or_gaps(self, opened: Store) -> None:
        """Troubleshooting: ``order="oldest"`` is (created_at ASC, id ASC) with ``after`` meaning
        ``(created_at, id) > after``; ``order="importance"`` is (importance DESC, created_at DESC,
        id DESC) with ``after=(importance, created_at, id)``. Many rows share an importance and a
        timestamp here: compare the whole tuple, and store importance exactly (a double)."""
        items = []
        for i in range(23):
            stamp = BASE_TIME + timedelta(seconds=i // 4)  # groups of 4 share a timestamp
            importance = (0.3, 0.9, 0.55)[i % 3]  # and groups share an importance
            items.append(memory(i, created_at=stamp, updated_at=stamp, importance=importance))
        self.add(opened, items)
        orders: dict[ListOrder, tuple[Callable[[Memory], Any], bool]] = {
            "newest": (lambda m: (m.created_at, m.id), True),
            "oldest": (lambda m: (m.created_at, m.id), False),
            "importance": (lambda m: (m.importance, m.created_at, m.id), True),
        }
        for order, (key, down) in orders.items():
            seen: list[str] = []
            after: SortKey | None = None
            for _ in range(100):
                page = opened.list(SEARCH, 4, after, order)
                if not page:
                    break
                seen.extend(m.id for m in page)
                after = sort_key(page[-1], order)
            expected = sorted(items, key=key, reverse=down)
            assert seen == [m.id for m in expected], order

    def test_list_filters(self, opened: Store) -> None:
        """Troubleshooting: ``list`` applies the filter like ``knn``: the engine lists with
        ``include_superseded=False`` (current heads only) and never shows tombstones."""
        live = memory(1)
        dead = memory(2, deleted_at=BASE_TIME)
        old = memory(3, superseded_by=live.id)
        far = memory(4, namespace="elsewhere")
        self.add(opened, [live, dead, old, far])
        ids = row_ids
        assert ids(opened.list(MemoryFilter(include_superseded=False), 10)) == {live.id}
        assert ids(opened.list(SEARCH, 10)) == {live.id, old.id}
        assert ids(opened.list(MemoryFilter(namespace=None, include_deleted=True), 10)) == {
            live.id,
            dead.id,
            old.id,
            far.id,
        }
        assert ids(opened.list(MemoryFilter(namespace="elsewhere"), 10)) == {far.id}
        assert ids(opened.list(MemoryFilter(ids=frozenset({dead.id, old.id})), 10)) == {old.id}

    def test_count(self, opened: Store) -> None:
        """Troubleshooting: ``count(where)`` must agree with ``list(where, ∞)`` for every filter."""
        items = [
            memory(1),
            memory(2),
            memory(3, deleted_at=BASE_TIME),
            memory(4, superseded_by="11111111-2222-3333-4444-555555555555"),
            memory(5, namespace="elsewhere"),
            memory(6, namespace="elsewhere", deleted_at=BASE_TIME),
        ]
        self.add(opened, items)
        filters = [
            SEARCH,
            ALL,
            MemoryFilter(include_superseded=False),
            MemoryFilter(namespace=None),
            MemoryFilter(namespace="elsewhere", include_deleted=True),
            MemoryFilter(namespace="nowhere"),
            MemoryFilter(ids=frozenset({items[0].id, items[2].id, items[4].id})),
            MemoryFilter(namespace=None, ids=frozenset({items[0].id, items[2].id, items[4].id})),
        ]
        expected = [3, 6, 2, 4, 2, 0, 1, 2]
        assert [opened.count(f) for f in filters] == expected
        assert [len(opened.list(f, 1000)) for f in filters] == expected

    def test_iter_all(self, opened: Store) -> None:
        """Troubleshooting: ``iter_all`` yields EVERY memory exactly once — tombstones, superseded
        versions and all namespaces included — even past any internal batch size."""
        items = [
            memory(i, namespace="a" if i % 3 else "b", deleted_at=BASE_TIME if i % 7 == 0 else None)
            for i in range(1234)
        ]
        self.add(opened, items)
        got = list(opened.iter_all())
        assert len(got) == len(items)
        assert {m.id: m for m in got} == {m.id: m for m in items}

    def test_namespaces_count_current_memories(self, opened: Store) -> None:
        """Troubleshooting: ``namespaces()`` maps every namespace that holds rows to its number of
        CURRENT memories (not superseded, not deleted); a namespace of only tombstones maps to 0."""
        assert opened.namespaces() == {}
        head = memory(3, namespace="work")
        items = [
            memory(1, namespace="work", superseded_by=head.id),
            head,
            memory(2, namespace="home"),
            memory(4, namespace="gone", deleted_at=BASE_TIME),
        ]
        self.add(opened, items)
        assert opened.namespaces() == {"work": 1, "home": 1, "gone": 0}
