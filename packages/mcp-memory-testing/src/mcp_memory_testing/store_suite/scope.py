"""Who may see what: the engine's Scope, rendered by the store."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from mcp_memory_core import Memory, MemoryFilter, Store
from mcp_memory_core.models import PrivacyScope, Visibility

from .base import StoreSuite
from .data import BASE_TIME, hit_ids, memory, unit_vectors


class ScopeTests(StoreSuite):
    """``visible_to``, ``owner`` and ``namespaces`` select, in every read method, what
    ``MemoryFilter.matches`` selects, and follow updates."""

    def _scope_corpus(self, store: Store) -> tuple[list[Memory], np.ndarray]:
        """48 memories of four owners, every privacy scope, three namespaces, some superseded or
        deleted, several vectors each."""
        owners = ["alice", "bob", "carol", "local"]
        scopes = list(PrivacyScope)
        namespaces = ["user", "atlas", "zephyr"]
        items = [
            memory(
                i,
                content=f"mango fact {i}",
                tags=(f"from {owners[i % 4]}", f"kind {i % 5}"),  # tag counts follow visibility too
                owner=owners[i % 4],
                privacy_scope=scopes[(i // 4) % 3],
                namespace=namespaces[(i // 12) % 3],
                deleted_at=BASE_TIME if i % 11 == 3 else None,
                superseded_by="11111111-2222-3333-4444-555555555555" if i % 13 == 5 else None,
            )
            for i in range(48)
        ]
        rows = [i for i in range(48) for _ in range(1 + i % 2)]
        vectors = unit_vectors(len(rows), self.dimensions, 91)
        self.add_passages(store, items, vectors, rows)
        return items, vectors

    def test_scope_filters_everywhere(self, opened: Store) -> None:
        """Troubleshooting: ``visible_to`` (own memories, public ones, team ones of teammates),
        ``owner`` and ``namespaces`` (any of) must give the same set in ``knn``, ``keyword_search``,
        ``list``, ``count`` and ``namespaces(where)`` as ``MemoryFilter.matches``, applied BEFORE the
        top-k. This is what keeps one user's private memories from another: a store that filters
        after its top-k, or ignores a field, leaks. Usual culprits: visibility applied in Python
        after KNN, ``privacy_scope`` compared with a different spelling, ``namespaces`` treated as
        one namespace, an empty teammates set rendered as "no condition"."""
        items, _ = self._scope_corpus(opened)
        cases: dict[str, dict[str, Any]] = {
            "alone": {"visible_to": Visibility("alice")},
            "with teammates": {"visible_to": Visibility("alice", frozenset({"bob"}))},
            "teammates, one namespace": {
                "visible_to": Visibility("carol", frozenset({"alice", "bob"})),
                "namespaces": frozenset({"atlas"}),
            },
            "stranger": {"visible_to": Visibility("mallory")},
            "owner": {"owner": "bob"},
            "owner and namespaces": {"owner": "local", "namespaces": frozenset({"user", "zephyr"})},
            "namespaces": {"namespaces": frozenset({"user", "atlas"})},
            "unknown namespaces": {"namespaces": frozenset({"nowhere"})},
            "no namespaces": {"namespaces": frozenset()},
        }
        views: dict[str, dict[str, Any]] = {
            "search": {"namespace": None},
            "heads": {"namespace": None, "include_superseded": False},
            "everything": {"namespace": None, "include_deleted": True},
        }
        for label, values in cases.items():
            for view, flags in views.items():
                where = MemoryFilter(**values, **flags)
                self._check_scope(opened, items, where, f"{label} / {view}")

    def _check_scope(self, store: Store, items: Sequence[Memory], where: MemoryFilter, label: str) -> None:
        expected = self._check_filter(store, items, where, label, word="mango")
        top = store.knn(unit_vectors(1, self.dimensions, 92)[0], 3, where)
        assert len(top) == min(3, len(expected)) and hit_ids(top) <= expected, f"{label}: top-k"
        counted = store.namespaces(where)
        assert set(counted) == {m.namespace for m in items if where.matches(m)}, label
        for name, current in counted.items():
            assert current == sum(
                1 for m in items if where.matches(m) and m.namespace == name and m.is_current
            ), f"{label}: namespace {name}"

    def test_scope_visibility_follows_updates(self, opened: Store) -> None:
        """Troubleshooting: changing ``privacy_scope`` (or ``owner``) with ``update_fields`` must move
        the memory in or out of ``visible_to`` at once, in every method (a vector index or cache that
        keeps the old value leaks a memory made private)."""
        shared = memory(1, content="papaya shared", owner="alice", privacy_scope=PrivacyScope.PUBLIC)
        other = memory(2, content="papaya private", owner="alice")
        vectors = unit_vectors(2, self.dimensions, 93)
        self.add(opened, [shared, other], vectors)
        bob = MemoryFilter(namespace=None, visible_to=Visibility("bob"))
        assert hit_ids(opened.knn(vectors[0], 5, bob)) == {shared.id}
        opened.update_fields(shared.id, {"privacy_scope": PrivacyScope.PRIVATE})
        assert opened.knn(vectors[0], 5, bob) == []
        assert opened.count(bob) == 0 and opened.list(bob, 5) == []
        if opened.capabilities.keyword_search:
            assert opened.keyword_search("papaya", 5, bob) == []
        opened.update_fields(other.id, {"privacy_scope": PrivacyScope.TEAM})
        team = MemoryFilter(namespace=None, visible_to=Visibility("bob", frozenset({"alice"})))
        assert hit_ids(opened.knn(vectors[1], 5, team)) == {other.id}
