"""Vector search: ``knn``."""

from __future__ import annotations

import numpy as np

from mcp_memory_core import MemoryFilter, Store

from .base import StoreSuite
from .data import BASE_TIME, SEARCH, memory, near, unit_vectors


class KnnTests(StoreSuite):
    """``knn``: cosine similarity, most similar first, every filter applied before the top-k."""

    def test_knn_order_and_similarity(self, opened: Store) -> None:
        """Troubleshooting: ``knn`` returns (id, COSINE SIMILARITY) pairs, most similar first. If values
        are off, you probably return a distance (convert: cosine distance d → 1 - d; L2 distance on unit
        vectors d → 1 - d²/2) or sort ascending."""
        items = [memory(i) for i in range(60)]
        vectors = self.add(opened, items, seed=11)
        query = unit_vectors(1, self.dimensions, 12)[0]
        hits = opened.knn(query, 10, SEARCH)
        sims = vectors @ query
        expected = np.argsort(-sims, kind="stable")[:10]
        assert [i for i, _ in hits] == [items[j].id for j in expected]
        np.testing.assert_allclose([s for _, s in hits], sims[expected], atol=1e-4)
        assert all(isinstance(i, str) and isinstance(s, float) for i, s in hits)
        exact = opened.knn(vectors[5], 1, SEARCH)
        assert exact[0][0] == items[5].id and abs(exact[0][1] - 1.0) < 1e-4

    def test_knn_filters_before_top_k_tombstones(self, opened: Store) -> None:
        """Troubleshooting: filters must apply BEFORE the top-k. With 50 tombstoned memories right next
        to the query and 3 live ones far away, ``k=3`` must return the 3 live ones. Getting fewer means
        the store takes the top-k first and filters afterwards (sqlite-vec: a JOIN/WHERE on another
        table filters after the KNN; put the flag in a vec0 metadata column or use ``rowid IN (…)``)."""
        query = unit_vectors(1, self.dimensions, 21)[0]
        dead = [memory(i, deleted_at=BASE_TIME) for i in range(50)]
        live = [memory(100 + i) for i in range(3)]
        self.add(opened, dead, vectors=np.stack([near(query, 100 + i) for i in range(50)]))
        far = unit_vectors(3, self.dimensions, 22)
        far = np.stack([v if float(v @ query) < 0.5 else -v for v in far])
        self.add(opened, live, vectors=far)
        hits = opened.knn(query, 3, SEARCH)
        assert sorted(i for i, _ in hits) == sorted(m.id for m in live)
        with_dead = opened.knn(query, 3, MemoryFilter(include_deleted=True))
        assert {i for i, _ in with_dead} <= {m.id for m in dead}

    def test_knn_include_superseded(self, opened: Store) -> None:
        """Troubleshooting: ``include_superseded=True`` (the search default) keeps superseded versions
        matchable; ``False`` excludes every memory whose ``superseded_by`` is set, before the top-k."""
        query = unit_vectors(1, self.dimensions, 31)[0]
        old = [memory(i, superseded_by="11111111-2222-3333-4444-555555555555") for i in range(20)]
        heads = [memory(50 + i) for i in range(2)]
        self.add(opened, old, vectors=np.stack([near(query, 200 + i) for i in range(20)]))
        self.add(opened, heads, vectors=np.stack([near(-query, 300 + i) for i in range(2)]))
        only_heads = opened.knn(query, 2, MemoryFilter(include_superseded=False))
        assert sorted(i for i, _ in only_heads) == sorted(m.id for m in heads)
        everything = opened.knn(query, 2, MemoryFilter(include_superseded=True))
        assert {i for i, _ in everything} <= {m.id for m in old}

    def test_knn_namespace_isolation(self, opened: Store) -> None:
        """Troubleshooting: ``namespace="x"`` returns only memories of namespace x (before the top-k);
        ``namespace=None`` means all namespaces; an unknown namespace returns nothing."""
        query = unit_vectors(1, self.dimensions, 41)[0]
        a = [memory(i, namespace="alpha") for i in range(10)]
        b = [memory(20 + i, namespace="beta") for i in range(2)]
        self.add(opened, a, vectors=np.stack([near(query, 400 + i) for i in range(10)]))
        self.add(opened, b, vectors=np.stack([near(-query, 500 + i) for i in range(2)]))
        in_b = opened.knn(query, 2, MemoryFilter(namespace="beta"))
        assert sorted(i for i, _ in in_b) == sorted(m.id for m in b)
        in_a = opened.knn(query, 20, MemoryFilter(namespace="alpha"))
        assert {i for i, _ in in_a} == {m.id for m in a}
        assert len(opened.knn(query, 50, MemoryFilter(namespace=None))) == 12
        assert opened.knn(query, 5, MemoryFilter(namespace="no-such-namespace")) == []
        assert opened.knn(query, 5, SEARCH) == []  # nothing in "default"

    def test_knn_ids_filter(self, opened: Store) -> None:
        """Troubleshooting: ``ids`` restricts the search to those memories (before the top-k), combined
        with the other fields of the filter; an empty set matches nothing."""
        query = unit_vectors(1, self.dimensions, 51)[0]
        items = [memory(i) for i in range(30)]
        vectors = np.stack([near(query, 600 + i, noise=0.02 * (i + 1)) for i in range(30)])
        self.add(opened, items, vectors=vectors)
        chosen = {items[25].id, items[27].id, items[29].id}
        hits = opened.knn(query, 2, MemoryFilter(ids=frozenset(chosen)))
        sims = {items[j].id: float(vectors[j] @ query) for j in (25, 27, 29)}
        best_two = sorted(sims, key=lambda i: -sims[i])[:2]
        assert [i for i, _ in hits] == best_two
        assert opened.knn(query, 5, MemoryFilter(ids=frozenset())) == []
        opened.update_fields(items[25].id, {"deleted_at": BASE_TIME})
        hits = opened.knn(query, 5, MemoryFilter(ids=frozenset(chosen)))
        assert {i for i, _ in hits} == chosen - {items[25].id}

    def test_knn_k_larger_than_rows(self, opened: Store) -> None:
        """Troubleshooting: asking for more neighbours than exist returns all matching memories (no
        error, no padding); ``k`` up to 4096 (the engine's maximum) must be accepted."""
        items = [memory(i) for i in range(5)]
        vectors = self.add(opened, items)
        assert len(opened.knn(vectors[0], 100, SEARCH)) == 5
        assert len(opened.knn(vectors[0], 4096, SEARCH)) == 5
        hits = opened.knn(vectors[0], 4096, SEARCH)
        assert len({i for i, _ in hits}) == 5
        assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
