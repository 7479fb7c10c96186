"""Passages: several vectors per memory (``insert``'s ``owners``)."""

from __future__ import annotations

import numpy as np
import pytest

from mcp_memory_core import MemoryFilter, Store

from .base import StoreSuite
from .data import ALL, BASE_TIME, SEARCH, hit_ids, memory, near, row_ids, unit_vectors


class PassageTests(StoreSuite):
    """Best vector wins, k distinct memories, updates and purges reach every vector, ``owners``
    validated; with ``capabilities.read_vectors``, ``vectors`` reads them back."""

    def test_passages_best_vector_wins(self, opened: Store) -> None:
        """Troubleshooting: with ``owners``, row i of ``vectors`` belongs to ``memories[owners[i]]``
        (owners need not be sorted). A memory's similarity is the MAX over its vectors: a memory whose
        second passage matches the query must be found with that passage's similarity. If the store
        keys vectors by memory row, only one vector per memory survives (v1 sqlite-vec schema)."""
        query = unit_vectors(1, self.dimensions, 61)[0]
        far = self._far_from(query, 4, 62)
        close = near(query, 63, noise=0.1)
        middle = near(query, 64, noise=0.6)
        a, b = memory(1, content="a passage holder"), memory(2, content="a single vector")
        # rows: a's far vector, b's middle vector, a's close vector, a's other far vector
        self.add_passages(opened, [a, b], np.stack([far[0], middle, close, far[1]]), [0, 1, 0, 0])
        hits = opened.knn(query, 2, SEARCH)
        assert [i for i, _ in hits] == [a.id, b.id]
        assert abs(hits[0][1] - float(close @ query)) < 1e-4
        assert abs(hits[1][1] - float(middle @ query)) < 1e-4
        assert opened.count(ALL) == 2 and set(opened.get([a.id, b.id])) == {a.id, b.id}
        # any of a's vectors finds a, with similarity 1
        for v in (far[0], far[1], close):
            top = opened.knn(v, 1, SEARCH)
            assert top[0][0] == a.id and abs(top[0][1] - 1.0) < 1e-4

    def test_passages_k_distinct_memories(self, opened: Store) -> None:
        """Troubleshooting: ``knn`` returns DISTINCT memories and still returns ``k`` of them when
        one memory owns many near-identical vectors that crowd the top rows. A store whose index returns
        vector rows must ask for more rows than ``k``, keep each memory's best, and ask again (more
        rows) until it has ``k`` memories or the matching rows run out."""
        query = unit_vectors(1, self.dimensions, 71)[0]
        crowd = memory(0, content="crowding memory")
        others = [memory(1 + i) for i in range(30)]
        crowd_vectors = np.stack([near(query, 700 + j, noise=0.01) for j in range(40)])
        other_vectors = np.stack([near(query, 800 + i, noise=0.3 + 0.02 * i) for i in range(30)])
        vectors = np.concatenate([crowd_vectors, other_vectors])
        owners = [0] * 40 + list(range(1, 31))
        self.add_passages(opened, [crowd, *others], vectors, owners)
        for k in (1, 5, 12, 31, 50):
            hits = opened.knn(query, k, SEARCH)
            ids = [i for i, _ in hits]
            assert len(ids) == len(set(ids)) == min(k, 31), k
            assert ids[0] == crowd.id
            sims = [s for _, s in hits]
            assert sims == sorted(sims, reverse=True)
        expected_sims = other_vectors @ query
        order = np.argsort(-expected_sims, kind="stable")[:4]
        hits = opened.knn(query, 5, SEARCH)
        assert [i for i, _ in hits[1:]] == [others[j].id for j in order]
        np.testing.assert_allclose([s for _, s in hits[1:]], expected_sims[order], atol=1e-4)
        np.testing.assert_allclose(hits[0][1], float((crowd_vectors @ query).max()), atol=1e-4)

    def test_passages_update_fields_moves_every_vector(self, opened: Store) -> None:
        """Troubleshooting: a tombstone, a supersession or a namespace move set by ``update_fields``
        must apply to EVERY vector of the memory. If only the first vector's copy of the flag (e.g. a
        sqlite-vec metadata column) is updated, the memory still turns up through its other passages."""
        query = unit_vectors(1, self.dimensions, 81)[0]
        m, other = memory(1), memory(2)
        vectors = np.stack([near(query, 810 + j, noise=0.05 * (j + 1)) for j in range(5)] + [-query])
        self.add_passages(opened, [m, other], vectors, [0, 0, 0, 0, 0, 1])
        opened.update_fields(m.id, {"deleted_at": BASE_TIME})
        for v in vectors[:5]:
            assert [i for i, _ in opened.knn(v, 5, SEARCH)] == [other.id]
        assert m.id in hit_ids(opened.knn(query, 5, MemoryFilter(include_deleted=True)))
        opened.update_fields(m.id, {"deleted_at": None, "superseded_by": other.id})
        assert hit_ids(opened.knn(vectors[4], 5, MemoryFilter(include_superseded=False))) == {other.id}
        assert opened.knn(vectors[4], 1, SEARCH)[0][0] == m.id
        opened.update_fields(m.id, {"superseded_by": None, "namespace": "moved"})
        for v in vectors[:5]:
            assert [i for i, _ in opened.knn(v, 5, SEARCH)] == [other.id]
            assert [i for i, _ in opened.knn(v, 5, MemoryFilter(namespace="moved"))] == [m.id]

    def test_passages_purge_removes_every_vector(self, opened: Store) -> None:
        """Troubleshooting: ``purge`` removes the row and EVERY vector of the memory (and its keyword
        entries); returns how many memories were removed (unknown and repeated ids count once or not at
        all). Leftover vectors show up as unknown ids in knn or as fewer than k results."""
        query = unit_vectors(1, self.dimensions, 91)[0]
        gone, kept = memory(1, content="doomed heron"), memory(2, content="kept heron")
        vectors = np.stack([near(query, 910 + j, noise=0.05) for j in range(6)] + [-query])
        self.add_passages(opened, [gone, kept], vectors, [0, 0, 0, 0, 0, 0, 1])
        missing = "99999999-9999-9999-9999-999999999999"
        assert opened.purge([gone.id, missing, gone.id]) == 1
        assert opened.purge([gone.id]) == 0
        assert opened.purge([]) == 0
        assert opened.get([gone.id]) == {}
        for v in vectors[:6]:
            assert [i for i, _ in opened.knn(v, 10, ALL)] == [kept.id]
        assert opened.count(ALL) == 1
        assert row_ids(opened.list(ALL, 10)) == {kept.id}
        if opened.capabilities.keyword_search:
            assert hit_ids(opened.keyword_search("heron", 10, ALL)) == {kept.id}
            assert opened.keyword_search("doomed", 10, ALL) == []

    def test_vectors_read_back_in_insert_order(self, opened: Store) -> None:
        """Troubleshooting (stores declaring ``capabilities.read_vectors``): ``vectors(ids)`` returns,
        for each known id, an (n, dimensions) float32 array of exactly the rows ``insert`` was given
        for it, in the order given (interleaved owners included), bit for bit; unknown and repeated
        ids are harmless; a purged memory has none. An export with vectors relies on this: an import
        reuses them as the memory's whole text and passages, in that order."""
        if not opened.capabilities.read_vectors:
            pytest.skip("the store does not read its vectors back (capabilities.read_vectors)")
        reader = getattr(opened, "vectors", None)
        assert callable(reader), "capabilities.read_vectors is true but the store has no vectors() method"
        a, b, c = memory(1, content="alpha"), memory(2, content="beta"), memory(3, content="gamma")
        vectors = unit_vectors(6, self.dimensions, 131)
        owners = [1, 0, 1, 2, 0, 1]
        self.add_passages(opened, [a, b, c], vectors, owners)
        missing = "99999999-9999-9999-9999-999999999999"
        got = reader([c.id, a.id, missing, a.id, b.id])
        assert set(got) == {a.id, b.id, c.id}
        for index, item in enumerate((a, b, c)):
            rows = [row for row, owner in enumerate(owners) if owner == index]
            array = np.asarray(got[item.id])
            assert array.dtype == np.float32
            assert array.shape == (len(rows), self.dimensions)
            assert np.array_equal(array, vectors[rows])
        assert reader([]) == {}
        opened.purge([b.id])
        assert set(reader([a.id, b.id])) == {a.id}

    def test_insert_owners_validated(self, opened: Store) -> None:
        """Troubleshooting: ``insert`` must refuse, with ValueError and without storing anything,
        ``owners`` of the wrong length, owners that do not index ``memories``, a memory without any
        vector, and vectors of the wrong dimension."""
        a, b = memory(1), memory(2)
        v = unit_vectors(3, self.dimensions, 95)
        bad_calls: list[tuple[np.ndarray, list[int] | None]] = [
            (v, [0, 1]),  # one owner short
            (v, [0, 1, 2]),  # 2 is not a memory
            (v, [0, 0, 0]),  # b has no vector
            (v, [0, 1, -1]),  # negative owner
            (v, None),  # three vectors for two memories
            (unit_vectors(2, self.dimensions + 1, 96), [0, 1]),  # wrong dimension
        ]
        for vectors, owners in bad_calls:
            with pytest.raises(ValueError):
                opened.insert([a, b], vectors, owners)
        assert opened.count(ALL) == 0 and opened.get([a.id, b.id]) == {}
        opened.insert([a, b], v, [1, 0, 1])
        assert opened.knn(v[1], 1, SEARCH)[0][0] == a.id
        assert opened.knn(v[2], 1, SEARCH)[0][0] == b.id
